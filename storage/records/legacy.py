"""Legacy message formats, magic v0 and v1 (Kafka's LegacyRecord / AbstractLegacyRecordBatch), read only.

Layout of one entry in a log (big-endian):
    0 offset int64 | 8 size int32 (bytes after this field) | 12 crc uint32 = CRC-32 (not C) of [16, end)
   16 magic int8 | 17 attributes int8 (bits 0-2 codec, bit 3 LogAppendTime for v1)
   18 timestamp int64 (v1 only) | keyLength int32, key | valueLength int32, value (-1 = null)
A compressed entry is a wrapper whose value is a compressed stream of inner entries. Inner v1 offsets
are relative: absolute = wrapper offset - last inner offset + inner offset (a wrapper offset of 0
means base 0); inner v0 offsets are absolute. With a LogAppendTime v1 wrapper the inner records take
the wrapper's timestamp.

Rules:
- A LegacyBatch answers what kafka-dump-log prints of a shallow entry (Kafka's FileChannelRecordBatch
  over a legacy record); `records()` yields the deep entries as Kafka's DeepRecordsIterator does.
- Malformed entries raise CorruptRecordError with Kafka's InvalidRecordException texts where it has one.
"""
from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

from .batch import CorruptRecordError
from .compression import CompressionError, decompress

LOG_OVERHEAD = 12
RECORD_OVERHEAD_V0 = 14
RECORD_OVERHEAD_V1 = 22
CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
NO_TIMESTAMP = -1
_HEAD = struct.Struct(">qiIbb")
_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")


class LegacyRecord(NamedTuple):
    """One deep entry: what DumpLogSegments prints of an AbstractLegacyRecordBatch used as a record."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    crc: int
    valid: bool
    key_size: int
    value_size: int


class _Entry(NamedTuple):
    offset: int
    crc: int
    magic: int
    attributes: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    valid: bool
    error: str | None = None


def _sized(buf: bytes, pos: int, what: str) -> tuple[bytes | None, int]:
    if pos + 4 > len(buf):
        raise CorruptRecordError(f"legacy record ends inside its {what} length")
    n, = _INT.unpack_from(buf, pos)
    if n < 0:
        return None, pos + 4
    if pos + 4 + n > len(buf):
        raise CorruptRecordError(f"legacy record {what} of {n} bytes runs past the end of the record")
    return bytes(buf[pos + 4:pos + 4 + n]), pos + 4 + n


def parse_entry(buf: bytes, pos: int = 0, end: int | None = None, lenient: bool = False) -> _Entry:
    """Parse the entry (offset, size, record) at buf[pos:end].

    With `lenient`, a key or value that cannot be read leaves key and value None and the message in
    `error` instead of raising (the shallow line is still printable, as in Kafka).
    """
    end = len(buf) if end is None else end
    record = buf[pos + LOG_OVERHEAD:end]
    offset, _size, crc, magic, attributes = _HEAD.unpack_from(buf, pos)
    valid = len(record) >= RECORD_OVERHEAD_V0 and crc == zlib.crc32(record[4:])
    timestamp = NO_TIMESTAMP
    try:
        if magic not in (0, 1):
            raise CorruptRecordError(f"Invalid magic {magic} in a legacy record")
        if magic == 1 and len(record) < RECORD_OVERHEAD_V1:
            raise CorruptRecordError(f"legacy v1 record of {len(record)} bytes is shorter than its header")
        timestamp = NO_TIMESTAMP if magic == 0 else _LONG.unpack_from(record, 6)[0]
        key, k = _sized(record, 6 if magic == 0 else 14, "key")
        value, _ = _sized(record, k, "value")
    except CorruptRecordError as e:
        if not lenient:
            raise
        return _Entry(offset, crc, magic, attributes, timestamp, None, None, valid, e.message)
    return _Entry(offset, crc, magic, attributes, timestamp, key, value, valid)


class LegacyBatch:
    """A shallow v0/v1 entry of a log file, with its file position."""

    is_control = False
    is_transactional = False

    def __init__(self, buffer: bytes, position: int):
        self.buffer, self.position = buffer, position
        self.entry = parse_entry(buffer, lenient=True)
        self.magic = self.entry.magic
        self.attributes = self.entry.attributes
        self.base_offset = self.last_offset = self.entry.offset
        self.crc = self.entry.crc
        self.size_in_bytes = len(buffer)
        self.compression = self.attributes & CODEC_MASK
        self.records_count = None

    @property
    def timestamp_type(self) -> str:
        """Return Kafka's TimestampType name of the entry."""
        if self.magic == 0:
            return "NoTimestampType"
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_MASK else "CreateTime"

    @property
    def max_timestamp(self) -> int:
        """Return the entry's timestamp (-1 for v0)."""
        return self.entry.timestamp

    def is_valid(self) -> bool:
        """Tell whether the stored CRC-32 matches the record."""
        return self.entry.valid

    def records(self):
        """Yield the deep entries as LegacyRecord (the entry itself when it is not compressed)."""
        e = self.entry
        if e.error:
            raise CorruptRecordError(e.error, self.position)
        if not self.compression:
            yield _record(e, e.offset, e.timestamp)
            return
        yield from _deep(e)


