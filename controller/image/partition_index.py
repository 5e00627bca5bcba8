"""PartitionIndex: which partitions have no leader or not their preferred one, and which ones each broker is in the
ISR or ELR of or leads (Kafka's BrokersToIsrs, BrokersToElrs and imbalancedPartitions), so that fencing,
unfencing, controlled shutdown, unregistration, an unclean shutdown and leader balancing read the partitions they
change instead of every partition of the image.

Rules:
- An index belongs to one TopicsImage and is built when first asked for: from the index of an image it derives
  from, with the topics changed or removed since then read again, else from every topic.
- A topic's entry is read from its partitions without keeping decoded registrations in the image.
- The index only narrows a search: callers check the partitions it names against the image as before, so that a
  stale entry can never change a result, only the time it takes.
"""
from __future__ import annotations

import functools
import struct

from kraftsman.storage.protocol.layout import Layout, Layouts

from .partitions import PartitionRegistration, materialize

NO_LEADER = -1
PARTITION_RECORD, FRAME_HEAD = 3, 3
_layouts = Layouts()


def leader_and_isr(entry) -> tuple[int, tuple]:
    """Return (leader, ISR) of a partition entry (see roles)."""
    return roles(entry)[:2]


def roles(entry) -> tuple[int, tuple, tuple, int]:
    """Return (leader, ISR, ELR, preferred replica or -1) of a partition entry; a raw PartitionRecord value is read
    through its layout (one struct unpack), anything else is materialized."""
    if type(entry) is bytes and len(entry) > FRAME_HEAD and entry[0] == 1 and entry[1] == PARTITION_RECORD \
            and entry[2] < 128:
        layout = _layouts.of("PartitionRecord", entry[2], entry, FRAME_HEAD, len(entry))
        if layout is not None:
            return _reader(layout)(entry)
    registration = entry if type(entry) is PartitionRegistration else materialize(entry)
    replicas = registration.replicas
    return registration.leader, registration.isr, tuple(registration.elr or ()), replicas[0] if replicas else -1


@functools.lru_cache(maxsize=256)
def _reader(layout: Layout):
    """Return fn(value) -> (leader, ISR, ELR, preferred replica) for values of `layout`."""
    items = [s.field.name for s in layout.items]
    unpack = struct.Struct(f">{FRAME_HEAD}x{layout.codes}").unpack
    leader = items.index("Leader")
    isr, elr, replicas = (items.index(name) if name in items else None
                          for name in ("Isr", "EligibleLeaderReplicas", "Replicas"))
    ints, first, int32 = _ints, _first_int, _INT32
    if elr is None and isr is not None and replicas is not None:  # the common layout: no ELR field
        def read(value) -> tuple[int, tuple, tuple, int]:
            fields = unpack(value)
            raw = fields[replicas]
            return fields[leader], ints(fields[isr]), (), int32(raw)[0] if raw else -1
        return read

    def read_all(value) -> tuple[int, tuple, tuple, int]:
        fields = unpack(value)
        return (fields[leader], () if isr is None else ints(fields[isr]),
                () if elr is None or fields[elr] is None else ints(fields[elr]),
                -1 if replicas is None else first(fields[replicas]))
    return read_all


_INT32 = struct.Struct(">i").unpack_from


def _first_int(raw: bytes) -> int:
    """Return the first big-endian int32 of `raw`, -1 when it is empty."""
    return _INT32(raw)[0] if raw else -1


def _ints(raw: bytes) -> tuple:
    """Return the big-endian int32s of `raw`."""
    return struct.unpack(f">{len(raw) // 4}i", raw)


class TopicEntry:
    """One topic's partitions by role: no leader, led by a broker, in a broker's ISR."""

    __slots__ = ("leaderless", "leaders", "isr", "elr", "imbalanced")

    def __init__(self, partitions: dict):
        self.leaderless: list[int] = []
        self.leaders: dict[int, list[int]] = {}
        self.isr: dict[int, list[int]] = {}
        self.elr: dict[int, list[int]] = {}
        self.imbalanced: list[int] = []  # the leader is not the preferred replica (none counts as not)
        for partition_id, entry in partitions.items():
            leader, isr, elr, preferred = roles(entry)
            if leader != preferred:
                self.imbalanced.append(partition_id)
            if leader == NO_LEADER:
                self.leaderless.append(partition_id)
            else:
                self.leaders.setdefault(leader, []).append(partition_id)
            for broker in isr:
                self.isr.setdefault(broker, []).append(partition_id)
            for broker in elr:
                self.elr.setdefault(broker, []).append(partition_id)


class PartitionIndex:
    """The TopicEntry of every topic of one TopicsImage, by topic id."""

    __slots__ = ("entries",)

    def __init__(self, entries: dict):
        self.entries = entries

    @classmethod
    def build(cls, by_id: dict, base: "PartitionIndex | None" = None, changed=(), removed=()) -> "PartitionIndex":
        """Return the index of the topics `by_id`: `base` with the `changed` and `removed` topic ids read again,
        or every topic read when there is no base."""
        if base is None:
            return cls({topic_id: TopicEntry(topic.partitions) for topic_id, topic in by_id.items()})
        entries = dict(base.entries)
        for topic_id in removed:
            entries.pop(topic_id, None)
        for topic_id in changed:
            topic = by_id.get(topic_id)
            if topic is None:
                entries.pop(topic_id, None)
            else:
                entries[topic_id] = TopicEntry(topic.partitions)
        return cls(entries)

    def leaderless(self) -> dict[bytes, list[int]]:
        """Return {topic id: partition ids} of the partitions without a leader."""
        return {topic_id: e.leaderless for topic_id, e in self.entries.items() if e.leaderless}

    def imbalanced(self) -> dict[bytes, list[int]]:
        """Return {topic id: partition ids} of the partitions not led by their preferred replica (Kafka's
        imbalancedPartitions)."""
        return {topic_id: e.imbalanced for topic_id, e in self.entries.items() if e.imbalanced}

    def in_isr(self, broker_id: int) -> dict[bytes, list[int]]:
        """Return {topic id: partition ids} of the partitions whose ISR holds `broker_id`."""
        return {topic_id: e.isr[broker_id] for topic_id, e in self.entries.items() if broker_id in e.isr}

    def in_elr(self, broker_id: int) -> dict[bytes, list[int]]:
        """Return {topic id: partition ids} of the partitions whose ELR holds `broker_id`."""
        return {topic_id: e.elr[broker_id] for topic_id, e in self.entries.items() if broker_id in e.elr}

    def leads_any(self, broker_id: int) -> bool:
        """Tell whether `broker_id` leads some partition."""
        return any(broker_id in e.leaders for e in self.entries.values())
