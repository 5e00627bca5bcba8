"""Snapshots as Kafka writes them (.checkpoint bytes) and their transfer in FetchSnapshot chunks.

Rules:
- A snapshot is record batches with offsets from 0, every batch carrying the snapshot epoch:
  a control batch [SnapshotHeader, (KRaftVersion, Voters when kraft.version >= 1)], the data
  batches, then a control batch [SnapshotFooter]. Raft reads only the first batch (voters).
- The state machine writes snapshot contents; raft only asks for one at an offset, stores it,
  serves it in chunks and installs a fetched one.
- A follower assembles chunks strictly in order; a chunk at the wrong position, a size change or
  a different snapshot id restarts nothing and is rejected.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.records import control as C
from kraftsman.storage.records.raft_values import Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId

from . import records as R
from .voters import VoterSet

SnapshotHeaderRecord = codec.message_class("SnapshotHeaderRecord")
SnapshotFooterRecord = codec.message_class("SnapshotFooterRecord")


def build_snapshot(snapshot_id: SnapshotId, values=(), voters: VoterSet | None = None, kraft_version: int = 0,
                   timestamp: int = 0, batch_size: int = 1000) -> Snapshot:
    """Write a snapshot holding opaque record `values` (and the voter set when kraft.version >= 1)."""
    epoch = snapshot_id.epoch
    header = [(C.SNAPSHOT_HEADER, SnapshotHeaderRecord(version=0, last_contained_log_timestamp=timestamp))]
    if kraft_version >= 1:
        header.append(R.kraft_version(kraft_version))
        if voters is not None:
            header.append(R.voters_record(voters))
    batches = [R.control_batch(header, 0, epoch, timestamp)]
    values = list(values)
    for i in range(0, len(values), batch_size):
        batches.append(R.data_batch(values[i:i + batch_size], batches[-1].next_offset, epoch, timestamp))
    footer = [(C.SNAPSHOT_FOOTER, SnapshotFooterRecord(version=0))]
    batches.append(R.control_batch(footer, batches[-1].next_offset, epoch, timestamp))
    return Snapshot(snapshot_id, R.join_batches(batches))


def read_control(data: bytes) -> tuple[int, VoterSet | None]:
    """Return (kraft.version, voter set or None) from a snapshot's header batch."""
    batches = R.split_batches(data)
    if not batches or not batches[0].is_control:
        raise R.InvalidRecords("First batch is not a control batch with at least one record")
    level, voters = 0, None
    for kind, msg in batches[0].control_records():
        if kind == C.KRAFT_VERSION:
            level = msg.kraft_version
        elif kind == C.KRAFT_VOTERS:
            voters = VoterSet.from_record(msg)
    return level, voters


def read_values(data: bytes) -> list[bytes]:
    """Return the opaque values of a snapshot's data batches."""
    out = []
    for batch in R.split_batches(data):
        if not batch.is_control:
            out.extend(batch.values())
    return out


def chunk(snapshot: Snapshot, position: int, max_bytes: int) -> bytes:
    """Return the bytes of `snapshot` from `position`, at most max_bytes."""
    return snapshot.data[position:position + max(max_bytes, 1)]


class Assembly:
    """A snapshot being fetched: appends chunks in order until `size` bytes arrived."""

    __slots__ = ("snapshot_id", "size", "parts", "received")

    def __init__(self, snapshot_id: SnapshotId):
        self.snapshot_id = snapshot_id
        self.size = -1
        self.parts: list[bytes] = []
        self.received = 0

    def accept(self, snapshot_id: SnapshotId, size: int, position: int, data: bytes) -> bool:
        """Add a chunk; return False (and change nothing) when it does not continue the transfer."""
        if snapshot_id != self.snapshot_id or position != self.received or size < 0:
            return False
        if self.size not in (-1, size) or position + len(data) > size or (not data and position < size):
            return False
        self.size = size
        self.parts.append(bytes(data))
        self.received += len(data)
        return True

    @property
    def complete(self) -> bool:
        return self.size >= 0 and self.received == self.size

    def snapshot(self) -> Snapshot:
        return Snapshot(self.snapshot_id, b"".join(self.parts))
