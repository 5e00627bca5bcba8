"""Partition state changes: Kafka's PartitionChangeBuilder (3.9, and 4.x's eligible leader replicas), new
PartitionRecords and broker liveness.

Rules:
- PartitionChangeBuilder starts from a registration with every target equal to the current state; the
  caller sets targets (ISR, replicas, adding/removing, election) and build() returns one
  PartitionChangeRecord, or None when nothing would change (Kafka's changeRecordIsNoOp).
- build() order is Kafka's: complete a reassignment once the ISR minus the removing replicas holds every
  remaining replica (PartitionReassignmentReplicas.maybeCompleteReassignment), fill the target ELR, elect a
  leader, bump the leader epoch when replicas are removed, write the ELR, set the ISR, bump the leader epoch on
  an ISR shrink before 3.6-IV0 (KAFKA-15021), write the last known leader, then the assignment changes
  (directories only when metadata.version supports them: on a replicas change, or when target_directories,
  Kafka's setDirectory, moves a replica to another directory).
- A valid new leader is in the target ISR (or, the target ISR empty, in the target ELR) and acceptable
  (registered, unfenced, not shutting down, unless the caller's predicate says otherwise). Unclean election
  picks the first acceptable replica, sets the ISR to it alone and the leader recovery state to RECOVERING.
- Eligible leader replicas (KIP-966, on while eligible.leader.replicas.version >= 1: use_elr()), as Kafka 4.1+
  does with its last-known-leader recovery always on: while the target ISR is below the topic's effective
  min.insync.replicas, the members leaving it join the ELR (in java.util.HashSet order) unless they shut down
  uncleanly, and the ISR may become empty; at or above it, ELR and last known ELR are emptied. A leader taken
  from the ELR becomes the ISR alone. A partition left leaderless records its last leader as LastKnownElr; with
  ISR and ELR empty that one replica may lead again (an unclean election: RECOVERING), without
  unclean.leader.election.enable; any new leader empties LastKnownElr. With ELR off (3.9), a stored ELR is
  emptied and the ISR is never set empty.
- Record versions follow metadata.version: PartitionRecord/PartitionChangeRecord v1 (directories) from
  3.7-IV2 (level 17), v0 before, v2 from 4.0-IV1 (level 23; real logs: levels 19-21 write v1, 25-29 v2).
"""
from __future__ import annotations

from collections.abc import Callable

from kraftsman.controller.image.image import MetadataImage
from kraftsman.controller.image.partitions import NO_LEADER_CHANGE, UNASSIGNED, PartitionRegistration
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion
from kraftsman.storage.records.partition_writer import PARTITION_RECORD  # PartitionRecord's api key

from .feature_levels import DIRECTORY_ASSIGNMENT_LEVEL  # metadata.version 3.7-IV2
from .java_hash_order import JavaHashMap, int_hash

NO_LEADER = -1
RECOVERED, RECOVERING = 0, 1
MIGRATING = Uuid.from_longs(0, 2)  # DirectoryId.MIGRATING: a broker that registered no log directory
ELR_LEVEL = 23                     # 4.0-IV1: version 2 records (ELR fields)
ELR_FEATURE = "eligible.leader.replicas.version"
MIN_ISR = "min.insync.replicas"
NO_ISR_SHRINK_BUMP_LEVEL = 12      # 3.6-IV0: no more leader epoch bump on ISR shrink (KAFKA-15021)
LEADER_RECOVERY_LEVEL = 3          # 3.2-IV0: leader recovery state
PREFERRED, ONLINE, UNCLEAN = "PREFERRED", "ONLINE", "UNCLEAN"

_CHANGE = codec.message_class("PartitionChangeRecord")
_PARTITION = codec.message_class("PartitionRecord")


def is_active(image: MetadataImage, broker_id: int) -> bool:
    """Tell whether a broker is registered, unfenced and not in controlled shutdown (Kafka's isActive)."""
    registration = image.cluster.brokers.get(broker_id)
    if registration is None:
        return False
    record = registration.record
    return not record.fenced and not record.in_controlled_shutdown


def default_dir(image: MetadataImage, broker_id: int) -> bytes:
    """Return the directory a new replica on `broker_id` gets (ClusterControlManager.defaultDir)."""
    registration = image.cluster.brokers.get(broker_id)
    if registration is None:
        return UNASSIGNED
    dirs = registration.record.log_dirs or []
    if not dirs:
        return MIGRATING
    return bytes(dirs[0]) if len(dirs) == 1 else UNASSIGNED


