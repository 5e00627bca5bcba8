"""The images one shell session has shown, and the marks taken in it: what `diff` compares when no file is given.

Rules:
- Every image the session shows is remembered by its offset: the first one always, and the newest SEEN_LIMIT
  of those a live source swaps in before each command (images share their untouched areas, so they cost little).
- `mark [NAME]` keeps the current image under NAME (default: the next free number) for the whole session;
  `@NAME` names it in diff. A mark taken again under the same name replaces it.
- The baseline of a bare `diff` is the newest mark, else the session's first image ('start').
"""
from __future__ import annotations

import re
from collections import OrderedDict

SEEN_LIMIT = 64
MARK_NAME = re.compile(r"[A-Za-z0-9_.-]+")


class SessionImages:
    """The first image, the newest images seen (by offset) and the named marks of one session."""

    def __init__(self):
        self.first = None
        self.seen: OrderedDict = OrderedDict()
        self.marks: dict = {}

    def saw(self, image) -> None:
        """Remember an image the session shows."""
        if self.first is None:
            self.first = image
        offset = image.provenance.offset
        if self.seen.get(offset) is image:
            return
        self.seen[offset] = image
        self.seen.move_to_end(offset)
        while len(self.seen) > SEEN_LIMIT:
            self.seen.popitem(last=False)

    def at(self, offset: int):
        """Return the image seen at exactly `offset`, or None."""
        if self.first is not None and self.first.provenance.offset == offset:
            return self.first
        return self.seen.get(offset)

    def offsets(self) -> list[int]:
        """Return the offsets of every image still known, ascending."""
        known = set(self.seen) | ({self.first.provenance.offset} if self.first is not None else set())
        return sorted(known)

    def mark(self, image, name: str | None = None) -> str:
        """Keep `image` under `name` (checked; default the next free number) and return the name."""
        if name is None:
            number = len(self.marks) + 1
            while str(number) in self.marks:
                number += 1
            name = str(number)
        if not MARK_NAME.fullmatch(name):
            raise ValueError(f"bad mark name '{name}': use letters, digits, '.', '_' and '-'")
        self.marks.pop(name, None)
        self.marks[name] = image
        return name

    def marked(self, name: str):
        """Return the image marked `name`, or None."""
        return self.marks.get(name)

    def baseline(self) -> tuple[str, object]:
        """Return (label, image) of what a bare `diff` compares with: the newest mark, else the first image."""
        if self.marks:
            name = next(reversed(self.marks))
            return "@" + name, self.marks[name]
        return "start", self.first
