"""Walk a record batch for SummaryBuilder, finding runs of PartitionRecords that can be counted column by column.

Rules:
- Only batches shaped as the raft writes them are walked (uncompressed; each record with attributes 0, timestamp
  delta 0, offset delta its index, a null key, no headers): walk() returns None for any other, and the caller
  reads the batch record by record.
- A run is k >= 2 consecutive PartitionRecords (frame version 1) of one layout: the same record size, the same
  bytes up to the value's partition id (but the offset delta, which must count up), the same topic id and the same
  Replicas, Isr, RemovingReplicas and AddingReplicas lengths. The check compares columns (one strided slice per
  byte offset that must be shared), so Python does no work per record.
- apply_run() counts a run from its columns (strided slices): it applies only when its partition ids count up by
  one from the first and none of those partitions is known yet (a topic's creation, a snapshot); otherwise it
  applies nothing and the caller reads the run record by record.
"""
from __future__ import annotations

import struct
from array import array
from functools import lru_cache

from kraftsman.storage.records.batch import raft_value_at

PARTITION_HEAD = b"\x01\x03"
FIRST_BYTE_WIDTH = 64                  # offset deltas 0..63 take one varint byte, 64..8191 two
MAX_DELTA = 8192
_INT32 = struct.Struct(">i").unpack_from
_HIGH = bytes(range(128, 256))


class Run:
    """k records of `size` bytes each from byte `pos`, the first's value at `at` (k == 1: one record, no run)."""

    __slots__ = ("pos", "at", "size", "k", "arrays_end")

    def __init__(self, pos: int, at: int, size: int, k: int, arrays_end: int):
        self.pos, self.at, self.size, self.k, self.arrays_end = pos, at, size, k, arrays_end


def walk(data, count: int, start: int):
    """Return [(index, value start, value end, Run or None)] covering `count` records from byte `start`, or None
    when a record is not shaped as the raft writes it (see Rules)."""
    out, pos, i, end = [], start, 0, len(data)
    try:
        while i < count:
            at, stop = raft_value_at(data, pos, i)
            if at is None or stop > end:
                return None
            run = _run(data, pos, at, stop - pos, i, count) if data.startswith(PARTITION_HEAD, at) else None
            out.append((i, at, stop - 1, run))
            step = run.k if run is not None else 1
            i, pos = i + step, pos + step * (stop - pos)
    except IndexError:
        return None
    return out if pos == end else None


def _delta_width(index: int) -> int:
    """Return how many varint bytes the zigzag offset delta `index` takes (below MAX_DELTA)."""
    return 1 if index < FIRST_BYTE_WIDTH else 2


def _arrays_end(data, at: int) -> int | None:
    """Return where the four length-prefixed arrays of the PartitionRecord at `at` end (one-byte lengths only)."""
    pos = at + 23
    for _ in range(4):
        n = data[pos]
        if not 0 < n < 128:
            return None
        pos += 1 + 4 * (n - 1)
    return pos