def active_brokers(image: MetadataImage) -> set[int]:
    """Return the ids of every active broker (unfenced, not shutting down)."""
    return {b for b, reg in image.cluster.brokers.items()
            if not reg.record.fenced and not reg.record.in_controlled_shutdown}


def default_dirs(image: MetadataImage) -> dict[int, bytes]:
    """Return default_dir() of every registered broker."""
    return {b: default_dir(image, b) for b in image.cluster.brokers}


def record_version(image: MetadataImage) -> int:
    """Return the PartitionRecord / PartitionChangeRecord version metadata.version asks for."""
    level = image.features.metadata_version_level
    if level >= ELR_LEVEL:
        return 2
    return 1 if level >= DIRECTORY_ASSIGNMENT_LEVEL else 0


def new_partition_record(image: MetadataImage, topic_id: bytes, partition_id: int, replicas: list,
                         isr: list, dirs: dict | None = None) -> ApiMessageAndVersion:
    """Return the PartitionRecord of a new partition: leader = first ISR member, epochs 0 (dirs: default_dirs)."""
    version = record_version(image)
    if version >= 1:
        dirs = default_dirs(image) if dirs is None else dirs
        directories = [dirs.get(r, UNASSIGNED) for r in replicas]
    else:
        directories = []
    message = _PARTITION(partition_id=partition_id, topic_id=topic_id, replicas=list(replicas), isr=list(isr),
                         removing_replicas=[], adding_replicas=[], leader=isr[0], leader_recovery_state=RECOVERED,
                         leader_epoch=0, partition_epoch=0, directories=directories)
    return ApiMessageAndVersion(message, version)


def new_partition_records(image: MetadataImage, topic_id: bytes, first_id: int, parts, dirs: dict | None = None,
                          version: int | None = None) -> list[ApiMessageAndVersion]:
    """Return new_partition_record() of partitions first_id, first_id + 1... from (replicas, isr) pairs, with
    the version and directories looked up once; the records take the pairs' lists (callers pass fresh ones)."""
    version = record_version(image) if version is None else version
    if version >= 1:
        get = (default_dirs(image) if dirs is None else dirs).get
    template = _PARTITION(topic_id=topic_id, leader_epoch=0, partition_epoch=0)  # copied: fresh lists set below
    copy = template.__copy__
    out = []
    append = out.append
    for partition_id, (replicas, isr) in enumerate(parts, first_id):
        message = copy()
        message.partition_id, message.replicas, message.isr, message.leader = partition_id, replicas, isr, isr[0]
        message.removing_replicas, message.adding_replicas = [], []
        message.directories = [get(r, UNASSIGNED) for r in replicas] if version >= 1 else []
        append(ApiMessageAndVersion(message, version, PARTITION_RECORD))
    return out


