"""Kafka's Uuid: 16 bytes on the wire, 22-char base64url text (clients `Uuid`).

Rules:
- A Uuid is an immutable 16-byte `bytes` subclass, so it hashes and compares like its bytes.
- Text form is base64url without padding; `from_string` accepts optional padding like Java's decoder.
- `random_uuid` never returns ZERO or ONE nor a string that starts with '-'.
"""
from __future__ import annotations

import base64
import binascii
import os
import struct

from ..errors import StorageError


class UuidError(StorageError, ValueError):
    """A Uuid string could not be decoded."""


class Uuid(bytes):
    """Hold one Kafka Uuid as its 16 big-endian bytes (msb then lsb)."""

    __slots__ = ()

    def __new__(cls, raw: bytes = b"\0" * 16):
        if len(raw) != 16:
            raise UuidError(f"a Uuid has 16 bytes, not {len(raw)}")
        return bytes.__new__(cls, raw)

    @classmethod
    def from_longs(cls, msb: int, lsb: int) -> "Uuid":
        """Build a Uuid from its two signed or unsigned 64-bit halves."""
        return cls(struct.pack(">QQ", msb & (2**64 - 1), lsb & (2**64 - 1)))

    @classmethod
    def from_string(cls, text: str) -> "Uuid":
        """Decode Kafka's base64url text form, with Kafka's error messages."""
        if len(text) > 24:
            raise UuidError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError) as e:
            raise UuidError(f"Input string `{text}` could not be decoded as a base64 UUID: {e}") from None
        if len(raw) != 16:
            raise UuidError(f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to "
                            "the expected 16 bytes of a base64-encoded UUID")
        return cls(raw)

    @property
    def msb(self) -> int:
        """Return the most significant 64 bits as a signed long."""
        return struct.unpack_from(">q", self, 0)[0]

    @property
    def lsb(self) -> int:
        """Return the least significant 64 bits as a signed long."""
        return struct.unpack_from(">q", self, 8)[0]

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self)[:22].decode("ascii")

    def __repr__(self) -> str:
        return f"Uuid({str(self)!r})"

    def sort_key(self) -> tuple[int, int]:
        """Return Kafka's compareTo order: msb then lsb as signed longs."""
        return (self.msb, self.lsb)


ZERO_UUID = Uuid(b"\0" * 16)
ONE_UUID = Uuid.from_longs(0, 1)
METADATA_TOPIC_ID = ONE_UUID
RESERVED = frozenset({ZERO_UUID, ONE_UUID})


def uuid_str(raw: bytes) -> str:
    """Render 16 bytes in Kafka's text form (fast path for renderers)."""
    return base64.urlsafe_b64encode(raw)[:22].decode("ascii")


def bounded_memo(render, limit: int):
    """Return (text(raw), memo): render(raw) of 16 uuid bytes memoized in `memo` (which callers may read
    directly), cleared whenever it holds `limit` entries."""
    memo: dict = {}

    def text(raw) -> str:
        out = memo.get(raw)
        if out is None:
            if len(memo) >= limit:
                memo.clear()
            out = memo[bytes(raw)] = render(raw)
        return out
    return text, memo


def _random_v4() -> Uuid:
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    return Uuid(bytes(b))


def random_uuid() -> Uuid:
    """Return a random (version 4) Uuid the way Kafka's Uuid.randomUuid() does."""
    while True:
        u = _random_v4()
        if u not in RESERVED and not str(u).startswith("-"):
            return u


def is_reserved_directory_id(u: Uuid) -> bool:
    """Tell whether `u` is in the reserved directory-id range (msb == 0 and lsb < 100)."""
    return u.msb == 0 and 0 <= u.lsb < 100


def random_directory_id() -> Uuid:
    """Return a random Uuid usable as a log directory id (never in the reserved range)."""
    while True:
        u = random_uuid()
        if not is_reserved_directory_id(u):
            return u
