"""The message Kafka's generated `read(Readable, version)` throws on malformed bytes (for dump-log's decoders).

kraftsman's codec decodes fast but reports errors in its own words; when a coordinator record fails to
decode, this module walks the same spec the way Kafka's generated Java reader and ByteBufferAccessor do
and returns the exception message Java would have produced:
- a fixed-size read past the end: BufferUnderflowException, whose message is `null`;
- a string or bytes longer than what is left, or an unknown tagged field:
  `Error reading byte array of N byte(s): only M byte(s) available`;
- an array count larger than the bytes left: `Tried to read N elements, but only M bytes remain`;
- a null where the field is not nullable: `non-nullable field <camelCaseName> was serialized as null`;
- a compact string longer than 32767: `string field <camelCaseName> had invalid length N`.

Rules:
- Only called on the error path: plain interpretation of the spec, no code generation.
- Versions outside the spec are read as the nearest valid version (generated readers have no
  top-level version check); the walker is given the clamped version.
"""
from __future__ import annotations

import struct

from kraftsman.storage.protocol.schema import json_name, load

_FIXED = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint16": 2, "uint32": 4, "float64": 8, "bool": 1,
          "uuid": 16}


class JavaReadError(Exception):
    """Carries the message of the Java exception (`null` for an underflow)."""


class _Reader:
    def __init__(self, buf: bytes, pos: int):
        self.buf, self.pos = buf, pos

    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def skip(self, n: int) -> None:
        if n > self.remaining():
            raise JavaReadError("null")
        self.pos += n

    def int_of(self, fmt: str, n: int) -> int:
        self.skip(n)
        return struct.unpack_from(fmt, self.buf, self.pos - n)[0]

    def varint(self) -> int:
        value = shift = 0
        for _ in range(5):
            self.skip(1)
            b = self.buf[self.pos - 1]
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value - (1 << 32) if value >= 1 << 31 else value
            shift += 7
        raise JavaReadError("Varint is too long, the most significant bit in the 5th byte is set")

    def array(self, size: int) -> None:
        if size > self.remaining():
            raise JavaReadError(f"Error reading byte array of {size} byte(s): only {self.remaining()} byte(s) "
                                "available")
        self.pos += max(size, 0)


def java_read_error(name: str, version: int, buf: bytes, pos: int = 2) -> str | None:
    """Return the message Kafka's reader throws on buf[pos:] as `name` at `version`, or None if it reads."""
    spec = load(name)
    try:
        _struct(spec, spec.fields, version, version in spec.flexible_versions, _Reader(buf, pos))
    except JavaReadError as e:
        return str(e)
    return None


def _struct(spec, fields, version: int, flexible: bool, r: _Reader) -> None:
    tagged = {}
    for f in fields:
        if version not in f.versions:
            continue
        if flexible and version in f.tagged_versions:
            tagged[f.tag] = f
        else:
            _field(spec, f, version, flexible, r)
    if flexible:
        for _ in range(max(r.varint(), 0)):
            tag, size = r.varint(), r.varint()
            if tag in tagged:
                _field(spec, tagged[tag], version, flexible, r)
            else:
                r.array(size)


def _length(f, version: int, flexible: bool, r: _Reader, wide: bool) -> int | None:
    n = r.varint() - 1 if flexible else r.int_of(">i" if wide else ">h", 4 if wide else 2)
    if n < 0:
        if version in f.nullable_versions:
            return None
        raise JavaReadError(f"non-nullable field {json_name(f.name)} was serialized as null")
    return n


def _field(spec, f, version: int, flexible: bool, r: _Reader) -> None:
    if f.is_array:
        n = _length(f, version, flexible, r, wide=True)
        if n is not None and n > r.remaining():
            raise JavaReadError(f"Tried to read {n} elements, but only {r.remaining()} bytes remain")
        for _ in range(n or 0):
            _value(spec, f, f.element_type, version, flexible, r)
    else:
        _value(spec, f, f.type, version, flexible, r)


def _value(spec, f, t: str, version: int, flexible: bool, r: _Reader) -> None:
    if t in _FIXED:
        r.skip(_FIXED[t])
    elif t in ("string", "bytes", "records"):
        n = _length(f, version, flexible, r, wide=t != "string")
        if t == "string" and n is not None and n > 0x7FFF:
            raise JavaReadError(f"string field {json_name(f.name)} had invalid length {n}")
        if n is not None:
            r.array(n)
    else:
        _struct(spec, spec.struct(t).fields, version, flexible, r)
