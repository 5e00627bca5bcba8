"""SummaryBuilder: replay a metadata log into what kafka-cluster's reads need, without a PartitionRegistration.

Rules:
- It is fed as ImageBuilder is (start_snapshot, load_batch, load_record_batch, `last`, image()), so the observer
  follows a quorum into either. Every record but the partition records goes to an inner ImageBuilder: image()
  is its image (brokers, features, topic names), with topics that hold no partitions.
- PartitionRecord and PartitionChangeRecord are read in place, never decoded into messages: with partitions=True
  each partition is one packed int in an array per topic (replica count, ISR size, offline bit) and
  PartitionCounts keeps the running totals (partitions, offline: leader -1, under-replicated: ISR smaller than
  replicas); with partitions=False they are skipped unread (describe-brokers and wait read no partition data).
  A run of PartitionRecords of one layout (a topic's creation, a snapshot) is counted by columns, no work per
  record (summary_bulk); the rest record by record.
- RemoveTopicRecord drops its topic's partitions from the counts. A PartitionChangeRecord changes what it names:
  ISR (tag 0), Leader (tag 1, -2 for no change), Replicas (tag 2); it never adds a partition.
- Transactions, as the inner builder keeps them for the other records: partition records and RemoveTopicRecord
  read inside a transaction wait for its EndTransactionRecord, and an AbortTransactionRecord drops them.
- A partition record that cannot be read (truncated, a partition id outside 0..MAX_PARTITION_ID, a change of a
  partition never created) is a fault: reported to `on_fault`, then skipped, as ImageBuilder does.
- counts (and image()) are read by the thread that feeds the builder: kafka-cluster's reads are single-threaded.
"""
from __future__ import annotations

import struct
from array import array

from kraftsman.storage.records.batch import RECORD_BATCH_OVERHEAD

from .batch_loader import ImageBuilder
from .image import EMPTY
from .producer_ids import Provenance
from .summary_bulk import MAX_DELTA, apply_run, walk

PARTITION_RECORD, PARTITION_CHANGE_RECORD, REMOVE_TOPIC_RECORD = 3, 5, 9
BEGIN_TRANSACTION, END_TRANSACTION, ABORT_TRANSACTION = 23, 24, 25
_HELD = (PARTITION_RECORD, PARTITION_CHANGE_RECORD, REMOVE_TOPIC_RECORD)
_MARKERS = (BEGIN_TRANSACTION, END_TRANSACTION, ABORT_TRANSACTION)
MAX_PARTITION_ID = (1 << 20) - 1
NO_LEADER_CHANGE = -2
_INT32 = struct.Struct(">i").unpack_from
_REPLICAS_SHIFT, _ISR_SHIFT, _LENGTH_MASK = 16, 1, 0x7FFF


class UnreadableRecord(ValueError):
    """A partition record whose bytes do not hold what its type says."""


def pack(replicas: int, isr: int, leader: int) -> int:
    """Return a partition's packed state: replica count, ISR size and whether it has no leader."""
    return (min(replicas, _LENGTH_MASK) << _REPLICAS_SHIFT) | (min(isr, _LENGTH_MASK) << _ISR_SHIFT) | (leader < 0)


def _is_under(state: int) -> bool:
    return (state >> _ISR_SHIFT) & _LENGTH_MASK < state >> _REPLICAS_SHIFT


