"""Segment side files and the tolerant batch scan the dump tool needs.

Layouts (big-endian):
    .index      8-byte entries: int32 relativeOffset, int32 filePosition (OffsetIndex)
    .timeindex 12-byte entries: int64 timestamp, int32 relativeOffset (TimeIndex)
    .txnindex  34-byte entries: int16 version, int64 producerId, int64 firstOffset, int64 lastOffset,
               int64 lastStableOffset (TransactionIndex / AbortedTxn)
    .snapshot  producer state: int16 version, uint32 crc (CRC-32C of the rest), int32 count, then
               per producer: int64 producerId, int16 epoch, int32 lastSequence, int64 lastOffset,
               int32 offsetDelta, int64 timestamp, int32 coordinatorEpoch, int64 currentTxnFirstOffset
               (-1 = none) (ProducerStateManager snapshot v1)

Rules:
- Index readers follow Kafka's read-only mmap view: entries = file length rounded down to the entry size.
- DumpBatchReader iterates as Kafka's FileLogInputStream does (stop quietly when fewer than 18 bytes
  remain or a batch runs past the end; a size below 14 is an error), within an optional byte limit.
"""
from __future__ import annotations

import struct
from bisect import bisect_right
from pathlib import Path
from typing import NamedTuple

from ..records.batch import LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, RecordBatch
from ..records.crc import crc32c
from .segment import HEADER_SIZE_UP_TO_MAGIC, RECORD_OVERHEAD_V0, BatchReader

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")
TXN_ENTRY = struct.Struct(">hqqqq")
_HEAD = struct.Struct(">qi")
NO_TIMESTAMP = -1
INT_MAX = 2 ** 31 - 1


class CorruptIndexError(ValueError):
    """An index file fails Kafka's sanity check (CorruptIndexException)."""


class IndexEntry(NamedTuple):
    """One .index entry with the absolute offset."""

    offset: int
    position: int


class TimeEntry(NamedTuple):
    """One .timeindex entry with the absolute offset."""

    timestamp: int
    offset: int


def base_offset_of(path) -> int:
    """Return the base offset in a segment side-file name (`name.split('.')[0]`)."""
    return int(Path(path).name.split(".")[0])


class OffsetIndex:
    """A read-only view of an .index file."""

    entry_size = 8

    def __init__(self, path, base_offset: int | None = None):
        self.path = Path(path)
        self.base_offset = base_offset_of(path) if base_offset is None else base_offset
        self.data = self.path.read_bytes()
        self.length = len(self.data)
        self.entries = self.length // self.entry_size

    def entry(self, i: int) -> IndexEntry:
        """Return entry `i` (absolute offset, file position)."""
        rel, position = OFFSET_ENTRY.unpack_from(self.data, i * 8)
        return IndexEntry(self.base_offset + rel, position)

    def last_entry(self) -> IndexEntry:
        """Return the last entry, or (base offset, 0) when empty."""
        return self.entry(self.entries - 1) if self.entries else IndexEntry(self.base_offset, 0)

    def lookup(self, target: int) -> IndexEntry:
        """Return the entry with the largest offset <= target, else (base offset, 0)."""
        keys = [self.entry(i).offset for i in range(self.entries)]
        slot = bisect_right(keys, target) - 1
        return self.entry(slot) if slot >= 0 else IndexEntry(self.base_offset, 0)

    def sanity_check(self) -> None:
        """Raise CorruptIndexError with Kafka's message when the index would be rebuilt."""
        last = self.last_entry().offset
        if self.entries and last < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file ({self.path.absolute()}) has non-zero size but the last offset "
                f"is {last} which is less than the base offset {self.base_offset}")
        if self.length % 8:
            raise CorruptIndexError(
                f"Index file {self.path.absolute()} is corrupt, found {self.length} bytes which is neither "
                "positive nor a multiple of 8")


class TimeIndex(OffsetIndex):
    """A read-only view of a .timeindex file."""

    entry_size = 12

    def entry(self, i: int) -> TimeEntry:
        """Return entry `i` (timestamp, absolute offset)."""
        ts, rel = TIME_ENTRY.unpack_from(self.data, i * 12)
        return TimeEntry(ts, self.base_offset + rel)

    def last_entry(self) -> TimeEntry:
        """Return the last entry, or (NO_TIMESTAMP, base offset) when empty."""
        return self.entry(self.entries - 1) if self.entries else TimeEntry(NO_TIMESTAMP, self.base_offset)

    def sanity_check(self) -> None:
        """Raise CorruptIndexError with Kafka's message when the time index would be rebuilt."""
        ts, last = self.last_entry()
        where = f"time index file ({self.path.absolute()}) has non-zero size but the last"
        if self.entries and ts < self.entry(0).timestamp:
            raise CorruptIndexError(f"Corrupt time index found, {where} timestamp is {ts} which is less than the "
                                    f"first timestamp {self.entry(0).timestamp}")
        if self.entries and last < self.base_offset:
            raise CorruptIndexError(f"Corrupt time index found, {where} offset is {last} which is less than the "
                                    f"first offset {self.base_offset}")
        if self.length % 12:
            raise CorruptIndexError(f"Time index file {self.path.absolute()} is corrupt, found {self.length} bytes "
                                    "which is neither positive nor a multiple of 12")


