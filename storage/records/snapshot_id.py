"""SnapshotId: a snapshot's end offset and epoch (Kafka's OffsetAndEpoch), the one value type the raft core,
the metadata log and the snapshot files share.

Rules:
- A value only: no file access, nothing imported, so the sans-I/O raft core may use it (storage.records holds
  values; the import-linter contract keeps the raft core out of storage.log).
- The snapshot holds the offsets below end_offset; epoch is the epoch of the last one. Ids sort by end
  offset, then epoch, and equal any (end_offset, epoch) tuple.
- `file_name` is the snapshot file's name, `<end offset %020d>-<epoch %010d>.checkpoint`.
"""
from __future__ import annotations

from typing import NamedTuple

SUFFIX = ".checkpoint"


class SnapshotId(NamedTuple):
    """Identify a snapshot by its exclusive end offset and the epoch of its last record."""

    end_offset: int
    epoch: int

    @property
    def file_name(self) -> str:
        """Return the snapshot's file name."""
        return f"{self.end_offset:020d}-{self.epoch:010d}{SUFFIX}"
