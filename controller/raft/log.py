"""The replicated log as raft sees it: batches, epoch lookups, truncation, snapshots; an in-memory log.

Rules:
- `RaftLog` is the interface the core calls; the server backs it with segment files and snapshot
  files, tests use `MemoryLog`. The core never does I/O itself: it calls these methods and says,
  in `Ready`, when everything appended so far must be flushed (fsynced).
- Offsets are exclusive ends; `start_offset` is the first offset still in the log (the end offset
  of the snapshot the log starts after), `end_offset` the next offset to append.
- The epoch cache maps each epoch to the offset where it starts; the snapshot gives the floor
  (snapshot epoch, start_offset). `end_offset_for_epoch(e)` answers like Kafka's leader epoch cache.
- Truncation and snapshot installation happen at batch boundaries only.
- Snapshots are kept until retention (retention.py, Kafka's maybeClean) moves the log start to a newer
  one with delete_before_snapshot(): every snapshot at or above the log start stays readable.
- Durability (MemoryLog only): `flush()` makes the current content durable; `crash()` drops what
  was appended after the last flush, as a machine crash would.
"""
from __future__ import annotations

import bisect

from kraftsman.storage.records.epoch_cache import EpochCache
from kraftsman.storage.records.raft_values import Batch, Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId

from .records import snapshot_timestamp


class RaftLog:
    """Interface of the log the core drives (see MemoryLog for the reference semantics)."""

    start_offset: int
    end_offset: int

    def last_epoch(self) -> int: ...
    def append(self, batch: Batch) -> None: ...
    def read(self, offset: int, max_bytes: int) -> list[Batch]: ...
    def truncate_to(self, offset: int) -> int: ...
    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]: ...
    def epoch_at(self, offset: int) -> int: ...
    def latest_snapshot(self) -> Snapshot | None: ...
    def read_snapshot(self, snapshot_id: SnapshotId) -> Snapshot | None: ...
    def earliest_snapshot_id(self) -> SnapshotId | None: ...
    def store_snapshot(self, snapshot: Snapshot) -> None: ...
    def install_snapshot(self, snapshot: Snapshot) -> None: ...
    def delete_before(self, offset: int) -> None: ...
    def delete_before_snapshot(self, snapshot_id: SnapshotId) -> bool: ...
    def snapshot_ids(self) -> list[SnapshotId]: ...
    def snapshot_size(self, snapshot_id: SnapshotId) -> int | None: ...
    def snapshot_timestamp(self, snapshot_id: SnapshotId) -> int | None: ...
    def size_in_bytes(self) -> int: ...
    def flush(self) -> None: ...
    def begin_flush(self): ...  # a job making the current content durable, runnable in a thread
    def end_flush(self, job) -> None: ...


