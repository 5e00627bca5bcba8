"""PartitionRegistration: one partition's state, built from a PartitionRecord and merged with changes.

Rules:
- merge() follows Kafka 3.9's PartitionRegistration.merge: a null field means "no change", a leader
  of -2 means "unchanged", a new leader bumps the leader epoch, every change bumps the partition epoch.
- Directories default to UNASSIGNED per replica; ELR fields keep None apart from [] so that
  write() gives back the record that was read.
- Large images keep partitions as their raw record values (bytes, or a LazyPartition with changes)
  until first read; writing an image decodes a raw PartitionRecord and yields it as read when that is
  the record to_record() would build (record_as_written).
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion, read_metadata_record

from . import render
from .errors import ImageReplayError

NO_LEADER_CHANGE = -2
UNASSIGNED = bytes(16)
LEADER_RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
MAX_PENDING_CHANGES = 16


class PartitionRegistration:
    """The state of one partition, printed like Kafka's PartitionRegistration.toString()."""

    __slots__ = ("replicas", "directories", "isr", "removing_replicas", "adding_replicas", "elr",
                 "last_known_elr", "leader", "leader_recovery_state", "leader_epoch", "partition_epoch",
                 "version")

    @classmethod
    def from_record(cls, record, version: int) -> "PartitionRegistration":
        """Build from a PartitionRecord message."""
        self = cls.__new__(cls)
        self.replicas = list(record.replicas)
        dirs = record.directories if version >= 1 else None
        self.directories = list(dirs) if dirs else [UNASSIGNED] * len(self.replicas)
        self.isr = list(record.isr)
        self.removing_replicas = list(record.removing_replicas)
        self.adding_replicas = list(record.adding_replicas)
        self.elr = getattr(record, "eligible_leader_replicas", None)
        self.last_known_elr = getattr(record, "last_known_elr", None)
        self.leader = record.leader
        self.leader_recovery_state = record.leader_recovery_state
        self.leader_epoch = record.leader_epoch
        self.partition_epoch = record.partition_epoch
        self.version = version
        return self

    def merge(self, change) -> "PartitionRegistration":
        """Return a new registration with a PartitionChangeRecord applied."""
        new = PartitionRegistration.__new__(PartitionRegistration)
        replicas = self.replicas if change.replicas is None else list(change.replicas)
        new.replicas = replicas
        new.directories = _merge_directories(self, change, replicas)
        new.isr = self.isr if change.isr is None else list(change.isr)
        new.removing_replicas = _pick(self.removing_replicas, change.removing_replicas)
        new.adding_replicas = _pick(self.adding_replicas, change.adding_replicas)
        new.elr = _pick(self.elr, getattr(change, "eligible_leader_replicas", None))
        new.last_known_elr = _pick(self.last_known_elr, getattr(change, "last_known_elr", None))
        if change.leader == NO_LEADER_CHANGE:
            new.leader, new.leader_epoch = self.leader, self.leader_epoch
        else:
            new.leader, new.leader_epoch = change.leader, self.leader_epoch + 1
        lrs = change.leader_recovery_state
        new.leader_recovery_state = self.leader_recovery_state if lrs == -1 else lrs
        new.partition_epoch = self.partition_epoch + 1
        new.version = self.version
        return new

    def __str__(self) -> str:
        lrs = LEADER_RECOVERY_STATES.get(self.leader_recovery_state, str(self.leader_recovery_state))
        return (f"PartitionRegistration(replicas={render.int_list(self.replicas)}, "
                f"directories={render.uuid_list(self.directories)}, isr={render.int_list(self.isr)}, "
                f"removingReplicas={render.int_list(self.removing_replicas)}, "
                f"addingReplicas={render.int_list(self.adding_replicas)}, "
                f"elr={render.int_list(self.elr or ())}, lastKnownElr={render.int_list(self.last_known_elr or ())}, "
                f"leader={self.leader}, leaderRecoveryState={lrs}, leaderEpoch={self.leader_epoch}, "
                f"partitionEpoch={self.partition_epoch})")

    def to_record(self, topic_id: bytes, partition_id: int) -> ApiMessageAndVersion:
        """Return the PartitionRecord that recreates this partition."""
        version = self.version
        if self.elr or self.last_known_elr:
            version = max(version, 2)
        elif any(d != UNASSIGNED for d in self.directories):
            version = max(version, 1)
        cls = codec.message_class("PartitionRecord")
        record = cls(partition_id=partition_id, topic_id=topic_id, replicas=list(self.replicas),
                     isr=list(self.isr), removing_replicas=list(self.removing_replicas),
                     adding_replicas=list(self.adding_replicas), leader=self.leader,
                     leader_recovery_state=self.leader_recovery_state, leader_epoch=self.leader_epoch,
                     partition_epoch=self.partition_epoch,
                     directories=list(self.directories) if version >= 1 else [],
                     eligible_leader_replicas=self.elr if version >= 2 else None,
                     last_known_elr=self.last_known_elr if version >= 2 else None)
        return ApiMessageAndVersion(record, version)


