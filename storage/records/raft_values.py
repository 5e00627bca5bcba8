"""Batch and Snapshot: the values of the Raft log, shared by the raft core, the metadata log and the tools.

Rules:
- Values only: no file access, and nothing imported that does any (the batch layout and control records, the
  snapshot id, all in storage.records), so the sans-I/O raft core may use it (the import-linter contract "Raft
  core is sans-I/O" keeps the core out of storage.log, where files are opened).
- A Batch is one record batch (v2) as appended, fetched and stored: its exact bytes, and the header fields
  parsed once (base offset, partition leader epoch, record count, control flag). It is created per batch in
  replication and on every log read: __slots__, one struct unpack, no other work until asked.
- A Snapshot is a complete snapshot: its SnapshotId and its bytes (Kafka's .checkpoint format).
- Building, splitting and validating batches belongs to the raft core (controller/raft/records.py).
"""
from __future__ import annotations

import struct
from typing import NamedTuple

from . import batch as B
from . import control as C
from .snapshot_id import SnapshotId

_PREFIX = struct.Struct(">qiib")  # base offset, batch length, partition leader epoch, magic
_CRC = struct.Struct(">I")
_LAST_DELTA = struct.Struct(">i")


class Batch:
    """One record batch: offsets [base_offset, next_offset), its leader epoch, and its bytes."""

    __slots__ = ("base_offset", "epoch", "count", "data", "is_control")

    def __init__(self, data: bytes):
        self.base_offset, _, self.epoch, _ = _PREFIX.unpack_from(data, 0)
        self.count = _LAST_DELTA.unpack_from(data, 23)[0] + 1
        self.is_control = bool(data[22] & B.CONTROL_MASK)
        self.data = data

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.count

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.count - 1

    @property
    def crc(self) -> int:
        return _CRC.unpack_from(self.data, B.CRC_OFFSET)[0]

    def values(self) -> list[bytes]:
        """Return the record values of a data batch."""
        return [v for _, v in B.RecordBatch(self.data).raft_values()]

    def control_records(self) -> list:
        """Return [(control type, decoded message)] of a control batch."""
        out = []
        for rec in B.RecordBatch(self.data).records():
            kind = C.parse_control_type(rec.key)
            out.append((kind, C.decode_control(kind, rec.value) if kind in C.SCHEMAS else None))
        return out

    def __repr__(self) -> str:
        kind = "control" if self.is_control else "data"
        return f"Batch({kind}, offsets={self.base_offset}..{self.last_offset}, epoch={self.epoch})"


class Snapshot(NamedTuple):
    """A complete snapshot: its id and its bytes (Kafka's .checkpoint format)."""

    snapshot_id: SnapshotId
    data: bytes

    @classmethod
    def of(cls, end_offset: int, epoch: int, data: bytes) -> Snapshot:
        """Build a snapshot from its end offset, epoch and bytes (FileLog's snapshot_type)."""
        return cls(SnapshotId(end_offset, epoch), data)
