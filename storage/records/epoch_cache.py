"""The leader epoch cache of a KRaft log: where each epoch starts, and the floor below the log.

Rules:
- Entries (epoch, start offset) are strictly increasing in epoch; the floor epoch answers for
  offsets below the log (the epoch of the snapshot the log starts after).
- Answers match Kafka's LeaderEpochFileCache.endOffsetFor:
  `end_offset_for_epoch(e)` is (largest known epoch <= e, the offset where it ends).
- This module holds numbers only and imports nothing of the project: the raft core's MemoryLog keeps its
  epochs in it too; storage/log/metadata_log persists them as `leader-epoch-checkpoint` (storage/log/checkpoints.py).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class EpochEntry:
    """Say that `epoch` started at `start_offset` (a leader-epoch-checkpoint line)."""

    epoch: int
    start_offset: int


class EpochCache:
    """Epoch start offsets of the batches in the log, with the floor epoch below it."""

    def __init__(self, floor_epoch: int = 0):
        self.epochs: list[int] = []
        self.starts: list[int] = []
        self.floor_epoch = floor_epoch
        self.version = 0  # bumped on every change, so writers know when to checkpoint

    def last_epoch(self) -> int:
        """Return the epoch of the last batch (the floor epoch when the log is empty)."""
        return self.epochs[-1] if self.epochs else self.floor_epoch

    def assign(self, epoch: int, base_offset: int) -> None:
        """Record that a batch of `epoch` was appended at `base_offset`."""
        if not self.epochs or epoch != self.epochs[-1]:
            self.epochs.append(epoch)
            self.starts.append(base_offset)
            self.version += 1

    def end_offset_for_epoch(self, epoch: int, start_offset: int, end_offset: int) -> tuple[int, int]:
        """Return (largest known epoch <= `epoch`, the offset where that epoch ends)."""
        i = bisect.bisect_right(self.epochs, epoch) - 1
        if i < 0:
            return self.floor_epoch, start_offset
        end = self.starts[i + 1] if i + 1 < len(self.epochs) else end_offset
        return self.epochs[i], end

    def epoch_at(self, offset: int, start_offset: int) -> int:
        """Return the epoch of the batch holding `offset` (the floor epoch below the log)."""
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.epochs[i] if i >= 0 and offset >= start_offset else self.floor_epoch

    def truncate(self, end_offset: int) -> None:
        """Forget epochs that start at or after `end_offset`."""
        j = bisect.bisect_left(self.starts, end_offset)
        if j < len(self.epochs):
            del self.epochs[j:], self.starts[j:]
            self.version += 1

    def delete_before(self, offset: int, floor_epoch: int) -> None:
        """Forget epochs wholly below `offset`; the one holding it now starts there."""
        self.floor_epoch = floor_epoch
        j = bisect.bisect_right(self.starts, offset) - 1
        if j > 0:
            del self.epochs[:j], self.starts[:j]
        if self.starts:
            self.starts[0] = max(self.starts[0], offset)
        self.version += 1

    def reset(self, floor_epoch: int) -> None:
        """Forget every epoch; the log is now empty after a snapshot of `floor_epoch`."""
        self.epochs.clear()
        self.starts.clear()
        self.floor_epoch = floor_epoch
        self.version += 1

    def entries(self) -> list[EpochEntry]:
        """Return the entries as leader-epoch-checkpoint lines hold them."""
        return [EpochEntry(e, s) for e, s in zip(self.epochs, self.starts)]
