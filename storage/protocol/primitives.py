"""Kafka's primitive encodings: fixed-width big-endian ints, LEB128 varints and zigzag varints.

Rules:
- Readers take (buf, pos) and return (value, new_pos); they never slice more than they read.
- A varint longer than its width (5 bytes for 32 bits, 10 for 64) is an error, as in Kafka.
- Writers append to a bytearray.
"""
from __future__ import annotations

import struct

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT16 = struct.Struct(">H")
UINT32 = struct.Struct(">I")
FLOAT64 = struct.Struct(">d")


class VarintError(ValueError):
    """A varint ran past its maximum length or past the end of the buffer."""


def read_uvarint(buf, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Read an unsigned LEB128 varint of at most `max_bytes` bytes."""
    result = shift = 0
    for i in range(max_bytes):
        try:
            b = buf[pos + i]
        except IndexError:
            raise VarintError("varint runs past the end of the buffer") from None
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos + i + 1
        shift += 7
    raise VarintError(f"varint is longer than {max_bytes} bytes")


def read_varint(buf, pos: int) -> tuple[int, int]:
    """Read a zigzag-encoded 32-bit varint."""
    raw, pos = read_uvarint(buf, pos, 5)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf, pos: int) -> tuple[int, int]:
    """Read a zigzag-encoded 64-bit varlong."""
    raw, pos = read_uvarint(buf, pos, 10)
    return (raw >> 1) ^ -(raw & 1), pos


_ONE_BYTE = [bytes((i,)) for i in range(0x80)]


def uvarint_bytes(value: int) -> bytes:
    """Encode an unsigned LEB128 varint."""
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_bytes(value: int) -> bytes:
    """Encode a zigzag 32-bit varint."""
    return uvarint_bytes(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def varlong_bytes(value: int) -> bytes:
    """Encode a zigzag 64-bit varlong."""
    return uvarint_bytes(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def uvarint_size(value: int) -> int:
    """Return how many bytes the unsigned varint of `value` takes."""
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def varint_size(value: int) -> int:
    """Return how many bytes the zigzag varint of `value` takes."""
    return uvarint_size(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)
