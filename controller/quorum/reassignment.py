"""Partition handlers: AlterPartition (ISR changes from leaders) and KIP-455 reassignments (alter, list).

Rules:
- AlterPartition checks the broker epoch (STALE_BROKER_EPOCH for the whole request), then each partition
  as Kafka 3.9's validateAlterPartitionData: higher epochs NOT_CONTROLLER, older leader epoch
  FENCED_LEADER_EPOCH, sender not leader INVALID_REQUEST, older partition epoch INVALID_UPDATE_VERSION,
  ISR not a subset of replicas or without the leader INVALID_REQUEST, ineligible ISR members
  INELIGIBLE_REPLICA (v2+) / OPERATION_NOT_ATTEMPTED (v0-v1).
- A change that moves leadership away from the sender (a completed reassignment) answers NEW_LEADER_ELECTED.
- A reassignment sets replicas = target + removing, adding = target - current, removing = current - target
  (both sorted, as Kafka's TreeSets); it completes (through PartitionChangeBuilder) once the ISR holds
  every target replica. Null replicas cancel it: adding replicas leave replicas and ISR
  (NO_REASSIGNMENT_IN_PROGRESS when none runs; an empty ISR needs unclean election, else
  INVALID_REPLICA_ASSIGNMENT).
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E

from .api_error import OK, ApiError
from .context import ControllerContext, ControllerResult
from .partitions import RECOVERED, RECOVERING, UNCLEAN, change_builder, unclean_enabled
from .topics import validate_manual_assignment


def _ineligible(ctx: ControllerContext, states) -> bool:
    for broker_id, epoch in states:
        registration = ctx.image.cluster.brokers.get(broker_id)
        if registration is None or registration.record.in_controlled_shutdown or registration.record.fenced:
            return True
        if epoch != -1 and registration.record.broker_epoch != epoch:
            return True
    return False


def _isr_states(ctx: ControllerContext, data) -> list[tuple[int, int]]:
    if ctx.api_version >= 3:
        return [(s.broker_id, s.broker_epoch) for s in data.new_isr_with_epochs]
    return [(b, -1) for b in data.new_isr]


def _validate(ctx: ControllerContext, broker_id: int, partition, data, states) -> int:
    if partition is None:
        return E.UNKNOWN_TOPIC_OR_PARTITION
    if data.leader_epoch > partition.leader_epoch or data.partition_epoch > partition.partition_epoch:
        return E.NOT_CONTROLLER
    if data.leader_epoch < partition.leader_epoch:
        return E.FENCED_LEADER_EPOCH
    if broker_id != partition.leader:
        return E.INVALID_REQUEST
    if data.partition_epoch < partition.partition_epoch:
        return E.INVALID_UPDATE_VERSION
    new_isr = [b for b, _ in states]
    if len(set(new_isr)) != len(new_isr) or not set(new_isr) <= set(partition.replicas):
        return E.INVALID_REQUEST
    if partition.leader not in new_isr:
        return E.INVALID_REQUEST
    lrs = getattr(data, "leader_recovery_state", RECOVERED)
    if lrs == RECOVERING and len(new_isr) > 1:
        return E.INVALID_REQUEST
    if partition.leader_recovery_state == RECOVERED and lrs == RECOVERING:
        return E.INVALID_REQUEST
    if _ineligible(ctx, states):
        return E.INELIGIBLE_REPLICA if ctx.api_version > 1 else E.OPERATION_NOT_ATTEMPTED
    return E.NONE


def _alter_one(ctx: ControllerContext, request, topic, data, records: list, cls):
    partition = topic.partition(data.partition_index)
    states = _isr_states(ctx, data)
    code = _validate(ctx, request.broker_id, partition, data, states)
    if code != E.NONE:
        return cls.PartitionData(partition_index=data.partition_index, error_code=code)
    builder = change_builder(ctx, topic, data.partition_index, partition)
    if unclean_enabled(ctx.image, ctx.config.unclean_leader_election, topic.name):
        builder.election = UNCLEAN
    builder.target_isr = [b for b, _ in states]
    builder.target_lrs = getattr(data, "leader_recovery_state", RECOVERED)
    record = builder.build()
    if record is not None:
        records.append(record)
        partition = partition.merge(record.message)
        if record.message.leader not in (request.broker_id, -2):
            return cls.PartitionData(partition_index=data.partition_index, error_code=E.NEW_LEADER_ELECTED)
    return cls.PartitionData(partition_index=data.partition_index, error_code=0, leader_id=partition.leader,
                             leader_epoch=partition.leader_epoch, isr=list(partition.isr),
                             leader_recovery_state=partition.leader_recovery_state,
                             partition_epoch=partition.partition_epoch)


def _stale_epoch(ctx: ControllerContext, request) -> str | None:
    registration = ctx.image.cluster.brokers.get(request.broker_id)
    if registration is None:
        return f"No broker registration found for broker {request.broker_id}"
    if registration.record.broker_epoch != request.broker_epoch:
        return f"Expected broker epoch {registration.record.broker_epoch}, but got broker epoch {request.broker_epoch}"
    return None


def alter_partition(ctx: ControllerContext, request) -> ControllerResult:
    """Handle AlterPartition (v0-v3) from a partition leader."""
    cls = codec.message_class("AlterPartitionResponse")
    if _stale_epoch(ctx, request) is not None:
        return ControllerResult([], cls(error_code=E.STALE_BROKER_EPOCH, topics=[]))
    records, topics = [], []
    for topic_data in request.topics:
        out = cls.TopicData(topic_name=topic_data.topic_name, topic_id=topic_data.topic_id)
        topics.append(out)
        if ctx.api_version > 1:
            topic = ctx.image.topics.by_id.get(bytes(topic_data.topic_id))
        else:
            topic = ctx.image.topics.by_name.get(topic_data.topic_name)
        if topic is None:
            code = E.UNKNOWN_TOPIC_ID if ctx.api_version > 1 else E.UNKNOWN_TOPIC_OR_PARTITION
            out.partitions = [cls.PartitionData(partition_index=p.partition_index, error_code=code)
                              for p in topic_data.partitions]
            continue
        out.partitions = [_alter_one(ctx, request, topic, p, records, cls) for p in topic_data.partitions]
    return ControllerResult(records, cls(throttle_time_ms=0, error_code=0, topics=topics))


# ---------------------------------------------------------------- reassignments


def _cancel(ctx: ControllerContext, name: str, topic, index: int, partition):
    """Revert a reassignment as Kafka's PartitionReassignmentRevert: drop the adding replicas."""
    if not partition.adding_replicas and not partition.removing_replicas:
        raise ApiError(E.NO_REASSIGNMENT_IN_PROGRESS)
    adding = set(partition.adding_replicas)
    replicas = [r for r in partition.replicas if r not in adding]
    isr = [r for r in partition.isr if r not in adding]
    unclean_allowed = unclean_enabled(ctx.image, ctx.config.unclean_leader_election, name)
    if not isr:
        if not unclean_allowed:
            raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"Unable to revert partition assignment for {name}:{index} "
                                                         "because it would require an unclean leader election.")
        isr = replicas[:1]
    builder = change_builder(ctx, topic, index, partition)
    builder.target_isr, builder.target_replicas = isr, replicas
    builder.target_removing, builder.target_adding = [], []
    if unclean_allowed:
        builder.election = UNCLEAN
    return builder.build()


