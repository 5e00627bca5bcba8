"""Kafka's batch compression codecs: none, gzip, snappy (xerial framing), lz4 (frame), zstd.

Rules:
- Ids and names are Kafka's CompressionType (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
- Snappy uses snappy-java's stream framing (magic header, then int32-length-prefixed raw blocks);
  plain unframed snappy is accepted on read as Kafka does.
- cramjam (Rust) is imported only when a compressed batch is met.
"""
from __future__ import annotations

import gzip
import struct
import zlib

from ..errors import StorageError

NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
IDS = {name: i for i, name in NAMES.items()}
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_SNAPPY_BLOCK = 32 * 1024


class CompressionError(StorageError, ValueError):
    """A compressed records section could not be decompressed."""


def _cramjam():
    import cramjam

    return cramjam


def decompress(codec: int, data: bytes) -> bytes:
    """Decompress a records section compressed with `codec`."""
    try:
        if codec == 0:
            return data
        if codec == 1:
            return gzip.decompress(data)
        if codec == 2:
            return _snappy_decompress(data)
        if codec == 3:
            return bytes(_cramjam().lz4.decompress(data))
        if codec == 4:
            return bytes(_cramjam().zstd.decompress(data))
    except (OSError, EOFError, zlib.error, struct.error) as e:
        raise CompressionError(f"{NAMES[codec]} decompression failed: {e}") from None
    except Exception as e:  # cramjam raises its own DecompressionError type
        raise CompressionError(f"{NAMES.get(codec, codec)} decompression failed: {e}") from None
    raise CompressionError(f"unknown compression codec id {codec}")


def compress(codec: int, data: bytes, level: int | None = None) -> bytes:
    """Compress a records section with `codec` the way Kafka's producers frame it."""
    if codec == 0:
        return data
    if codec == 1:
        return gzip.compress(data, compresslevel=9 if level is None else level, mtime=0)
    if codec == 2:
        return _snappy_compress(data)
    if codec == 3:
        return bytes(_cramjam().lz4.compress(data, level=level))
    if codec == 4:
        return bytes(_cramjam().zstd.compress(data, level=3 if level is None else level))
    raise CompressionError(f"unknown compression codec id {codec}")


def _snappy_decompress(data: bytes) -> bytes:
    snappy = _cramjam().snappy
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(snappy.decompress_raw(data))
    out, pos = bytearray(), 16
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if size < 0 or pos + size > len(data):
            raise CompressionError("snappy block runs past the end of the records section")
        out += bytes(snappy.decompress_raw(data[pos:pos + size]))
        pos += size
    return bytes(out)


def _snappy_compress(data: bytes) -> bytes:
    snappy = _cramjam().snappy
    out = bytearray(_XERIAL_HEADER)
    for i in range(0, len(data), _SNAPPY_BLOCK):
        block = bytes(snappy.compress_raw(data[i:i + _SNAPPY_BLOCK]))
        out += struct.pack(">i", len(block)) + block
    return bytes(out)