class PartitionChangeBuilder:
    """Build the PartitionChangeRecord that moves one partition to its targets."""

    def __init__(self, image: MetadataImage, partition: PartitionRegistration, topic_id: bytes, partition_id: int,
                 acceptable: Callable[[int], bool] | None = None):
        self.image, self.partition = image, partition
        self.topic_id, self.partition_id = topic_id, partition_id
        self.acceptable = acceptable or (lambda r: is_active(image, r))
        self.target_isr = list(partition.isr)
        self.target_replicas = list(partition.replicas)
        self.target_removing = list(partition.removing_replicas)
        self.target_adding = list(partition.adding_replicas)
        self.target_lrs = partition.leader_recovery_state
        self.target_directories: dict[int, bytes] = {}  # replica -> directory (Kafka's setDirectory)
        self.election = ONLINE
        self.elr_enabled, self.min_isr = False, 1
        self.target_elr = list(partition.elr or ())
        self.target_last_known_elr = list(partition.last_known_elr or ())
        self.unclean_shutdown_replicas: list | None = None

    def use_elr(self, min_isr: int) -> "PartitionChangeBuilder":
        """Maintain eligible leader replicas against the topic's effective min.insync.replicas (see Rules)."""
        self.elr_enabled, self.min_isr = True, min_isr
        return self

    def build(self) -> ApiMessageAndVersion | None:
        """Return the change record, or None when the targets equal the current state."""
        record = _CHANGE(partition_id=self.partition_id, topic_id=self.topic_id)
        self._complete_reassignment_if_needed()
        self._populate_target_elr()
        self._try_election(record)
        self._bump_epoch_if_replicas_removed(record)
        self._update_record_elr(record)
        if record.isr is None and (self.target_isr or self.elr_enabled) and self.target_isr != self.partition.isr:
            record.isr = list(self.target_isr)
        self._bump_epoch_on_isr_shrink_if_needed(record)
        self._update_last_known_leader(record)
        self._set_assignment_changes(record)
        if self.target_lrs != self.partition.leader_recovery_state and record.leader_recovery_state == -1:
            record.leader_recovery_state = self.target_lrs
        if _is_no_op(record):
            return None
        return ApiMessageAndVersion(record, record_version(self.image))

    def _complete_reassignment_if_needed(self) -> None:
        removing, adding = self.target_removing, self.target_adding
        if not removing and not adding:
            return
        new_isr = [r for r in self.target_isr if r not in removing]
        new_replicas = [r for r in self.target_replicas if r not in removing]
        if not new_isr or not new_replicas or not set(new_replicas) <= set(new_isr):
            return
        self.target_isr, self.target_replicas = new_isr, new_replicas
        self.target_removing, self.target_adding = [], []

    def _valid_new_leader(self, replica: int) -> bool:
        if replica == NO_LEADER:
            return False
        eligible = replica in self.target_isr or (not self.target_isr and replica in self.target_elr)
        return eligible and self.acceptable(replica)

    def _elect(self) -> tuple[int, bool]:
        current = self.partition.leader
        if self.election == PREFERRED:
            preferred = self.target_replicas[0] if self.target_replicas else NO_LEADER
            if self._valid_new_leader(preferred):
                return preferred, False
        if self._valid_new_leader(current):
            return current, False
        for replica in self.target_replicas:
            if self._valid_new_leader(replica):
                return replica, False
        if self._can_elect_last_known_leader():
            return self.partition.last_known_elr[0], True
        if self.election == UNCLEAN:
            for replica in self.target_replicas:
                if self.acceptable(replica):
                    return replica, True
        return NO_LEADER, False

    def _can_elect_last_known_leader(self) -> bool:
        """Tell whether the partition's one last known leader may lead again (ISR and ELR empty, see Rules)."""
        if not self.elr_enabled or self.target_elr or self.target_isr:
            return False
        last = self.partition.last_known_elr or ()
        return len(last) == 1 and self.acceptable(last[0])

    def _try_election(self, record) -> None:
        leader, unclean = self._elect()
        if leader == self.partition.leader:
            return
        if leader in self.target_elr:
            self.target_isr = [leader]
            self.target_elr = [r for r in self.target_elr if r != leader]
        record.leader = leader
        if unclean:
            record.isr = [leader]
            level = self.image.features.metadata_version_level
            if self.partition.leader_recovery_state != RECOVERING and level >= LEADER_RECOVERY_LEVEL:
                record.leader_recovery_state = RECOVERING

    def _bump_epoch_if_replicas_removed(self, record) -> None:
        if record.leader != NO_LEADER_CHANGE:
            return
        if not set(self.target_replicas) >= set(self.partition.replicas):
            record.leader = self.partition.leader

    def _populate_target_elr(self) -> None:
        """Kafka's maybePopulateTargetElr: who leaves an ISR below min ISR joins the ELR (see Rules)."""
        if not self.elr_enabled:
            return
        if len(self.target_isr) >= self.min_isr:
            self.target_elr, self.target_last_known_elr = [], []
            return
        isr, unclean = set(self.target_isr), set(self.unclean_shutdown_replicas or ())
        candidates = _int_hash_set(self.target_elr)
        for replica in self.partition.isr:
            candidates.put(replica, True)
        self.target_elr = [r for r in candidates.keys() if r not in isr and r not in unclean]
        for replica in self.target_last_known_elr:
            candidates.put(replica, True)
        elr = set(self.target_elr)
        self.target_last_known_elr = [r for r in candidates.keys() if r not in isr and r not in elr]

    def _update_record_elr(self, record) -> None:
        """Kafka's maybeUpdateRecordElr: write the ELR when it changes (an unclean election or ELR off empties it)."""
        if record.isr is not None or not self.elr_enabled:
            self.target_elr, self.target_last_known_elr = [], []
        if self.target_elr != list(self.partition.elr or ()) and record_version(self.image) >= 2:
            record.eligible_leader_replicas = list(self.target_elr)

    def _update_last_known_leader(self, record) -> None:
        """Kafka's maybeUpdateLastKnownLeader: a partition left leaderless keeps its last leader; a new leader
        clears it."""
        if not self.elr_enabled:
            return
        last = self.partition.last_known_elr or ()
        if record.leader == NO_LEADER and not last:
            record.last_known_elr = [self.partition.leader]
        elif record.leader >= 0 and last:
            record.last_known_elr = []

    def _bump_epoch_on_isr_shrink_if_needed(self, record) -> None:
        if self.image.features.metadata_version_level >= NO_ISR_SHRINK_BUMP_LEVEL:
            return
        if record.leader == NO_LEADER_CHANGE and record.isr is not None and not set(record.isr) >= set(
                self.partition.isr):
            record.leader = self.partition.leader

    def _set_assignment_changes(self, record) -> None:
        partition = self.partition
        replicas_change = bool(self.target_replicas) and self.target_replicas != partition.replicas
        if (replicas_change or self.target_directories) and record_version(self.image) >= 1:
            current = dict(zip(partition.replicas, partition.directories))
            current.update(self.target_directories)
            directories = [current[r] if r in current else default_dir(self.image, r) for r in self.target_replicas]
            if replicas_change or directories != partition.directories:
                record.directories = directories
        if replicas_change:
            record.replicas = list(self.target_replicas)
        if self.target_removing != partition.removing_replicas:
            record.removing_replicas = list(self.target_removing)
        if self.target_adding != partition.adding_replicas:
            record.adding_replicas = list(self.target_adding)