def _pick(current, change):
    return current if change is None else list(change)


def _merge_directories(current: PartitionRegistration, change, replicas) -> list:
    directories = getattr(change, "directories", None)
    if directories:
        return list(directories)
    if change.replicas is None:
        return current.directories
    by_replica = dict(zip(current.replicas, current.directories))
    return [by_replica.get(r, UNASSIGNED) for r in replicas]


class LazyPartition:
    """A partition kept as raw record values (a PartitionRecord then PartitionChangeRecords)."""

    __slots__ = ("values",)

    def __init__(self, values: list):
        self.values = values

    def materialize(self) -> PartitionRegistration:
        """Decode the values and fold the changes into a PartitionRegistration."""
        first = read_metadata_record(self.values[0])
        registration = PartitionRegistration.from_record(first.message, first.version)
        for value in self.values[1:]:
            registration = registration.merge(read_metadata_record(value).message)
        return registration


def materialize(entry) -> PartitionRegistration:
    """Return the PartitionRegistration of a stored entry: raw value, LazyPartition or registration."""
    kind = type(entry)
    if kind is bytes:
        return LazyPartition([entry]).materialize()
    if kind is LazyPartition:
        return entry.materialize()
    return entry


def record_as_written(value: bytes, topic_id: bytes, partition_id: int) -> ApiMessageAndVersion | None:
    """Return a raw PartitionRecord value decoded, when it equals to_record() of its registration (no unknown
    tagged fields, the entry's own ids, a directory per replica from version 1; ELR kept as read): the
    record write() yields without building the registration. Else None."""
    record = read_metadata_record(value)
    message = record.message
    if (message._unknown_tagged_fields is not None or message.partition_id != partition_id
            or message.topic_id != topic_id
            or record.version >= 1 and len(message.directories) != len(message.replicas)):
        return None
    return record


def _usize(n: int) -> int:
    return 1 if n < 0x80 else 2 if n < 0x4000 else 3 if n < 0x200000 else 4 if n < 0x10000000 else 5


def is_minimal(value: bytes, record: ApiMessageAndVersion) -> bool:
    """Tell whether a PartitionRecord v0/v1 frame value is the minimal encoding of its decoded record, hence
    the bytes write_metadata_record() gives for it: v0/v1 know one tagged field, so a value can only differ
    by padded varints or a default-valued tag, and either makes it longer than this size."""
    if record.version > 1:
        return False
    m = record.message
    size = 3 + 4 + 16 + 12 + 1  # frame header, partition id, topic id, leader and epochs, tag count
    for array in (m.replicas, m.isr, m.removing_replicas, m.adding_replicas):
        size += _usize(len(array) + 1) + 4 * len(array)
    if record.version == 1:
        size += _usize(len(m.directories) + 1) + 16 * len(m.directories)
    if m.leader_recovery_state != 0:
        size += 3  # tag 0, size 1, one byte
    return len(value) == size


def merge_raw(entry, value: bytes, topic_id, partition_id: int):
    """Return the entry with a raw PartitionChangeRecord value appended or merged."""
    if entry is None:
        raise ImageReplayError(f"Unable to replay PartitionChangeRecord: no partition {partition_id} "
                               f"in topic {render.uuid_str(topic_id)}")
    if type(entry) is bytes:
        return LazyPartition([entry, value])
    if type(entry) is LazyPartition:
        if len(entry.values) < MAX_PENDING_CHANGES:
            return LazyPartition(entry.values + [value])
        entry = entry.materialize()
    return entry.merge(read_metadata_record(value).message)