def _run(data, pos: int, at: int, size: int, index: int, count: int) -> Run | None:
    """Return the run of same-layout PartitionRecords starting with the record at `pos`, or None (see Rules)."""
    arrays_end = _arrays_end(data, at)
    limit = min(count, FIRST_BYTE_WIDTH if index < FIRST_BYTE_WIDTH else MAX_DELTA) - index
    k = min(limit, (len(data) - pos) // size)
    if arrays_end is None or k < 2 or arrays_end + 4 > pos + size:
        return None
    delta_at = 3 if data[pos] < 128 else 4              # after the record length (1-2 bytes), attributes, timestamp
    shared = _shared_offsets(size, at - pos, delta_at, _delta_width(index), _length_offsets(data, at, pos))
    k = _leading_alike(data, pos, size, k, shared)
    if k < 2 or not _deltas_count_up(data, pos + delta_at, pos + k * size, size, index, k):
        return None
    return Run(pos, at, size, k, arrays_end)


def _length_offsets(data, at: int, pos: int) -> tuple[int, ...]:
    """Return the offsets (from the record's start) of the four array lengths of the PartitionRecord at `at`."""
    offsets, p = [], at + 23
    for _ in range(4):
        offsets.append(p - pos)
        p += 1 + 4 * (data[p] - 1)
    return tuple(offsets)


@lru_cache(maxsize=256)
def _shared_offsets(size: int, head: int, delta_at: int, delta_width: int, lengths: tuple) -> tuple[int, ...]:
    """Return the offsets (in a record) of the bytes a run's records must share: the record's header and the
    value's head (but the offset delta and the partition id), the topic id, the four array lengths and the
    record's last byte."""
    skipped = set(range(delta_at, delta_at + delta_width)) | set(range(head + 3, head + 7))
    return tuple(o for o in range(head + 23) if o not in skipped) + lengths + (size - 1,)


def _leading_alike(data, pos: int, size: int, k: int, offsets: tuple) -> int:
    """Return how many of the k records from `pos` (every `size` bytes) share the first one's byte at each offset:
    one column (a strided slice) per offset, no work per record."""
    for offset in offsets:
        column = data[pos + offset:pos + k * size:size]
        rest = column.lstrip(column[:1])
        if rest:
            k -= len(rest)
            if k < 2:
                return k
    return k


def _deltas_count_up(data, first: int, stop: int, size: int, index: int, k: int) -> bool:
    """Tell whether the offset deltas (one or two bytes from `first`, every `size` bytes) are index..index+k-1."""
    if index < FIRST_BYTE_WIDTH:
        return data[first:stop:size] == bytes(range(index << 1, (index + k) << 1, 2))
    low, high = _two_byte_deltas()
    return data[first:stop:size] == low[index:index + k] and data[first + 1:stop:size] == high[index:index + k]


@lru_cache(maxsize=1)
def _two_byte_deltas() -> tuple[bytes, bytes]:
    """Return the first and second varint bytes of the zigzag offset deltas 0..8191 (used from 64 on)."""
    return (bytes((((d << 1) & 0x7F) | 0x80) for d in range(MAX_DELTA)),
            bytes(((d << 1) >> 7) for d in range(MAX_DELTA)))


def apply_run(counts, data, run: Run) -> bool:
    """Count a run's partitions from its columns; return False (nothing changed) when it does not apply."""
    at, size, k = run.at, run.size, run.k
    stop = run.pos + k * size
    first = _INT32(data, at + 3)[0]
    if first < 0 or first + k > 1 << 16 or not _ids_count_up(data, at + 3, stop, size, first, k):
        return False
    topic_id = data[at + 7:at + 23]
    states = counts.topics.get(topic_id)
    if states is None:
        states = counts.topics[topic_id] = array("I")
    if len(states) < first + k:
        states.extend(array("I", [0]) * (first + k - len(states)))
    if states[first:first + k].count(0) != k:
        return False
    replicas, isr = data[at + 23] - 1, data[at + 24 + 4 * (data[at + 23] - 1)] - 1
    leaders = data[run.arrays_end:stop:size]
    state = counts.state_of(replicas, isr, 0)
    states[first:first + k] = array("I", [state]) * k
    offline = k - len(leaders.translate(None, _HIGH))
    for j in (j for j, byte in enumerate(leaders) if byte >= 128) if offline else ():
        states[first + j] = state | 1
    counts.add_new(k, offline, k if isr < replicas else 0)
    return True


def _ids_count_up(data, first_at: int, stop: int, size: int, first: int, k: int) -> bool:
    """Tell whether the big-endian int32 partition ids (from `first_at`, every `size` bytes) are first..first+k-1,
    all below 65536."""
    zeros = bytes(k)
    return (data[first_at:stop:size] == zeros and data[first_at + 1:stop:size] == zeros
            and data[first_at + 2:stop:size] == _ids_high()[first:first + k]
            and data[first_at + 3:stop:size] == _ids_low()[first:first + k])


@lru_cache(maxsize=1)
def _ids_high() -> bytes:
    return bytes((i >> 8) & 0xFF for i in range(1 << 16))


@lru_cache(maxsize=1)
def _ids_low() -> bytes:
    return bytes(i & 0xFF for i in range(1 << 16))
