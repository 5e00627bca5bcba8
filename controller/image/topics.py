"""Topics by id and by name, each with its partitions.

Rules:
- TopicImage and TopicsImage are never changed once built; TopicsDelta copies a topic's partition
  map the first time it touches that topic and mutates only its own copies.
- PartitionRecord/PartitionChangeRecord may arrive decoded or as raw frame values; raw values are kept
  lazily (partition id at bytes 3-7, topic id at 7-23 of the frame) and decoded on first read.
- Replaying a partition record for an unknown topic raises ImageReplayError, as Kafka's TopicsDelta.
- partition() keeps what it decodes (readers come back); write() does not (a snapshot reads everything once).
- Each TopicsImage answers which partitions have no leader and which a broker is in the ISR of or leads
  (partition_index), derived from the image it was made from: fencing reads those, not every partition.
- A topic loaded in bulk from a file may keep its partitions in that file (chunks: see chunks.py) until a
  change to it is replayed; readers see the same `partitions` mapping either way, read from the file and kept
  only among the recently read topics.
"""
from __future__ import annotations

import struct

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import uuid_str
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

from . import partition_text
from .chunks import recent
from .errors import ImageReplayError
from .partition_index import PartitionIndex
from .partitions import PartitionRegistration, is_minimal, materialize, merge_raw, record_as_written

_PARTITION_ID = struct.Struct(">i").unpack_from


class TopicImage:
    """One topic: name, id and partitions (partition id -> registration or lazy raw values)."""

    __slots__ = ("name", "topic_id", "_partitions", "chunks")

    def __init__(self, name: str, topic_id: bytes, partitions: dict | None = None, chunks: list | None = None):
        self.name = name
        self.topic_id = topic_id
        self._partitions = partitions if partitions is not None or chunks is not None else {}
        self.chunks = chunks

    @property
    def partitions(self) -> dict:
        """Return partition id -> entry; a topic kept in its file is read (and kept a while) on first use."""
        partitions = self._partitions
        if partitions is None:
            return recent.partitions(self, self.chunks)
        return partitions

    def own_partitions(self) -> dict:
        """Return the partitions as this topic's own dict, reading a topic kept in its file for good."""
        if self._partitions is None:
            self._partitions = dict(recent.partitions(self, self.chunks))
            self.chunks = None
            recent.forget(self)
        return self._partitions

    def add_chunk(self, chunk) -> bool:
        """Keep `chunk`'s partition records in their file; return False when the topic already holds partitions
        in memory (the caller replays the records instead)."""
        if self._partitions:
            return False
        if self.chunks is None:
            self._partitions, self.chunks = None, []
        else:
            recent.forget(self)
        self.chunks.append(chunk)
        return True

    def partition(self, partition_id: int) -> PartitionRegistration | None:
        """Return a partition's registration, decoding it (once) when kept raw."""
        entry = self.partitions.get(partition_id)
        if entry is not None and type(entry) is not PartitionRegistration:
            entry = self.partitions[partition_id] = materialize(entry)
        return entry

    def view_partition(self, partition_id: int) -> PartitionRegistration | None:
        """Return a partition's registration without keeping the decoded form (a reader walking every partition,
        such as the shell's `tree`, would otherwise turn the whole image into objects: +550 MB on 1M partitions)."""
        entry = self.partitions.get(partition_id)
        if entry is not None and type(entry) is not PartitionRegistration:
            return materialize(entry)
        return entry

    def partition_lines(self, before: str, middle: str, after: str) -> dict:
        """Return {partition name: f"{before}{name}{middle}{PartitionRegistration text}{after}"} of every partition
        without keeping decoded ones (the shell's tree), read straight from the records (partition_text)."""
        if self._partitions is None:
            return partition_text.chunk_lines(self.chunks, before, middle, after)
        return partition_text.lines(self._partitions, before, middle, after)

    def _topic_record(self) -> ApiMessageAndVersion:
        return ApiMessageAndVersion(codec.message_class("TopicRecord")(name=self.name, topic_id=self.topic_id), 0)

    def write(self):
        """Yield the TopicRecord and the PartitionRecords of this topic (raw partitions are decoded for the
        record but stay raw: a snapshot must not turn a whole image into objects the collector walks)."""
        yield self._topic_record()
        partitions, topic_id = self.partitions, self.topic_id
        for partition_id in sorted(partitions):
            entry = partitions[partition_id]
            if type(entry) is bytes:
                record = record_as_written(entry, topic_id, partition_id)
                if record is not None:
                    yield record
                    continue
            yield materialize(entry).to_record(topic_id, partition_id)


    def write_values(self):
        """Return write_metadata_record() of every record write() yields; a raw partition that is already
        exactly that value is given as it is, without encoding it again."""
        values = [write_metadata_record(self._topic_record())]
        append, partitions, topic_id = values.append, self.partitions, self.topic_id
        for partition_id in sorted(partitions):
            entry = partitions[partition_id]
            if type(entry) is bytes:
                record = record_as_written(entry, topic_id, partition_id)
                if record is not None:
                    append(entry if is_minimal(entry, record) else write_metadata_record(record))
                    continue
            append(write_metadata_record(materialize(entry).to_record(topic_id, partition_id)))
        return values


