"""Raft log entries as Kafka record batches (v2): build, split, validate, read control records.

Rules:
- One append is one batch; batches are never split or merged, so every replica holds the same
  batch boundaries and a batch is identified by (base_offset, epoch).
- A Batch (storage/records/raft_values.py, shared with the metadata log) keeps its exact bytes (what segments
  store and Fetch carries); only the header is parsed.
- Data records are opaque bytes (null key, no headers, timestamp delta 0: what KRaft writes).
- Control batches hold LeaderChange, KRaftVersion and Voters records, which raft interprets.
- Malformed bytes from the wire raise InvalidRecords (answered as INVALID_REQUEST / dropped).
"""
from __future__ import annotations

import struct

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.primitives import varint_bytes
from kraftsman.storage.records import batch as B
from kraftsman.storage.records import control as C
from kraftsman.storage.records.crc import crc32c
from kraftsman.storage.records.raft_values import Batch

LeaderChangeMessage = codec.message_class("LeaderChangeMessage")
KRaftVersionRecord = codec.message_class("KRaftVersionRecord")
_PREFIX = struct.Struct(">qiib")  # base offset, batch length, partition leader epoch, magic
_CRC = struct.Struct(">I")
_LENGTH = struct.Struct(">i")
_TABLE_SIZE = 1 << 14
_VARINT = [varint_bytes(i) for i in range(_TABLE_SIZE)]


class InvalidRecords(ValueError):
    """Bytes that should hold record batches do not."""


def data_batch(values, base_offset: int, epoch: int, timestamp: int = 0) -> Batch:
    """Build a data batch of opaque record values at `base_offset` in `epoch`."""
    if not values:
        raise ValueError("a batch needs at least one record")
    parts: list = []
    extend, table = parts.extend, _VARINT
    for i, v in enumerate(values):  # attributes 0, timestamp delta 0, null key, no headers
        m = len(v)
        vi = table[i] if i < _TABLE_SIZE else varint_bytes(i)
        vl = table[m] if m < _TABLE_SIZE else varint_bytes(m)
        size = len(vi) + len(vl) + m + 4
        head = table[size] if size < _TABLE_SIZE else varint_bytes(size)
        extend((head, b"\x00\x00", vi, b"\x01", vl, v, b"\x00"))
    payload = b"".join(parts)
    n = len(values)
    return Batch(B.assemble_batch(payload, base_offset, n - 1, n, 0, timestamp, timestamp, epoch))


def control_batch(messages, base_offset: int, epoch: int, timestamp: int = 0) -> Batch:
    """Build a control batch from [(control type, message)]."""
    records = [C.encode_control(kind, msg) for kind, msg in messages]
    return Batch(B.build_batch(records, base_offset, timestamp=timestamp, partition_leader_epoch=epoch,
                               control=True))


def leader_change(leader_id: int, voters, granting) -> tuple:
    msg = LeaderChangeMessage(version=0, leader_id=leader_id,
                              voters=[LeaderChangeMessage.Voter(voter_id=v) for v in sorted(voters)],
                              granting_voters=[LeaderChangeMessage.Voter(voter_id=v) for v in sorted(granting)])
    return C.LEADER_CHANGE, msg


def kraft_version(level: int) -> tuple:
    return C.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=level)


def voters_record(voter_set) -> tuple:
    return C.KRAFT_VOTERS, voter_set.to_record()


def split_batches(buf: bytes) -> list[Batch]:
    """Split concatenated v2 batches from the wire, checking sizes, magic and CRC."""
    out, pos, end = [], 0, len(buf)
    while pos < end:
        if end - pos < B.RECORD_BATCH_OVERHEAD:
            raise InvalidRecords(f"truncated batch header at position {pos}")
        _, length, _, magic = _PREFIX.unpack_from(buf, pos)
        stop = pos + length + B.LOG_OVERHEAD
        if magic != 2 or length < B.RECORD_BATCH_OVERHEAD - B.LOG_OVERHEAD or stop > end:
            raise InvalidRecords(f"bad batch at position {pos} (magic {magic}, length {length})")
        data = bytes(buf[pos:stop])
        if crc32c(memoryview(data)[B.ATTRIBUTES_OFFSET:]) != _CRC.unpack_from(data, B.CRC_OFFSET)[0]:
            raise InvalidRecords(f"CRC mismatch in batch at position {pos}")
        out.append(Batch(data))
        pos = stop
    return out


def complete_batches_end(buf) -> int:
    """Return where the last whole batch of `buf` ends (batches from byte 0; a batch cut short is left out, and a
    length no batch can have ends it all, for split_batches to refuse)."""
    pos, end = 0, len(buf)
    while end - pos >= B.LOG_OVERHEAD:
        length = _LENGTH.unpack_from(buf, pos + 8)[0]
        if length < B.RECORD_BATCH_OVERHEAD - B.LOG_OVERHEAD:
            return end
        if pos + B.LOG_OVERHEAD + length > end:
            break
        pos += B.LOG_OVERHEAD + length
    return pos


def snapshot_timestamp(data: bytes) -> int | None:
    """Return the LastContainedLogTimestamp of the SnapshotHeader opening a snapshot's bytes (None without one)."""
    if len(data) < B.RECORD_BATCH_OVERHEAD:
        return None
    try:
        first = split_batches(data[:_PREFIX.unpack_from(data, 0)[1] + B.LOG_OVERHEAD])[0]
    except (InvalidRecords, IndexError):  # not a batch, or a negative length
        return None
    if not first.is_control:
        return None
    for kind, record in first.control_records():
        if kind == C.SNAPSHOT_HEADER:
            return record.last_contained_log_timestamp
    return None


def join_batches(batches) -> bytes:
    return b"".join([b.data for b in batches])
