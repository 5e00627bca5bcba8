"""ImageBuilder: feed committed batches, get images, as Kafka's MetadataBatchLoader does.

Rules:
- Source-agnostic: files, directories and (later) a live quorum feed the same calls:
  start_snapshot() resets to the empty image, load_batch() replays one batch's (offset, value) pairs.
- Transactions: BeginTransactionRecord publishes what came before it; records up to EndTransactionRecord
  are published together; AbortTransactionRecord drops them. An open transaction is never visible.
- A record that cannot be decoded or applied is a fault: reported to `on_fault`, then skipped.
- Provenance is the offset of the last applied record with its batch's epoch and append time.
- load_runs() takes a batch already split into runs (RecordBatch.raft_value_runs): a run of PartitionRecords of
  one topic is kept in its file when the topic allows it (see chunks.py), else replayed record by record.
"""
from __future__ import annotations

from kraftsman.storage.records.metadata import MetadataParseError

from .delta import MetadataDelta
from .errors import ImageReplayError
from .image import EMPTY, MetadataImage
from .producer_ids import Provenance

BEGIN_TRANSACTION, END_TRANSACTION, ABORT_TRANSACTION = 23, 24, 25
FAULTS = (ImageReplayError, MetadataParseError, ValueError, IndexError, KeyError, TypeError)


class ImageBuilder:
    """Replay batches into images; `image()` is the newest image outside any open transaction."""

    def __init__(self, image: MetadataImage = EMPTY, on_fault=None):
        self.published = image
        self.delta = MetadataDelta(image)
        self.dirty = False
        self.in_transaction = False
        self.last = image.provenance
        self.records = 0
        self.faults: list[tuple[int, str]] = []
        self.on_fault = on_fault

    def start_snapshot(self) -> None:
        """Reset to the empty image: a snapshot follows."""
        self.published = EMPTY
        self.delta = MetadataDelta(EMPTY)
        self.dirty = self.in_transaction = False

    def load_batch(self, values, epoch: int, append_time: int, stop_offset: int | None = None) -> bool:
        """Replay (offset, value) pairs of one batch; return False once past `stop_offset`."""
        replay = self.delta.replay_value
        last, count = None, 0
        for offset, value in values:
            if stop_offset is not None and offset > stop_offset:
                self._advance(last, epoch, append_time, count)
                return False
            key = value[1] if len(value) > 2 else -1
            if BEGIN_TRANSACTION <= key <= ABORT_TRANSACTION and value[0] == 1:
                self._advance(last, epoch, append_time, count)
                self._transaction(key, offset)
                replay, count = self.delta.replay_value, 0
            else:
                try:
                    replay(value)
                except FAULTS as e:
                    self._fault(offset, e)
                count += 1
            last = offset
        self._advance(last, epoch, append_time, count)
        return True

    def load_record_batch(self, batch, epoch: int, stop_offset: int | None = None) -> bool:
        """Replay a RecordBatch's records (load_batch, its max timestamp as append time)."""
        return self.load_batch(batch.raft_values(), epoch, batch.max_timestamp, stop_offset)

    def load_runs(self, runs, chunk_of, values_of, base_offset: int, epoch: int, append_time: int) -> None:
        """Replay a batch given as runs: [start, stop, topic id or None, (offset, value) pairs when None];
        `chunk_of(start, stop)` names a keyed run's records in their file, `values_of(start, stop)` reads them."""
        for start, stop, topic_id, values in runs:
            if topic_id is None:
                self.load_batch(values, epoch, append_time)
            elif self.delta.topics.add_chunk(topic_id, chunk_of(start, stop)):
                self._advance(base_offset + stop - 1, epoch, append_time, stop - start)
            else:
                self.load_batch(values_of(start, stop), epoch, append_time)

    def _advance(self, last: int | None, epoch: int, append_time: int, count: int) -> None:
        if count:
            self.dirty = True
            self.records += count
        if last is not None:
            self.last = Provenance(last, epoch, append_time)

    def _transaction(self, key: int, offset: int) -> None:
        if key == BEGIN_TRANSACTION:
            if self.in_transaction:
                self._fault(offset, ImageReplayError("Encountered BeginTransactionRecord while already in a "
                                                     "transaction"))
                return
            self._publish()
            self.in_transaction = True
        elif not self.in_transaction:
            name = "EndTransactionRecord" if key == END_TRANSACTION else "AbortTransactionRecord"
            self._fault(offset, ImageReplayError(f"Encountered {name} without having seen a "
                                                 "BeginTransactionRecord"))
        elif key == END_TRANSACTION:
            self.in_transaction = False
        else:
            self.in_transaction = False
            self.delta = MetadataDelta(self.published)
            self.dirty = False

    def _publish(self) -> None:
        if self.dirty or self.last != self.published.provenance:
            self.published = self.delta.apply(self.last)
            self.delta = MetadataDelta(self.published)
            self.dirty = False

    def _fault(self, offset: int, error: Exception) -> None:
        message = f"Error loading metadata log record from offset {offset}: {error}"
        self.faults.append((offset, message))
        if self.on_fault is not None:
            self.on_fault(message)

    def image(self) -> MetadataImage:
        """Return the newest image; records of an open transaction are not in it."""
        if not self.in_transaction:
            self._publish()
        return self.published
