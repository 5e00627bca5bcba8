"""Value layouts: where each field of one encoded message sits, so that the many messages sharing it are read with
one struct format and told from the others with one regular expression.

A layout is traced from a real value (the message body, after any frame header). Its structural bytes (array
counts, string lengths, null markers, the tag section's counts, tags and sizes) become literals; the bytes of the
fields become slots of fixed size. The records a controller writes for one request (a topic's partitions) share
their layout, so a run of them is checked at once (Layout.pattern, repeated) and read at once (Layout.codes).

Rules:
- Covers flexible versions whose fields are fixed-width numbers, bools, uuids, strings, bytes, and arrays of
  fixed-width numbers or uuids, tagged ones included; a struct, an array of structs or strings, or a field with
  its own flexible versions gives no layout (None) and the caller takes its per-record path.
- An unknown tagged field is a skipped slot: its bytes may differ between values of one layout, never shown.
- A value matches a layout when its size is the layout's and its structural bytes are the literals
  (Layouts.of checks the known layouts of that message, version and size first, then traces).
- Nothing here renders text: storage.protocol.render and the image layer compile their writers from the slots.
"""
from __future__ import annotations

import functools
import re
from typing import NamedTuple

from .primitives import read_uvarint
from .schema import FieldSpec, load

FIXED = {"int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4), "int64": ("q", 8), "uint16": ("H", 2),
         "uint32": ("I", 4), "float64": ("d", 8), "bool": ("?", 1)}
BLOBS = ("string", "bytes", "records")
LAYOUTS_PER_SIZE = 8
_MAX_SIZES = 4096


class Slot(NamedTuple):
    """The bytes of one field in a layout (or of an unknown tagged field, `field` None)."""

    field: FieldSpec | None
    kind: str       # "value" (fixed width or uuid), "blob" (string/bytes content), "array", "null", "skip"
    type: str       # the field's type; an array's element type
    count: int      # an array's elements, a blob's bytes
    size: int       # bytes covered
    tagged: bool

    @property
    def code(self) -> str:
        """Return the slot's struct code ('' when it holds no bytes to read)."""
        if self.kind == "value":
            return "16s" if self.type == "uuid" else FIXED[self.type][0]
        if self.kind in ("blob", "array") and self.size:
            return f"{self.size}s"
        return f"{self.size}x" if self.kind == "skip" and self.size else ""


class Layout:
    """The layout of values of message `name` at `version`: `parts` in byte order (bytes literals or Slots)."""

    __slots__ = ("name", "version", "parts", "size", "key", "pattern", "codes", "regex", "_hash", "__weakref__")

    def __init__(self, name: str, version: int, parts: tuple):
        self.name, self.version, self.parts = name, version, parts
        self.size = sum(len(p) if type(p) is bytes else p.size for p in parts)
        self.key = (name, version, tuple(p if type(p) is bytes else (p.field and p.field.name, p.kind, p.count, p.size)
                                         for p in parts))
        self.pattern = b"".join(re.escape(p) if type(p) is bytes else b".{%d}" % p.size if p.size else b""
                                for p in parts)
        self.codes = "".join(f"{len(p)}x" if type(p) is bytes else p.code for p in parts)
        self.regex = re.compile(b"(?s)" + self.pattern)
        self._hash = hash(self.key)  # layouts key the writers' caches: hashed once, not per lookup

    @property
    def slots(self) -> list[Slot]:
        """Return the slots in byte order."""
        return [p for p in self.parts if type(p) is not bytes]

    @property
    def items(self) -> list[Slot]:
        """Return the slots a struct unpack of `codes` gives one item each for, in order."""
        return [p for p in self.slots if p.kind in ("value", "blob", "array") and p.code]

    def __eq__(self, other) -> bool:
        return isinstance(other, Layout) and self.key == other.key

    def __hash__(self) -> int:
        return self._hash


class _Unsupported(Exception):
    """The message's spec has a shape layouts do not cover."""