def _record(e: _Entry, offset: int, timestamp: int) -> LegacyRecord:
    return LegacyRecord(offset, timestamp, e.key, e.value, e.crc, e.valid,
                        -1 if e.key is None else len(e.key), -1 if e.value is None else len(e.value))


def _inner_entries(data: bytes) -> list[_Entry]:
    inner, pos = [], 0
    while pos + LOG_OVERHEAD <= len(data):
        size, = _INT.unpack_from(data, pos + 8)
        if size < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})")
        if pos + LOG_OVERHEAD + size > len(data):
            break
        inner.append(parse_entry(data, pos, pos + LOG_OVERHEAD + size))
        pos += LOG_OVERHEAD + size
    return inner


def _deep(wrapper: _Entry):
    """Yield the inner records of a compressed wrapper (Kafka's DeepRecordsIterator)."""
    if wrapper.attributes & CODEC_MASK == 4:
        raise CorruptRecordError("Invalid wrapper compressionType found in legacy deep record iterator "
                                 f"{wrapper.magic}")
    if wrapper.value is None:
        raise CorruptRecordError(f"Found invalid compressed record set with null value (magic = {wrapper.magic})")
    try:
        inner = _inner_entries(decompress(wrapper.attributes & CODEC_MASK, wrapper.value))
    except CompressionError as e:
        raise CorruptRecordError(str(e)) from None
    if not inner:
        raise CorruptRecordError("Found invalid compressed record set with no inner records")
    base = -1
    if wrapper.magic == 1:
        last = inner[-1].offset
        if wrapper.offset != 0 and wrapper.offset < last:
            raise CorruptRecordError(
                f"Found invalid wrapper offset in compressed v1 message set, wrapper offset '{wrapper.offset}' is "
                f"less than the last inner message offset '{last}' and it is not zero.")
        base = 0 if wrapper.offset == 0 else wrapper.offset - last
    log_append = wrapper.magic == 1 and wrapper.attributes & TIMESTAMP_TYPE_MASK
    for e in inner:
        if e.attributes & CODEC_MASK:
            raise CorruptRecordError("Inner messages must not be compressed")
        offset = base + e.offset if wrapper.magic == 1 else e.offset
        timestamp = wrapper.timestamp if log_append and e.magic == 1 else e.timestamp
        yield _record(e, offset, timestamp)


def build_entry(offset: int, magic: int, key: bytes | None, value: bytes | None, *, attributes: int = 0,
                timestamp: int = NO_TIMESTAMP, crc: int | None = None) -> bytes:
    """Return one v0/v1 log entry (for tests and tools); `crc` overrides the computed CRC-32."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += _LONG.pack(timestamp)
    for part in (key, value):
        body += _INT.pack(-1) if part is None else _INT.pack(len(part)) + part
    checksum = zlib.crc32(body) if crc is None else crc
    record = struct.pack(">I", checksum) + body
    return _LONG.pack(offset) + _INT.pack(len(record)) + record