class TopicsImage:
    """All topics, indexed by id and by name; `index` says which partitions have no leader and where each broker is
    in an ISR or leads (partition_index), built when first read."""

    __slots__ = ("by_id", "by_name", "_index", "_derive")

    def __init__(self, by_id: dict | None = None, by_name: dict | None = None, derive=None):
        self.by_id = by_id if by_id is not None else {}
        self.by_name = by_name if by_name is not None else {}
        self._index = None
        self._derive = derive  # (an earlier image's index or None, topic ids changed since, ids removed since)

    @property
    def index(self) -> PartitionIndex:
        """Return the partition index of these topics (derived from an earlier image's when there is one)."""
        if self._index is None:
            base, changed, removed = self._derive or (None, (), ())
            self._index = PartitionIndex.build(self.by_id, base, changed, removed)
            self._derive = None
        return self._index

    def derived(self, changed, removed) -> tuple:
        """Return what an image made from this one by changing and removing these topic ids derives its index from:
        this index, or what this image would derive its own from; nothing once most topics changed."""
        if self._index is not None:
            base, before_changed, before_removed = self._index, (), ()
        elif self._derive is not None:
            base, before_changed, before_removed = self._derive
        else:
            return None
        changed, removed = set(before_changed) | set(changed), set(before_removed) | set(removed)
        return None if len(changed) > max(64, len(self.by_id) // 2) else (base, changed, removed)

    def is_empty(self) -> bool:
        """Tell whether there is no topic."""
        return not self.by_id

    def write(self):
        """Yield every topic's records, topics by name."""
        for name in sorted(self.by_name):
            yield from self.by_name[name].write()

    def write_values(self):
        """Yield write_metadata_record() of every record write() yields (see TopicImage.write_values)."""
        for name in sorted(self.by_name):
            yield from self.by_name[name].write_values()


class TopicsDelta:
    """Collect topic and partition changes on top of a TopicsImage."""

    def __init__(self, image: TopicsImage):
        self.image = image
        self.changed: dict[bytes, TopicImage] = {}
        self.removed: dict[bytes, str] = {}

    def _topic(self, topic_id: bytes, what: str) -> TopicImage:
        topic = self.changed.get(topic_id)
        if topic is not None:
            return topic
        base = None if topic_id in self.removed else self.image.by_id.get(topic_id)
        if base is None:
            raise ImageReplayError(f"Unable to replay {what}: no topic with id {uuid_str(topic_id)} found")
        if base._partitions is None:
            topic = TopicImage(base.name, base.topic_id, None, list(base.chunks))
        else:
            topic = TopicImage(base.name, base.topic_id, dict(base._partitions))
        self.changed[topic_id] = topic
        return topic

    def _owned(self, topic_id: bytes, what: str) -> dict:
        return self._topic(topic_id, what).own_partitions()

    def replay_topic(self, message) -> None:
        """Apply TopicRecord: a new topic with no partitions."""
        topic_id = bytes(message.topic_id)
        self.changed[topic_id] = TopicImage(message.name, topic_id, {})

    def replay_remove_topic(self, message) -> None:
        """Apply RemoveTopicRecord."""
        topic = self._topic(bytes(message.topic_id), "RemoveTopicRecord")
        del self.changed[topic.topic_id]
        self.removed[topic.topic_id] = topic.name

    def replay_partition(self, message, version: int) -> None:
        """Apply a decoded PartitionRecord (replaces any existing partition)."""
        partitions = self._owned(bytes(message.topic_id), "PartitionRecord")
        partitions[message.partition_id] = PartitionRegistration.from_record(message, version)

    def replay_partition_raw(self, value: bytes) -> None:
        """Apply a PartitionRecord given as its frame value, decoding it only when read."""
        topic_id = value[7:23]
        topic = self.changed.get(topic_id) or self._topic(topic_id, "PartitionRecord")
        partitions = topic._partitions
        if partitions is None:
            partitions = topic.own_partitions()
        partitions[_PARTITION_ID(value, 3)[0]] = value

    def add_chunk(self, topic_id: bytes, chunk) -> bool:
        """Apply the PartitionRecords of `chunk` (all of topic `topic_id`) by keeping them in their file; return
        False when they must be replayed one by one (unknown topic, or partitions already in memory)."""
        topic = self.changed.get(topic_id)
        if topic is None:
            try:
                topic = self._topic(topic_id, "PartitionRecord")
            except ImageReplayError:
                return False
        return topic.add_chunk(chunk)

    def replay_partition_change(self, message) -> None:
        """Apply a decoded PartitionChangeRecord."""
        partitions = self._owned(bytes(message.topic_id), "PartitionChangeRecord")
        current = partitions.get(message.partition_id)
        if current is None:
            raise ImageReplayError(f"Unable to replay PartitionChangeRecord: no partition "
                                   f"{message.partition_id} in topic {uuid_str(message.topic_id)}")
        partitions[message.partition_id] = materialize(current).merge(message)

    def replay_partition_change_raw(self, value: bytes) -> None:
        """Apply a PartitionChangeRecord given as its frame value."""
        topic_id, partition_id = value[7:23], _PARTITION_ID(value, 3)[0]
        partitions = self._owned(topic_id, "PartitionChangeRecord")
        partitions[partition_id] = merge_raw(partitions.get(partition_id), value, topic_id, partition_id)

    def replay_clear_elr(self, message) -> None:
        """Apply ClearElrRecord: empty ELR and last known ELR of one topic (by name) or of all topics."""
        if message.topic_name:
            topic = self._find_by_name(message.topic_name)
            topics = [] if topic is None else [topic]
        else:
            topics = [t for t in self._all_topic_ids()]
        change_cls = codec.message_class("PartitionChangeRecord")
        for topic_id in topics:
            partitions = self._owned(topic_id, "ClearElrRecord")
            for partition_id, entry in list(partitions.items()):
                registration = materialize(entry)
                if registration.elr or registration.last_known_elr:
                    change = change_cls(partition_id=partition_id, topic_id=topic_id, eligible_leader_replicas=[],
                                        last_known_elr=[])
                    partitions[partition_id] = registration.merge(change)

    def _all_topic_ids(self):
        ids = [t for t in self.image.by_id if t not in self.removed and t not in self.changed]
        return ids + list(self.changed)

    def _find_by_name(self, name: str):
        for topic in self.changed.values():
            if topic.name == name:
                return topic.topic_id
        topic = self.image.by_name.get(name)
        if topic is not None and topic.topic_id not in self.removed:
            return topic.topic_id
        return None

    def apply(self) -> TopicsImage:
        """Return the resulting TopicsImage (the delta must not be replayed into afterwards)."""
        if not self.changed and not self.removed:
            return self.image
        by_id = dict(self.image.by_id)
        by_name = dict(self.image.by_name)
        for topic_id, name in self.removed.items():
            by_id.pop(topic_id, None)
            if name in by_name and by_name[name].topic_id == topic_id:
                del by_name[name]
        for topic_id, topic in self.changed.items():
            old = by_id.get(topic_id)
            if old is not None and old.name != topic.name and by_name.get(old.name) is old:
                del by_name[old.name]
            by_id[topic_id] = by_name[topic.name] = topic
        return TopicsImage(by_id, by_name, self.image.derived(self.changed, self.removed))
