"""Partition leader elections: ElectLeaders (PREFERRED / UNCLEAN) and the broker fencing / unfencing / shutdown hooks.

Rules:
- ElectLeaders answers ELECTION_NOT_NEEDED when the preferred replica already leads (PREFERRED) or a
  leader exists (UNCLEAN); when the builder finds no change it answers PREFERRED_LEADER_NOT_AVAILABLE or
  ELIGIBLE_LEADERS_NOT_AVAILABLE. Null topic_partitions means every partition, leaving out the
  ELECTION_NOT_NEEDED ones (Kafka's electLeaders).
- Hooks return PartitionChangeRecords only (cluster_control writes the fence/unfence records) and read
  the broker's state from ctx.image, which already holds the fencing change.
- Fenced or shutting-down broker: it leaves every ISR it is in and loses leadership to the first acceptable ISR
  replica in replica order; without ELR (3.9) the last member stays in the ISR and the leader becomes -1, with
  ELR (4.x) the ISR may empty and the broker joins the ELR (partitions.PartitionChangeBuilder).
- Unregistered broker: its ISR partitions as a fencing, then its ELR partitions. A new incarnation of a broker
  (4.x): after an unclean shutdown with ELR on, it leaves every ISR and ELR it is in and may not lead; otherwise
  its ISR partitions as a fencing.
- Unfenced broker: every leaderless partition whose ISR holds an acceptable replica elects it.
- Leader balancing (Kafka's electPreferred task, run by the QuorumController every
  leader.imbalance.check.interval.seconds while auto.leader.rebalance.enable): a preferred election for each
  partition whose leader is not its first replica, at most 1,000 a run. Unclean elections (Kafka's electUnclean,
  every unclean.leader.election.interval.ms): each leaderless partition of a topic with
  unclean.leader.election.enable, at most 1,000 a run.
- The hooks read the partitions the image's partition index names (leaderless ones, a broker's ISRs or ELRs),
  as Kafka reads its BrokersToIsrs and BrokersToElrs, not every partition, and visit the topics in those maps'
  order (java_hash_order.timeline_order, exact while no topic left the map), each topic's partitions by id.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E

from .api_error import OK, ApiError
from .context import ControllerContext, ControllerResult
from .java_hash_order import timeline_order
from .partitions import NO_LEADER, PREFERRED, UNCLEAN, change_builder, elr_enabled, is_active, unclean_enabled

PREFERRED_TYPE, UNCLEAN_TYPE = 0, 1
MAX_ELECTIONS_PER_IMBALANCE = 1000  # ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE


def _elect_one(ctx: ControllerContext, name: str, partition_id: int, election_type: int, records: list) -> ApiError:
    topic = ctx.image.topics.by_name.get(name)
    if topic is None:
        return ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}")
    partition = topic.partition(partition_id)
    if partition is None:
        return ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{partition_id}")
    has_preferred = bool(partition.replicas) and partition.leader == partition.replicas[0]
    if (election_type == PREFERRED_TYPE and has_preferred) or (
            election_type == UNCLEAN_TYPE and partition.leader != NO_LEADER):
        return ApiError(E.ELECTION_NOT_NEEDED)
    builder = change_builder(ctx, topic, partition_id, partition)
    builder.election = UNCLEAN if election_type == UNCLEAN_TYPE else PREFERRED
    record = builder.build()
    if record is None:
        code = E.PREFERRED_LEADER_NOT_AVAILABLE if election_type == PREFERRED_TYPE else E.ELIGIBLE_LEADERS_NOT_AVAILABLE
        return ApiError(code)
    records.append(record)
    return OK


def balance_leaders(ctx: ControllerContext, limit: int = MAX_ELECTIONS_PER_IMBALANCE) -> tuple[list, bool]:
    """Return (records, more) of Kafka's maybeBalancePartitionLeaders: a preferred election for each partition not
    led by its preferred replica, at most `limit` records (more: the limit was reached, go on soon)."""
    records: list = []
    min_isrs: dict = {}
    for topic, partition_ids in _in_kafka_order(ctx.image.topics, ctx.image.topics.index.imbalanced()):
        for partition_id in partition_ids:
            if len(records) >= limit:
                return records, True
            partition = topic.partition(partition_id)
            if partition is None:
                continue
            builder = change_builder(ctx, topic, partition_id, partition, min_isrs=min_isrs)
            builder.election = PREFERRED
            record = builder.build()
            if record is not None:
                records.append(record)
    return records, len(records) >= limit


def elect_unclean_leaders(ctx: ControllerContext, limit: int = MAX_ELECTIONS_PER_IMBALANCE) -> tuple[list, bool]:
    """Return (records, more) of Kafka's maybeElectUncleanLeaders: an unclean election for each leaderless
    partition of a topic with unclean.leader.election.enable, at most `limit` records."""
    records: list = []
    for topic, partition_ids in _in_kafka_order(ctx.image.topics, ctx.image.topics.index.leaderless()):
        if not unclean_enabled(ctx.image, ctx.config.unclean_leader_election, topic.name):
            continue
        for partition_id in partition_ids:
            if len(records) >= limit:
                return records, True
            _elect_one(ctx, topic.name, partition_id, UNCLEAN_TYPE, records)
    return records, len(records) >= limit


def elect_leaders(ctx: ControllerContext, request) -> ControllerResult:
    """Handle ElectLeaders (v0-v2)."""
    cls = codec.message_class("ElectLeadersResponse")
    election_type = request.election_type if ctx.api_version >= 1 else PREFERRED_TYPE
    records, results = [], {}
    if request.topic_partitions is None:
        wanted = [(n, sorted(t.partitions), True) for n, t in sorted(ctx.image.topics.by_name.items())]
    else:
        wanted = [(t.topic, list(t.partitions), False) for t in request.topic_partitions]
    for name, partition_ids, skip_not_needed in wanted:
        for partition_id in partition_ids:
            error = _elect_one(ctx, name, partition_id, election_type, records)
            if skip_not_needed and error.code == E.ELECTION_NOT_NEEDED:
                continue
            results.setdefault(name, []).append(cls.PartitionResult(
                partition_id=partition_id, error_code=error.code, error_message=error.message))
    out = [cls.ReplicaElectionResult(topic=name, partition_result=parts) for name, parts in results.items()]
    return ControllerResult(records, cls(throttle_time_ms=0, error_code=0, replica_election_results=out))


def _updates(ctx: ControllerContext, remove: int, add: int, wanted, candidates: dict,
             unclean_shutdown: int = NO_LEADER) -> list:
    """Kafka's generateLeaderAndIsrUpdates over the partitions `wanted(registration)` selects among `candidates`
    ({topic id: partition ids} from the image's partition index): topics in the order of Kafka's BrokersToIsrs map
    (java_hash_order.timeline_order of the topics as created), then by partition id."""
    selected = []
    for topic, partition_ids in _in_kafka_order(ctx.image.topics, candidates):
        partitions = topic.partitions
        selected += [(topic, pid) for pid in partition_ids if pid in partitions and wanted(topic.partition(pid))]
    return leave_isr(ctx, remove, add, selected, unclean_shutdown)


def _in_kafka_order(topics, candidates: dict):
    """Yield (topic, its partition ids sorted) for `candidates` ({topic id: partition ids} from the partition
    index), the topics in the order of Kafka's TimelineHashMap of them (timeline_order of the topics as created)."""
    for topic_id in timeline_order(t for t in topics.by_id if t in candidates):
        topic = topics.by_id[topic_id]
        if topics.by_name.get(topic.name) is topic:
            yield topic, sorted(candidates[topic_id])


def leave_isr(ctx: ControllerContext, remove: int, add: int, partitions, unclean_shutdown: int = NO_LEADER) -> list:
    """Return the PartitionChangeRecords that take `remove` (and `unclean_shutdown`, which also leaves the ELR)
    out of the ISR and leadership of `partitions` ((topic, partition id) pairs): leaders among active replicas
    or `add` (generateLeaderAndIsrUpdates)."""
    def acceptable(r: int) -> bool:
        """Tell whether replica r may lead (Kafka's isAcceptableLeader of generateLeaderAndIsrUpdates)."""
        return r != remove and r != unclean_shutdown and (r == add or is_active(ctx.image, r))
    records, unclean, min_isrs = [], {}, {}
    for topic, partition_id in partitions:
        if topic.name not in unclean:
            unclean[topic.name] = unclean_enabled(ctx.image, ctx.config.unclean_leader_election, topic.name)
        partition = topic.partition(partition_id)
        builder = change_builder(ctx, topic, partition_id, partition, acceptable, min_isrs)
        if unclean[topic.name]:
            builder.election = UNCLEAN
        if unclean_shutdown != NO_LEADER:
            builder.unclean_shutdown_replicas = [unclean_shutdown]
        builder.target_isr = [r for r in partition.isr if r != remove and r != unclean_shutdown]
        record = builder.build()
        if record is not None:
            records.append(record)
    return records


def on_broker_fenced(ctx: ControllerContext, broker_id: int) -> list:
    """Return the PartitionChangeRecords for a broker being fenced (Kafka's handleBrokerFenced)."""
    return _updates(ctx, broker_id, NO_LEADER, lambda p: broker_id in p.isr, ctx.image.topics.index.in_isr(broker_id))


def _in_elr(broker_id: int):
    return lambda p: broker_id in (p.elr or ())


def on_broker_unregistered(ctx: ControllerContext, broker_id: int) -> list:
    """Return the PartitionChangeRecords for a broker being unregistered (Kafka's handleBrokerUnregistered): its
    ISR partitions as a fencing, then its ELR partitions, where it may no longer lead."""
    index = ctx.image.topics.index
    return on_broker_fenced(ctx, broker_id) + _updates(ctx, broker_id, NO_LEADER, _in_elr(broker_id),
                                                       index.in_elr(broker_id))


def on_broker_shutdown(ctx: ControllerContext, broker_id: int, clean: bool) -> list:
    """Return the PartitionChangeRecords for a new incarnation of a broker (Kafka 4.x's handleBrokerShutdown):
    after an unclean shutdown with ELR on, it leaves its ISRs and ELRs and may not lead; else as a fencing."""
    if clean or not elr_enabled(ctx.image):
        return on_broker_fenced(ctx, broker_id)
    index = ctx.image.topics.index
    return (_updates(ctx, NO_LEADER, NO_LEADER, lambda p: broker_id in p.isr, index.in_isr(broker_id), broker_id)
            + _updates(ctx, NO_LEADER, NO_LEADER, _in_elr(broker_id), index.in_elr(broker_id), broker_id))


def on_controlled_shutdown(ctx: ControllerContext, broker_id: int) -> list:
    """Return the PartitionChangeRecords for a broker entering controlled shutdown."""
    return _updates(ctx, broker_id, NO_LEADER, lambda p: broker_id in p.isr, ctx.image.topics.index.in_isr(broker_id))


def on_broker_unfenced(ctx: ControllerContext, broker_id: int) -> list:
    """Return the PartitionChangeRecords for a broker being unfenced: leaderless partitions elect a leader."""
    return _updates(ctx, NO_LEADER, broker_id, lambda p: p.leader == NO_LEADER, ctx.image.topics.index.leaderless())
