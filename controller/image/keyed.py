"""A keyed area of the image: key -> latest record message (ACLs, SCRAM users, delegation tokens).

Rules:
- The image holds a plain dict that is never changed after apply(); the delta copies it on first write.
- Values are (message, version) pairs so that write() gives back the records as read.
"""
from __future__ import annotations

from kraftsman.storage.records.metadata import ApiMessageAndVersion


class KeyedImage:
    """Hold key -> (message, version) for one image area."""

    __slots__ = ("entries",)

    def __init__(self, entries: dict | None = None):
        self.entries = entries if entries is not None else {}

    def is_empty(self) -> bool:
        """Tell whether the area is empty."""
        return not self.entries

    def write(self):
        """Yield the records of every entry, keys sorted."""
        for key in sorted(self.entries, key=repr):
            message, version = self.entries[key]
            yield ApiMessageAndVersion(message, version)


class KeyedDelta:
    """Collect puts and removals on top of a KeyedImage."""

    image_class = KeyedImage

    def __init__(self, image: KeyedImage):
        self.image = image
        self.entries = None

    def _entries(self) -> dict:
        if self.entries is None:
            self.entries = dict(self.image.entries)
        return self.entries

    def put(self, key, message, version: int) -> None:
        """Set the record for `key`."""
        self._entries()[key] = (message, version)

    def remove(self, key) -> bool:
        """Remove `key`; tell whether it was there."""
        return self._entries().pop(key, None) is not None

    def apply(self):
        """Return the resulting image."""
        return self.image if self.entries is None else type(self.image)(self.entries)