class PartitionCounts:
    """One packed state per partition, by topic id, with running totals."""

    def __init__(self):
        self.topics: dict[bytes, array] = {}
        self.total = self.offline = self.under_replicated = 0

    def set(self, topic_id: bytes, partition_id: int, state: int) -> None:
        """Record a partition's state (a PartitionRecord: new, or replacing the old)."""
        states = self.topics.get(topic_id)
        if states is None:
            states = self.topics[topic_id] = array("I")
        if partition_id >= len(states):
            if partition_id > MAX_PARTITION_ID:
                raise UnreadableRecord(f"partition id {partition_id} is out of range")
            states.extend(array("I", [0]) * (partition_id + 1 - len(states)))
        self._replace(states, partition_id, state)

    def _replace(self, states: array, partition_id: int, state: int) -> None:
        old = states[partition_id]
        if old:
            self.offline -= old & 1
            self.under_replicated -= _is_under(old)
        else:
            self.total += 1
        states[partition_id] = state
        self.offline += state & 1
        self.under_replicated += _is_under(state)

    def change(self, topic_id: bytes, partition_id: int, replicas: int | None, isr: int | None, leader: int) -> None:
        """Apply a PartitionChangeRecord's replica count, ISR size and leader (None, -2: unchanged)."""
        states = self.topics.get(topic_id)
        old = states[partition_id] if states is not None and 0 <= partition_id < len(states) else 0
        if not old:
            raise UnreadableRecord(f"no partition {partition_id} in topic {topic_id.hex()} to change")
        replicas = old >> _REPLICAS_SHIFT if replicas is None else replicas
        isr = (old >> _ISR_SHIFT) & _LENGTH_MASK if isr is None else isr
        offline = old & 1 if leader == NO_LEADER_CHANGE else leader < 0
        self._replace(states, partition_id, pack(replicas, isr, 0) | offline)

    @staticmethod
    def state_of(replicas: int, isr: int, leader: int) -> int:
        """Return the packed state of a partition (see pack)."""
        return pack(replicas, isr, leader)

    def add_new(self, count: int, offline: int, under_replicated: int) -> None:
        """Add partitions just stored in `topics` (none was known) to the totals."""
        self.total += count
        self.offline += offline
        self.under_replicated += under_replicated

    def put(self, buf, at: int, end: int) -> None:
        """Apply the PartitionRecord whose value is buf[at:end]."""
        self.set(buf[at + 7:at + 23], _INT32(buf, at + 3)[0], read_partition(buf, at, end))

    def put_change(self, buf, at: int, end: int) -> None:
        """Apply the PartitionChangeRecord whose value is buf[at:end]."""
        self.change(buf[at + 7:at + 23], _INT32(buf, at + 3)[0], *read_change(buf, at, end))

    def remove_topic(self, topic_id: bytes) -> None:
        """Forget a removed topic's partitions."""
        for state in self.topics.pop(topic_id, ()):
            if state:
                self.total -= 1
                self.offline -= state & 1
                self.under_replicated -= _is_under(state)

    def names(self, topic_names: dict[bytes, str], offline: bool, limit: int | None = None) -> list[str]:
        """Return `topic-partition` of the offline (or under-replicated) partitions, by topic name then partition id,
        at most `limit`; a topic the image does not name shows its id."""
        wanted = self.offline if offline else self.under_replicated
        found: list[str] = []
        if not wanted:
            return found
        named = sorted((topic_names.get(topic_id, topic_id.hex()), topic_id) for topic_id in self.topics)
        for name, topic_id in named:
            states = self.topics[topic_id]
            found += [f"{name}-{i}" for i, s in enumerate(states) if s and ((s & 1) if offline else _is_under(s))]
            if limit is not None and len(found) >= limit:
                return found[:limit]
        return found


class SummaryBuilder:
    """Replay batches into an image without partitions, and (partitions=True) PartitionCounts."""

    def __init__(self, partitions: bool = True, on_fault=None):
        self.inner = ImageBuilder(EMPTY, on_fault=on_fault)
        self.partitions = partitions
        self.counts = PartitionCounts()
        self.held: list[tuple[int, int, bytes]] = []       # (key, offset, value) waiting for a transaction's end

    @property
    def last(self):
        return self.inner.last

    @last.setter
    def last(self, provenance) -> None:
        self.inner.last = provenance

    @property
    def faults(self) -> list:
        return self.inner.faults

    def start_snapshot(self) -> None:
        """Reset to the empty image and no partitions: a snapshot follows."""
        self.inner.start_snapshot()
        self.counts, self.held = PartitionCounts(), []

    def image(self):
        """Return the inner image (brokers, features, topics without partitions)."""
        return self.inner.image()

    def load_record_batch(self, batch, epoch: int, stop_offset: int | None = None) -> bool:
        """Replay a RecordBatch (see load_batch), reading its records where they lie and counting runs of
        PartitionRecords by columns (summary_bulk)."""
        data = batch.buffer
        walked = None
        if self.partitions and not batch.compression and batch.records_count <= MAX_DELTA:
            walked = walk(data, batch.records_count, RECORD_BATCH_OVERHEAD)
        if walked is not None:
            base = batch.base_offset
            return self._load(((base + i, data, at, end, run) for i, at, end, run in walked), epoch,
                              batch.max_timestamp, stop_offset)
        spans = batch.raft_value_spans()
        if len(spans) != batch.records_count:
            return self.load_batch(batch.raft_values(), epoch, batch.max_timestamp, stop_offset)
        return self._load(((offset, data, at, end, None) for offset, at, end in spans), epoch, batch.max_timestamp,
                          stop_offset)

    def load_batch(self, values, epoch: int, append_time: int, stop_offset: int | None = None) -> bool:
        """Replay (offset, value) pairs of one batch; return False once past `stop_offset`."""
        return self._load(((offset, value, 0, len(value), None) for offset, value in values), epoch, append_time,
                          stop_offset)

    def _load(self, records, epoch: int, append_time: int, stop_offset: int | None) -> bool:
        """Replay (offset, buffer, value start, value end, summary_bulk.Run or None) records: partition records into
        the counts, the rest into the inner builder in runs (a transaction marker alone, to see where the
        transaction stands)."""
        run: list = []
        offset = None
        for offset, buf, at, end, bulk in records:
            if stop_offset is not None and offset > stop_offset:
                self._forward(run, epoch, append_time)
                return False
            key = buf[at + 1] if end - at > 2 and buf[at] == 1 else -1
            if bulk is not None:
                offset = self._bulk(offset, buf, at, end, bulk)
            elif key == PARTITION_RECORD or key == PARTITION_CHANGE_RECORD:
                self._partition(key, offset, buf, at, end)
            elif key in _MARKERS:
                self._forward(run, epoch, append_time)
                self.inner.load_batch([(offset, buf[at:end])], epoch, append_time)
                self._after_marker(key)
            else:
                if key == REMOVE_TOPIC_RECORD:
                    self._held_or_applied(key, offset, buf[at:end])
                run.append((offset, buf[at:end]))
        self._forward(run, epoch, append_time)
        if offset is not None and offset > self.inner.last.offset:    # the batch ended with partition records
            self.inner.last = Provenance(offset, epoch, append_time)
        return True

    def _bulk(self, offset: int, buf, at: int, end: int, bulk) -> int:
        """Count a run of PartitionRecords by columns, or record by record; return the run's last offset."""
        if self.inner.in_transaction or not apply_run(self.counts, buf, bulk):
            for j in range(bulk.k):
                shift = j * bulk.size
                self._partition(PARTITION_RECORD, offset + j, buf, at + shift, end + shift)
        return offset + bulk.k - 1

    def _partition(self, key: int, offset: int, buf, at: int, end: int) -> None:
        if not self.partitions:
            return
        if self.inner.in_transaction:
            self.held.append((key, offset, buf[at:end]))
            return
        try:
            if key == PARTITION_RECORD:
                self.counts.put(buf, at, end)
            else:
                self.counts.put_change(buf, at, end)
        except (UnreadableRecord, IndexError, struct.error) as e:
            self._fault(offset, e)

    def _forward(self, run: list, epoch: int, append_time: int) -> None:
        if run:
            self.inner.load_batch(run, epoch, append_time)
            run.clear()

    def _after_marker(self, key: int) -> None:
        if self.inner.in_transaction:
            return
        held, self.held = self.held, []
        if key == END_TRANSACTION:
            for held_key, offset, value in held:
                self._held_or_applied(held_key, offset, value)

    def _held_or_applied(self, key: int, offset: int, value: bytes) -> None:
        if self.inner.in_transaction:
            self.held.append((key, offset, value))
            return
        try:
            if key == PARTITION_RECORD:
                self.counts.put(value, 0, len(value))
            elif key == PARTITION_CHANGE_RECORD:
                self.counts.put_change(value, 0, len(value))
            else:
                self.counts.remove_topic(value[3:19])
        except (UnreadableRecord, IndexError, struct.error) as e:
            self._fault(offset, e)

    def _fault(self, offset: int, error: Exception) -> None:
        self.inner._fault(offset, error if isinstance(error, UnreadableRecord) else UnreadableRecord(str(error)))