class _Tracer:
    """Walk one value along its spec, collecting literals and slots."""

    def __init__(self, buf, pos: int, end: int):
        self.buf, self.pos, self.end, self.parts = buf, pos, end, []

    def literal_varint(self) -> int:
        """Read an unsigned varint as a structural literal; return its value."""
        value, stop = read_uvarint(self.buf, self.pos)
        self.parts.append(bytes(self.buf[self.pos:stop]))
        self.pos = stop
        return value

    def slot(self, f, kind: str, t: str, count: int, size: int, tagged: bool) -> None:
        self.parts.append(Slot(f, kind, t, count, size, tagged))
        self.pos += size
        if self.pos > self.end:
            raise IndexError("value runs past its end")

    def field(self, f: FieldSpec, version: int, tagged: bool) -> None:
        """Trace field `f` at the current position."""
        if f.is_struct or f.flexible_versions is not None:
            raise _Unsupported(f.name)
        t = f.element_type
        if f.is_array:
            if t not in FIXED and t != "uuid":
                raise _Unsupported(f.name)
            self.counted(f, version, "array", t, 16 if t == "uuid" else FIXED[t][1], tagged)
        elif t in BLOBS:
            self.counted(f, version, "blob", t, 1, tagged)
        else:
            self.slot(f, "value", t, 1, 16 if t == "uuid" else FIXED[t][1], tagged)

    def counted(self, f: FieldSpec, version: int, kind: str, t: str, width: int, tagged: bool) -> None:
        n = self.literal_varint() - 1
        if n < 0:
            if version not in f.nullable_versions:
                raise IndexError(f"{f.name} is null")
            self.slot(f, "null", t, 0, 0, tagged)
        else:
            self.slot(f, kind, t, n, n * width, tagged)

    def tags(self, tagged: dict, version: int) -> None:
        """Trace the tag section: known tags as fields, unknown ones as skipped bytes."""
        previous = -1
        for _ in range(self.literal_varint()):
            tag = self.literal_varint()
            size = self.literal_varint()
            if tag <= previous:
                raise IndexError("tags out of order")
            previous, start = tag, self.pos
            f = tagged.get(tag)
            if f is None:
                self.slot(None, "skip", "bytes", size, size, True)
            else:
                self.field(f, version, True)
                if self.pos != start + size:
                    raise IndexError(f"tagged field {f.name} is not {size} bytes")


def trace(name: str, version: int, buf, pos: int, end: int) -> Layout | None:
    """Return the layout of the value of `name` at `version` in buf[pos:end], or None when the message is not
    covered or the bytes are not one whole value of it."""
    spec = _spec_fields(name, version)
    if spec is None:
        return None
    fields, tagged = spec
    tracer = _Tracer(buf, pos, end)
    try:
        for f in fields:
            tracer.field(f, version, False)
        tracer.tags(tagged, version)
    except (IndexError, ValueError, _Unsupported):
        return None
    if tracer.pos != end:
        return None
    return Layout(name, version, tuple(tracer.parts))


@functools.lru_cache(maxsize=None)
def _spec_fields(name: str, version: int):
    """Return (untagged fields, {tag: tagged field}) at `version`, or None when layouts cannot cover it."""
    spec = load(name)
    if version not in spec.flexible_versions or version not in spec.valid_versions:
        return None
    present = [f for f in spec.fields if version in f.versions]
    if any(f.is_struct or f.flexible_versions is not None for f in present):
        return None
    if any(f.is_array and f.element_type not in FIXED and f.element_type != "uuid" for f in present):
        return None
    return ([f for f in present if version not in f.tagged_versions],
            {f.tag: f for f in present if version in f.tagged_versions})


class Layouts:
    """The layouts seen so far, by message, version and value size; a value's layout is found by matching the
    known ones of its size first, and traced when none matches."""

    def __init__(self):
        self.known: dict = {}

    def of(self, name: str, version: int, buf, pos: int, end: int) -> Layout | None:
        """Return the layout of the value buf[pos:end] of `name` at `version`, or None."""
        key = (name, version, end - pos)
        candidates = self.known.get(key)
        if candidates is None:
            if _spec_fields(name, version) is None:
                return None
            if len(self.known) >= _MAX_SIZES:
                self.known.clear()
            candidates = self.known[key] = []
        for layout in candidates:
            if layout.regex.fullmatch(buf, pos, end):
                return layout
        layout = trace(name, version, buf, pos, end)
        if layout is not None:
            if len(candidates) >= LAYOUTS_PER_SIZE:
                candidates.pop(0)
            candidates.append(layout)
        return layout