def _change(ctx: ControllerContext, topic, index: int, partition, target: list, allow_rf_change: bool = True):
    """Start or change a reassignment as Kafka's changePartitionReassignment (adding/removing sorted); with
    AllowReplicationFactorChange false (v1, KIP-860) the target must keep the replica count."""
    validate_manual_assignment(ctx, target, None)
    if not allow_rf_change:
        _same_replication_factor(partition, target)
    current = list(partition.replicas)
    removing = sorted(set(current) - set(target))
    adding = sorted(set(target) - set(current))
    replicas = list(target) + removing
    builder = change_builder(ctx, topic, index, partition)
    if replicas != current:
        builder.target_replicas = replicas
    if removing:
        builder.target_removing = removing
    if adding:
        builder.target_adding = adding
    return builder.build()


def _same_replication_factor(partition, target: list) -> None:
    """Refuse a target whose size differs from the partition's (its reassignment's target while one runs)."""
    if partition.adding_replicas or partition.removing_replicas:
        size = len((set(partition.replicas) | set(partition.adding_replicas)) - set(partition.removing_replicas))
    else:
        size = len(partition.replicas)
    if size != len(target):
        raise ApiError(E.INVALID_REPLICATION_FACTOR, f"The replication factor is changed from {size} to {len(target)}")