def _is_no_op(record) -> bool:
    return (record.isr is None and record.leader == NO_LEADER_CHANGE and record.replicas is None
            and record.removing_replicas is None and record.adding_replicas is None
            and record.leader_recovery_state == -1 and record.directories is None
            and record.eligible_leader_replicas is None and record.last_known_elr is None)


def _int_hash_set(first: list) -> JavaHashMap:
    """Return a java.util.HashSet<Integer> built as `new HashSet<>(first)` (its keys iterate in Java's order)."""
    table = JavaHashMap(max(int(len(first) / 0.75) + 1, 16), hash_of=int_hash)
    for replica in first:
        table.put(replica, True)
    return table


def elr_enabled(image: MetadataImage) -> bool:
    """Tell whether eligible leader replicas are on (FeatureControlManager.isElrFeatureEnabled)."""
    return image.features.finalized.get(ELR_FEATURE, 0) >= 1


def effective_min_isr(image: MetadataImage, topic, default: int, node_id: int | None = None) -> int:
    """Return Kafka's getTopicEffectiveMinIsr: the topic's min.insync.replicas (topic config, this controller's
    dynamic config, the cluster default, else `default`), at most partition 0's replica count."""
    configs = image.configs.resources
    value = configs.get((2, topic.name), {}).get(MIN_ISR)
    if value is None and node_id is not None:
        value = configs.get((4, str(node_id)), {}).get(MIN_ISR)
    if value is None:
        value = configs.get((4, ""), {}).get(MIN_ISR)
    min_isr = default if value is None else int(value)
    first = topic.partition(0)
    return min(min_isr, len(first.replicas)) if first is not None else min_isr


def change_builder(ctx, topic, partition_id: int, partition: PartitionRegistration,
                   acceptable: Callable[[int], bool] | None = None, min_isrs: dict | None = None):
    """Return a PartitionChangeBuilder for `partition` of `topic` (a TopicImage) with ELR on when the cluster has
    it (every caller but AssignReplicasToDirs, as in Kafka); `min_isrs` keeps each topic's effective min ISR
    across the partitions of one run."""
    image = ctx.image
    builder = PartitionChangeBuilder(image, partition, topic.topic_id, partition_id, acceptable)
    if elr_enabled(image):
        cache = {} if min_isrs is None else min_isrs
        if topic.topic_id not in cache:
            cache[topic.topic_id] = effective_min_isr(image, topic, ctx.config.min_insync_replicas, ctx.node_id)
        builder.use_elr(cache[topic.topic_id])
    return builder


def unclean_enabled(image: MetadataImage, default: bool, topic_name: str) -> bool:
    """Tell whether unclean leader election is on for a topic (topic config, else the cluster default)."""
    value = image.configs.resources.get((2, topic_name), {}).get("unclean.leader.election.enable")
    if value is None:
        value = image.configs.resources.get((4, ""), {}).get("unclean.leader.election.enable")
    return default if value is None else value.strip().lower() == "true"