class MemoryLog(RaftLog):
    """A RaftLog in memory, with an explicit durability mark for crash simulation."""

    def __init__(self, snapshots=()):
        self.batches: list[Batch] = []
        self._bases: list[int] = []
        self.epochs = EpochCache()  # storage's leader epoch cache, as FileLog keeps it
        self.snapshots: dict[SnapshotId, Snapshot] = {}
        self.start_offset = self.end_offset = 0
        for snap in snapshots:
            self.snapshots[snap.snapshot_id] = snap
        latest = self.latest_snapshot()
        if latest is not None:
            self._reset_to(latest.snapshot_id)
        self.durable_end = self.end_offset
        self._durable_snapshots = set(self.snapshots)

    # -- reading
    def last_epoch(self) -> int:
        return self.epochs.last_epoch()

    def read(self, offset: int, max_bytes: int) -> list[Batch]:
        """Return whole batches from the one holding `offset`, at least one, about max_bytes in all."""
        i = max(bisect.bisect_right(self._bases, offset) - 1, 0)
        out, size = [], 0
        for batch in self.batches[i:]:
            if out and size + len(batch.data) > max_bytes:
                break
            out.append(batch)
            size += len(batch.data)
        return out

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """Return (largest known epoch <= `epoch`, the offset where that epoch ends)."""
        return self.epochs.end_offset_for_epoch(epoch, self.start_offset, self.end_offset)

    def epoch_at(self, offset: int) -> int:
        """Return the epoch of the batch holding `offset` (the floor epoch below the log)."""
        return self.epochs.epoch_at(offset, self.start_offset)

    def latest_snapshot(self) -> Snapshot | None:
        return self.snapshots[max(self.snapshots)] if self.snapshots else None

    def earliest_snapshot_id(self) -> SnapshotId | None:
        return min(self.snapshots) if self.snapshots else None

    def read_snapshot(self, snapshot_id: SnapshotId) -> Snapshot | None:
        return self.snapshots.get(SnapshotId(*snapshot_id))

    def snapshot_ids(self) -> list[SnapshotId]:
        """Return the ids of the snapshots kept, oldest first."""
        return sorted(self.snapshots)

    def snapshot_size(self, snapshot_id: SnapshotId) -> int | None:
        snap = self.snapshots.get(SnapshotId(*snapshot_id))
        return None if snap is None else len(snap.data)

    def snapshot_timestamp(self, snapshot_id: SnapshotId) -> int | None:
        """Return the snapshot's LastContainedLogTimestamp (None when it is not kept or has no header)."""
        snap = self.snapshots.get(SnapshotId(*snapshot_id))
        return None if snap is None else snapshot_timestamp(snap.data)

    def size_in_bytes(self) -> int:
        """Return the bytes of the batches kept (Kafka's log.size)."""
        return sum(len(b.data) for b in self.batches)

    # -- writing
    def append(self, batch: Batch) -> None:
        if batch.base_offset != self.end_offset:
            raise ValueError(f"append at {batch.base_offset} but the log ends at {self.end_offset}")
        if batch.epoch < self.last_epoch():
            raise ValueError(f"append of epoch {batch.epoch} after epoch {self.last_epoch()}")
        self.epochs.assign(batch.epoch, batch.base_offset)
        self.batches.append(batch)
        self._bases.append(batch.base_offset)
        self.end_offset = batch.next_offset

    def truncate_to(self, offset: int) -> int:
        """Remove every batch holding an offset >= `offset`; return the new end offset."""
        i = bisect.bisect_left([b.next_offset for b in self.batches], offset + 1)
        del self.batches[i:], self._bases[i:]
        self.end_offset = self.batches[-1].next_offset if self.batches else self.start_offset
        self.epochs.truncate(self.end_offset)
        self.durable_end = min(self.durable_end, self.end_offset)
        return self.end_offset

    def store_snapshot(self, snapshot: Snapshot) -> None:
        """Keep a snapshot the state machine wrote (durable at once, like an atomic file rename)."""
        self.snapshots[snapshot.snapshot_id] = snapshot
        self._durable_snapshots.add(snapshot.snapshot_id)

    def install_snapshot(self, snapshot: Snapshot) -> None:
        """Replace the whole log by a snapshot fetched from the leader."""
        self.store_snapshot(snapshot)
        self._reset_to(snapshot.snapshot_id)
        self.durable_end = self.end_offset

    def delete_before_snapshot(self, snapshot_id: SnapshotId) -> bool:
        """Kafka's deleteBeforeSnapshot: move the log start up to a kept snapshot no newer than the latest,
        dropping the batches and snapshots below it; return whether anything was dropped."""
        sid = SnapshotId(*snapshot_id)
        latest = max(self.snapshots) if self.snapshots else None
        if sid not in self.snapshots or not self.start_offset < sid.end_offset <= latest.end_offset:
            return False
        older = [s for s in self.snapshots if s < sid]
        dropped = bool(older) or bisect.bisect_left(self._bases, sid.end_offset) > 0
        self.delete_before(sid.end_offset)
        for old in older:
            self.snapshots.pop(old, None)
            self._durable_snapshots.discard(old)
        return dropped

    def delete_before(self, offset: int) -> None:
        """Drop batches below `offset` (a snapshot boundary) and older snapshots."""
        i = bisect.bisect_left(self._bases, offset)
        epoch = self.epoch_at(offset - 1) if offset > self.start_offset else self.epochs.floor_epoch
        del self.batches[:i], self._bases[:i]
        self.start_offset = offset
        self.epochs.delete_before(offset, epoch)
        for sid in [s for s in self.snapshots if s.end_offset < offset]:
            del self.snapshots[sid]
            self._durable_snapshots.discard(sid)

    def _reset_to(self, sid: SnapshotId) -> None:
        self.batches.clear()
        self._bases.clear()
        self.start_offset = self.end_offset = sid.end_offset
        self.epochs.reset(sid.epoch)
        for old in [s for s in self.snapshots if s < sid]:
            del self.snapshots[old]

    # -- durability
    def flush(self) -> None:
        self.durable_end = self.end_offset
        self._durable_snapshots = set(self.snapshots)

    def begin_flush(self):
        """Return a job that makes what is appended now durable (as a background fsync would)."""
        end = self.end_offset

        def job() -> None:
            self.durable_end = max(self.durable_end, min(end, self.end_offset))
        return job

    def end_flush(self, job) -> None:
        """Nothing to forget in memory."""

    def crash(self) -> None:
        """Lose everything not flushed."""
        if self.end_offset > self.durable_end:
            self.truncate_to(self.durable_end)
        for sid in [s for s in self.snapshots if s not in self._durable_snapshots]:
            del self.snapshots[sid]
