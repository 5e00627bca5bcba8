"""The shell's state: the image being browsed, the working directory and the command history.

Rules:
- The state never loads anything itself; `open_image(spec)` (given by the caller) loads another
  image for `diff`, so files, directories and later a live quorum plug in the same way.
- The node tree is rebuilt only when the image changes.
- Every image the state holds is remembered in `images` (marks.SessionImages) for `diff` and `mark`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kraftsman.controller.image.image import MetadataImage
from kraftsman.controller.image.nodes import root_node

from .marks import SessionImages


@dataclass
class ShellState:
    """What commands read and change."""

    image: MetadataImage
    working_directory: str = "/"
    previous_directory: str = "/"
    history: list = field(default_factory=list)
    local: dict | None = None
    open_image: Callable[[str], MetadataImage] | None = None
    screen_width: int | None = None
    interactive: bool = False
    output: str = "text"
    exit_requested: bool = False
    images: SessionImages = field(default_factory=SessionImages, repr=False)
    release: str = "3.9"        # the Kafka release whose shell texts are printed (KRAFTSMAN_KAFKA_VERSION)
    _root: object = field(default=None, repr=False)
    _root_image: object = field(default=None, repr=False)

    def __post_init__(self):
        """Remember the image the session starts with."""
        self.images.saw(self.image)

    @property
    def root(self):
        """Return the root node of the current image's tree."""
        if self._root is None or self._root_image is not self.image:
            self._root, self._root_image = root_node(self.image, self.local, self.release), self.image
        return self._root

    def set_image(self, image: MetadataImage) -> None:
        """Switch to another image (live updates, time travel)."""
        self.image = image
        self.images.saw(image)
