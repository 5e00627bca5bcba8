"""Load a fetched snapshot into a metadata builder as its chunks arrive (the observer's FetchSnapshot transfer).

Rules:
- A chunk may end inside a batch: each feed() loads the batches it completes and keeps the rest, so the whole
  snapshot never sits in memory; batches are checked (size, magic, CRC) as the log's are (raft.records).
- The builder is reset (start_snapshot) when the first batch arrives; `started` tells the caller that a transfer
  failing from there on left the builder holding part of a snapshot.
- The SnapshotHeader's LastContainedLogTimestamp is kept as `header_time` (-1 without one).
"""
from __future__ import annotations

from kraftsman.controller.raft.records import InvalidRecords, complete_batches_end, split_batches
from kraftsman.storage.records import control
from kraftsman.storage.records.batch import RecordBatch


class SnapshotLoader:
    """Load a snapshot's batches into a builder as its chunks arrive (a chunk may end inside a batch): the whole
    snapshot never sits in memory."""

    def __init__(self, builder):
        self.builder, self.buffer, self.started, self.header_time = builder, b"", False, -1

    def feed(self, chunk: bytes) -> None:
        """Add a chunk; load every batch it completes."""
        data = self.buffer + chunk if self.buffer else chunk
        cut = complete_batches_end(data)
        self.buffer = data[cut:]
        if cut:
            self._load(split_batches(data[:cut]))

    def finish(self) -> None:
        """Check that the snapshot ended with a whole batch."""
        if self.buffer:
            raise InvalidRecords(f"the snapshot ends inside a batch ({len(self.buffer)} bytes left)")
        if not self.started:
            self.builder.start_snapshot()
            self.started = True

    def _load(self, batches) -> None:
        if not self.started:
            self.builder.start_snapshot()
            self.started = True
        for batch in batches:
            if batch.is_control:
                self.header_time = _header_time(batch, self.header_time)
            else:
                self.builder.load_record_batch(RecordBatch(batch.data), batch.epoch)


def _header_time(batch, default: int) -> int:
    for kind, message in batch.control_records():
        if kind == control.SNAPSHOT_HEADER and message is not None:
            return message.last_contained_log_timestamp
    return default