def _uvarint(data, pos: int) -> tuple[int, int]:
    """Return (value, next position) of an unsigned varint."""
    value = shift = 0
    while True:
        b = data[pos]
        value |= (b & 0x7F) << shift
        pos += 1
        if b < 128:
            return value, pos
        shift += 7
        if shift > 28:
            raise UnreadableRecord("varint too long")


def _array_length(data, pos: int) -> tuple[int, int]:
    """Return (element count, position after the elements) of a compact int32 array (never null here)."""
    n = data[pos]
    if 0 < n < 128:
        return n - 1, pos + 1 + 4 * (n - 1)
    n, pos = _uvarint(data, pos)
    if n == 0:
        raise UnreadableRecord("a null array where the record needs one")
    return n - 1, pos + 4 * (n - 1)


def read_partition(buf, at: int = 0, end: int | None = None) -> int:
    """Return the packed state of the PartitionRecord value at `at` of `buf` (frame version 1, any record version):
    its Replicas, Isr, RemovingReplicas and AddingReplicas arrays, then Leader."""
    replicas, pos = _array_length(buf, at + 23)
    isr, pos = _array_length(buf, pos)
    pos = _array_length(buf, pos)[1]
    pos = _array_length(buf, pos)[1]
    if pos + 4 > (len(buf) if end is None else end):
        raise UnreadableRecord("PartitionRecord is truncated")
    return pack(replicas, isr, _INT32(buf, pos)[0])


def read_change(buf, at: int = 0, end: int | None = None) -> tuple[int | None, int | None, int]:
    """Return (replica count or None, ISR size or None, leader or -2) of the PartitionChangeRecord value at `at` of
    `buf`: its tagged fields Isr (0), Leader (1) and Replicas (2)."""
    end = len(buf) if end is None else end
    replicas = isr = None
    leader = NO_LEADER_CHANGE
    count, pos = _uvarint(buf, at + 23)
    for _ in range(count):
        tag, pos = _uvarint(buf, pos)
        size, pos = _uvarint(buf, pos)
        if tag == 0:
            isr = _array_length(buf, pos)[0]
        elif tag == 1:
            leader = _INT32(buf, pos)[0]
        elif tag == 2:
            replicas = _array_length(buf, pos)[0]
        pos += size
    if pos > end:
        raise UnreadableRecord("PartitionChangeRecord is truncated")
    return replicas, isr, leader