def _reassign_one(ctx: ControllerContext, name: str, target, records: list, allow_rf_change: bool = True) -> None:
    topic = ctx.image.topics.by_name.get(name)
    if topic is None:
        raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}.")
    partition = topic.partition(target.partition_index)
    if partition is None:
        raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {name}:{target.partition_index}.")
    if target.replicas is None:
        record = _cancel(ctx, name, topic, target.partition_index, partition)
    else:
        record = _change(ctx, topic, target.partition_index, partition, list(target.replicas), allow_rf_change)
    if record is not None:
        records.append(record)


def alter_partition_reassignments(ctx: ControllerContext, request) -> ControllerResult:
    """Handle AlterPartitionReassignments (v0-1): start, change or cancel (null replicas) reassignments; v1's
    AllowReplicationFactorChange false refuses a change of replica count (echoed in the answer)."""
    cls = codec.message_class("AlterPartitionReassignmentsResponse")
    allow_rf_change = ctx.api_version < 1 or request.allow_replication_factor_change
    records, responses = [], []
    for topic in request.topics:
        partitions = []
        for target in topic.partitions:
            try:
                _reassign_one(ctx, topic.name, target, records, allow_rf_change)
                error = OK
            except ApiError as e:
                error = e
            partitions.append(cls.ReassignablePartitionResponse(partition_index=target.partition_index,
                                                                error_code=error.code, error_message=error.message))
        responses.append(cls.ReassignableTopicResponse(name=topic.name, partitions=partitions))
    return ControllerResult(records, cls(throttle_time_ms=0, error_code=0, error_message=None, responses=responses,
                                         allow_replication_factor_change=allow_rf_change))


def _ongoing(cls, topic, partition_ids) -> list:
    out = []
    for partition_id in partition_ids:
        partition = topic.partition(partition_id)
        if partition is not None and (partition.adding_replicas or partition.removing_replicas):
            out.append(cls.OngoingPartitionReassignment(
                partition_index=partition_id, replicas=list(partition.replicas),
                adding_replicas=list(partition.adding_replicas), removing_replicas=list(partition.removing_replicas)))
    return out


def list_partition_reassignments(ctx: ControllerContext, request) -> ControllerResult:
    """Handle ListPartitionReassignments (v0): ongoing reassignments of all or the given partitions."""
    cls = codec.message_class("ListPartitionReassignmentsResponse")
    by_name = ctx.image.topics.by_name
    if request.topics is None:
        wanted = [(by_name[n], sorted(by_name[n].partitions)) for n in sorted(by_name)]
    else:
        wanted = [(by_name[t.name], t.partition_indexes) for t in request.topics if t.name in by_name]
    topics = []
    for topic, partition_ids in wanted:
        partitions = _ongoing(cls, topic, partition_ids)
        if partitions:
            topics.append(cls.OngoingTopicReassignment(name=topic.name, partitions=partitions))
    return ControllerResult([], cls(throttle_time_ms=0, error_code=0, error_message=None, topics=topics))

