"""Default value types of the metadata log: a raft batch over its bytes, and a stored snapshot.

Rules:
- These mirror the raft core's Batch and Snapshot field for field (the core passes its own
  classes to FileLog.open); storage tools and tests use these. Both sides name snapshots with
  snapshot_id.SnapshotId.
- A batch is parsed from its v2 header only; the bytes are kept as they are on disk.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

from ..records.batch import CONTROL_MASK
from .snapshot_id import SnapshotId

_PREFIX = struct.Struct(">qii")  # base offset, batch length, partition leader epoch
_LAST_DELTA = struct.Struct(">i")


class LogBatch:
    """One record batch of the log: offsets [base_offset, next_offset), its epoch and bytes."""

    __slots__ = ("base_offset", "epoch", "count", "data", "is_control")

    def __init__(self, data: bytes):
        self.base_offset, _, self.epoch = _PREFIX.unpack_from(data, 0)
        self.count = _LAST_DELTA.unpack_from(data, 23)[0] + 1
        self.is_control = bool(data[22] & CONTROL_MASK)
        self.data = data

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.count

    def __repr__(self) -> str:
        return f"LogBatch(offsets={self.base_offset}..{self.next_offset - 1}, epoch={self.epoch})"


class StoredSnapshot(NamedTuple):
    """A complete snapshot: its id and its bytes (Kafka's .checkpoint format)."""

    snapshot_id: SnapshotId
    data: bytes

    @classmethod
    def of(cls, end_offset: int, epoch: int, data: bytes) -> StoredSnapshot:
        """Build a snapshot from its end offset, epoch and bytes (FileLog's snapshot_type)."""
        return cls(SnapshotId(end_offset, epoch), data)