class AbortedTxn(NamedTuple):
    """One .txnindex entry."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def read_txn_index(path) -> list[AbortedTxn]:
    """Return every aborted transaction of a .txnindex file (a partial last entry is ignored)."""
    data = Path(path).read_bytes()
    return [AbortedTxn(*TXN_ENTRY.unpack_from(data, i)) for i in range(0, len(data) - 33, 34)]


class ProducerEntry(NamedTuple):
    """One producer of a producer-state snapshot (v1)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


_PRODUCER = struct.Struct(">qhiqiqiq")


def read_producer_snapshot(path) -> list[ProducerEntry]:
    """Read a producer-state `.snapshot` file; raise CorruptIndexError with Kafka's messages."""
    data = Path(path).read_bytes()
    if len(data) < 10:
        raise CorruptIndexError(f"Snapshot file {path} is too short to hold a header")
    version, crc, count = struct.unpack_from(">hIi", data, 0)
    if version != 1:
        raise CorruptIndexError(f"Snapshot contained an unknown file version {version}")
    computed = crc32c(data[6:])
    if computed != crc:
        raise CorruptIndexError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. "
                                f"Computed crc: {computed}")
    if len(data) < 10 + count * _PRODUCER.size or count < 0:
        raise CorruptIndexError(f"Snapshot file {path} is truncated: it claims {count} producers")
    return [ProducerEntry(*_PRODUCER.unpack_from(data, 10 + i * _PRODUCER.size)) for i in range(count)]


class DumpBatchReader(BatchReader):
    """Iterate batches as Kafka's FileLogInputStream does, within the first `max_bytes` of the file.

    After iteration: `trailing_bytes` (bytes after the last batch read), `error` (the message Kafka's
    reader throws with, or None) and `error_position`.
    """

    def __init__(self, path, *, max_bytes: int = INT_MAX, start: int = 0, legacy: bool = False):
        super().__init__(path, strict=False, verify_crc=False, start=start)
        self.max_bytes = max_bytes
        self.legacy = legacy  # True: magic 0/1 entries come back as records.legacy.LegacyBatch
        self.error: str | None = None
        self.error_position: int | None = None

    @property
    def end(self) -> int:
        """Return where reading stops: the file size or the byte limit."""
        return min(self.file_size, self.max_bytes)

    @property
    def trailing_bytes(self) -> int:
        """Return how many bytes of the slice were not read as batches."""
        return self.end - self.valid_bytes

    def _stop(self, message: str, pos: int):
        self.error, self.error_position = message, pos
        return None

    def _next(self, f, pos: int):
        end = self.end
        if pos >= end - HEADER_SIZE_UP_TO_MAGIC:
            return None
        head = f.read(LOG_OVERHEAD)
        _, size = _HEAD.unpack(head)
        if size < RECORD_OVERHEAD_V0:
            return self._stop(f"Found record size {size} smaller than minimum record overhead "
                              f"({RECORD_OVERHEAD_V0}) in file {self.path}.", pos)
        if pos > end - LOG_OVERHEAD - size:
            return None
        buffer = head + f.read(size)
        if self.legacy and buffer[16] in (0, 1):
            from ..records.legacy import LegacyBatch

            return LegacyBatch(buffer, pos)
        if buffer[16] != 2:
            return self._stop(f"Unsupported record batch magic {buffer[16]} at position {pos} in file "
                              f"{self.path} (only magic 2 is read)", pos)
        if len(buffer) < RECORD_BATCH_OVERHEAD:
            return self._stop(f"Record batch of {len(buffer)} bytes at position {pos} in file {self.path} is "
                              f"smaller than the {RECORD_BATCH_OVERHEAD}-byte header", pos)
        return RecordBatch(buffer, pos)


def find_next_batch(path, start: int, end: int | None = None, chunk: int = 1 << 20) -> int | None:
    """Return the first position >= start holding a whole magic-2 batch with a valid CRC, or None.

    Used to resume after corruption; reads the file in chunks so memory stays bounded.
    """
    with open(path, "rb") as f:
        size = f.seek(0, 2) if end is None else end
        pos = start
        while pos + RECORD_BATCH_OVERHEAD <= size:
            f.seek(pos)
            window = f.read(min(chunk, size - pos))
            i = window.find(b"\x02", 16)
            while i != -1:
                candidate = pos + i - 16
                if _batch_at(f, candidate, size):
                    return candidate
                i = window.find(b"\x02", i + 1)
            pos += max(len(window) - 16, 1)
    return None


def _batch_at(f, pos: int, size: int) -> bool:
    f.seek(pos)
    head = f.read(RECORD_BATCH_OVERHEAD)
    if len(head) < RECORD_BATCH_OVERHEAD:
        return False
    _, length = _HEAD.unpack_from(head, 0)
    if length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD or pos + LOG_OVERHEAD + length > size:
        return False
    batch = RecordBatch(head + f.read(length - RECORD_BATCH_OVERHEAD + LOG_OVERHEAD), pos)
    return batch.records_count >= 0 and batch.is_valid()
