"""AssignReplicasToDirs (KIP-858, JBOD in KRaft): a broker tells the controller which log directory holds each
of its replicas (Kafka 3.9's ReplicationControlManager.handleAssignReplicasToDirs).

Rules:
- Whole-request errors go in the top-level ErrorCode with no directories (Kafka throws and its
  getErrorResponse answers): metadata.version below 3.7-IV2 (level 17) -> UNSUPPORTED_VERSION; a broker
  that is not registered, or registered with another epoch -> STALE_BROKER_EPOCH (checkBrokerEpoch runs
  before the registration lookup, so BROKER_ID_NOT_REGISTERED is never answered).
- Per directory, per topic, per partition, in request order: unknown topic id -> UNKNOWN_TOPIC_ID on each of
  its partitions; unknown partition -> UNKNOWN_TOPIC_OR_PARTITION; the broker is not a replica ->
  NOT_LEADER_OR_FOLLOWER; else NONE, with a PartitionChangeRecord setting that replica's directory when it
  changes (PartitionChangeBuilder with target_directories, Kafka's setDirectory; no record when unchanged).
- A directory is online (BrokerRegistration.hasOnlineDir, DirectoryId.isOnline) when it is UNASSIGNED or
  MIGRATING, or the broker lists no log dirs, or its log dirs (RegisterBrokerRecord, updated by
  BrokerRegistrationChangeRecord) hold it; LOST and unknown ids are offline. Partitions assigned to an
  offline directory are still assigned, then the broker leaves their ISR and leadership as if fenced
  (Kafka's generateLeaderAndIsrUpdates "offline-dir-assignment", computed from the image before this
  request's records), after every assignment record.
- Those ISR updates follow request order (first occurrence); Kafka iterates a HashSet of partitions.
- A heartbeat's OfflineLogDirs (Kafka's handleDirectoriesOffline): the newly offline directories are the
  registration's log dirs (sorted as Kafka's BrokerRegistration keeps them) that the heartbeat lists; for
  each, every partition with a replica in it loses the broker from its ISR and leadership, as for a fenced
  broker (on_directories_offline). broker_fencing adds the BrokerRegistrationChangeRecord that keeps only
  the still-online dirs. Partitions go by topic name and partition id (Kafka iterates a TimelineHashSet).
"""
from __future__ import annotations

from kraftsman.controller.image.partitions import UNASSIGNED
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.protocol.uuids import Uuid

from .context import ControllerContext, ControllerResult
from .feature_levels import DIRECTORY_ASSIGNMENT_LEVEL, metadata_version
from .partition_elections import leave_isr
from .partitions import MIGRATING, NO_LEADER, PartitionChangeBuilder

LOST = Uuid.from_longs(0, 1)  # DirectoryId.LOST


def is_online_dir(log_dirs, directory: bytes) -> bool:
    """Tell whether `directory` counts as online for a broker with `log_dirs` (Kafka's DirectoryId.isOnline)."""
    directory = bytes(directory)
    if directory in (UNASSIGNED, bytes(MIGRATING)):
        return True
    if directory == bytes(LOST):
        return False
    dirs = [bytes(d) for d in log_dirs or ()]
    return not dirs or directory in dirs


def _request_error(ctx: ControllerContext, request) -> int:
    """Return the whole-request error code of an AssignReplicasToDirs request (0 when none)."""
    if metadata_version(ctx.image) < DIRECTORY_ASSIGNMENT_LEVEL:
        return E.UNSUPPORTED_VERSION
    registration = ctx.image.cluster.brokers.get(request.broker_id)
    if registration is None or registration.record.broker_epoch != request.broker_epoch:
        return E.STALE_BROKER_EPOCH
    return E.NONE


def _assign_one(ctx: ControllerContext, broker_id: int, directory: bytes, topic, partition_id: int,
                 records: list) -> int:
    """Assign one replica of `broker_id` to `directory`; return its error code, appending any change record."""
    partition = topic.partition(partition_id)
    if partition is None:
        return E.UNKNOWN_TOPIC_OR_PARTITION
    if broker_id not in partition.replicas:
        return E.NOT_LEADER_OR_FOLLOWER
    builder = PartitionChangeBuilder(ctx.image, partition, topic.topic_id, partition_id)
    builder.target_directories[broker_id] = directory
    record = builder.build()
    if record is not None:
        records.append(record)
    return E.NONE


def assign_replicas_to_dirs(ctx: ControllerContext, request) -> ControllerResult:
    """Handle AssignReplicasToDirs (v0)."""
    cls = codec.message_class("AssignReplicasToDirsResponse")
    error = _request_error(ctx, request)
    if error:
        return ControllerResult([], cls(throttle_time_ms=0, error_code=error))
    broker_id = request.broker_id
    log_dirs = ctx.image.cluster.brokers[broker_id].record.log_dirs
    records, offline, out = [], {}, []
    for req_dir in request.directories:
        online = is_online_dir(log_dirs, req_dir.id)
        topics = []
        for req_topic in req_dir.topics:
            topic = ctx.image.topics.by_id.get(req_topic.topic_id)
            parts = []
            for p in req_topic.partitions:
                code = E.UNKNOWN_TOPIC_ID if topic is None else _assign_one(
                    ctx, broker_id, req_dir.id, topic, p.partition_index, records)
                if code == E.NONE and not online:
                    offline[(topic.topic_id, p.partition_index)] = None
                parts.append(cls.PartitionData(partition_index=p.partition_index, error_code=code))
            topics.append(cls.TopicData(topic_id=req_topic.topic_id, partitions=parts))
        out.append(cls.DirectoryData(id=req_dir.id, topics=topics))
    records += leave_isr(ctx, broker_id, NO_LEADER, [(ctx.image.topics.by_id[t], p) for t, p in offline])
    return ControllerResult(records, cls(throttle_time_ms=0, error_code=E.NONE, directories=out))


def newly_offline(log_dirs, offline_log_dirs) -> list[bytes]:
    """Return the registered dirs (in Kafka's sorted order) that a heartbeat reports offline."""
    offline = {bytes(d) for d in offline_log_dirs or ()}
    return [d for d in sorted_dirs(log_dirs) if d in offline]


def sorted_dirs(log_dirs) -> list[bytes]:
    """Return `log_dirs` in Kafka's BrokerRegistration order (Uuid.compareTo)."""
    return [bytes(d) for d in sorted((Uuid(bytes(d)) for d in log_dirs or ()), key=Uuid.sort_key)]


def on_directories_offline(ctx: ControllerContext, broker_id: int, directories) -> list:
    """Return the PartitionChangeRecords that take `broker_id` out of the ISR and leadership of every partition
    with a replica in one of `directories`, directory by directory (Kafka's handleDirectoriesOffline)."""
    topics = [ctx.image.topics.by_name[name] for name in sorted(ctx.image.topics.by_name)]
    selected = [(topic, pid) for directory in directories for topic in topics for pid in sorted(topic.partitions)
                if directory in topic.partition(pid).directories]
    return leave_isr(ctx, broker_id, NO_LEADER, selected)
