"""Kafka's Admin calls on partitions: leader elections, partition reassignments (list, alter, cancel), topic
descriptions for their replica assignments, and the config changes that set and clear replication throttles.

Rules:
- Each call takes an Admin (controller.client.admin: its addresses, client config and deadline) and is named after
  Kafka's Admin method. Results are per partition or per resource: None (done) or a ServerError (the code and the
  server's message, "" when none), as Kafka's futures complete; an error of the whole response raises ServerError.
- Routing as KafkaAdminClient's: ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments go to
  the controller (through any broker, which forwards; with bootstrap controllers to the active one). Topic reads
  and topic configs go to any server. A BROKER config named by id goes to that broker (its endpoint from
  DescribeCluster; a broker not listed fails with BROKER_NOT_AVAILABLE instead of Kafka's wait for a node that
  never comes); with bootstrap controllers everything goes to the active controller.
- Topic descriptions: DescribeTopicPartitions (pages followed with its cursor) where the server has it, else
  Metadata (kraftsman's controllers serve Metadata; Kafka 3.9's controllers neither, so they are unsupported).
- TimeoutMs fields carry what is left of the deadline.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from kraftsman.storage.protocol.errors import Errors

from . import sync_client as sc
from .active_controller import on_active_controller
from .admin import Admin, ServerError, error_message

PREFERRED, UNCLEAN = 0, 1                                   # ElectLeaders' ElectionType
TOPIC, BROKER = 2, 4                                         # ConfigResource types
SET, DELETE = 0, 1                                           # IncrementalAlterConfigs' ConfigOperation


@dataclass
class PartitionReassignment:
    """An ongoing reassignment (Kafka's PartitionReassignment)."""

    replicas: list[int]
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)


@dataclass
class PartitionInfo:
    """One partition of a topic description (Kafka's TopicPartitionInfo, node ids only)."""

    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]


@dataclass
class TopicDescription:
    """What describe_topics returns for one topic (Kafka's TopicDescription)."""

    name: str
    internal: bool
    partitions: list[PartitionInfo]


def _timeout_ms(admin: Admin) -> int:
    return max(1, int((admin.deadline - time.monotonic()) * 1000))


def _error(code: int, message: str | None = None) -> ServerError | None:
    """Return None for NONE, else the error with the server's message or (null) Kafka's default one."""
    return None if code == Errors.NONE else ServerError(code, error_message(code, message))


def _controller_call(admin: Admin, api: str, body):
    """Send `body` where Kafka sends controller requests; return the response (a NOT_CONTROLLER answer is retried
    at the active controller by on_active_controller)."""
    from .active_controller import Refused

    def attempt(conn: sc.SyncConnection):
        response = conn.request(api, conn.pick_version(api), body, admin.deadline)
        if getattr(response, "error_code", 0) == Errors.NOT_CONTROLLER:
            raise Refused(Errors.NOT_CONTROLLER.name)
        return response

    return on_active_controller(admin.addresses, admin.config, admin.deadline, attempt, api=api)


def _by_topic(partitions) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for topic, index in partitions:
        grouped.setdefault(topic, []).append(index)
    return grouped


# ---------------------------------------------------------------- ElectLeaders


def elect_leaders(admin: Admin, election_type: int, partitions) -> dict[tuple[str, int], ServerError | None]:
    """Elect leaders of `partitions` ((topic, partition) pairs; None: every partition, as Kafka's null) with
    PREFERRED or UNCLEAN; return each partition's outcome as the response lists them."""
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("ElectLeadersRequest")
    wanted = None
    if partitions is not None:
        wanted = [cls.TopicPartitions(topic=t, partitions=ps) for t, ps in _by_topic(partitions).items()]
    body = cls(election_type=election_type, topic_partitions=wanted, timeout_ms=_timeout_ms(admin))
    response = _controller_call(admin, "ElectLeaders", body)
    if getattr(response, "error_code", 0):
        raise _error(response.error_code)
    return {(r.topic, p.partition_id): _error(p.error_code, p.error_message)
            for r in response.replica_election_results for p in r.partition_result}


# ---------------------------------------------------------------- partition reassignments


def list_partition_reassignments(admin: Admin, partitions=None) -> dict[tuple[str, int], PartitionReassignment]:
    """Return the ongoing reassignments (of `partitions` only, when given)."""
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("ListPartitionReassignmentsRequest")
    topics = None
    if partitions is not None:
        topics = [cls.ListPartitionReassignmentsTopics(name=t, partition_indexes=ps)
                  for t, ps in _by_topic(partitions).items()]
    response = _controller_call(admin, "ListPartitionReassignments",
                                cls(timeout_ms=_timeout_ms(admin), topics=topics))
    if response.error_code:
        raise _error(response.error_code, response.error_message)
    return {(t.name, p.partition_index): PartitionReassignment(list(p.replicas), list(p.adding_replicas),
                                                               list(p.removing_replicas))
            for t in response.topics for p in t.partitions}


def alter_partition_reassignments(admin: Admin, targets: dict) -> dict[tuple[str, int], ServerError | None]:
    """Start ({(topic, partition): replicas}) or cancel (replicas None) reassignments; return each outcome (an
    answer with too few or too many results raises ServerError, as Kafka's client fails it)."""
    from kraftsman.storage.protocol import codec

    if not targets:
        return {}
    cls = codec.message_class("AlterPartitionReassignmentsRequest")
    by_topic: dict[str, list] = {}
    for (topic, index), replicas in sorted(targets.items()):
        by_topic.setdefault(topic, []).append(cls.ReassignablePartition(partition_index=index, replicas=replicas))
    body = cls(timeout_ms=_timeout_ms(admin),
               topics=[cls.ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()])
    response = _controller_call(admin, "AlterPartitionReassignments", body)
    if response.error_code:
        failure = _error(response.error_code, response.error_message)
        return {tp: failure for tp in targets}
    found = {(t.name, p.partition_index): _error(p.error_code, p.error_message)
             for t in response.responses for p in t.partitions}
    received = sum(len(t.partitions) for t in response.responses)
    if received != len(targets) and not any(found.values()):        # Kafka's assertResponseCountMatch
        quantifier = "many" if received > len(targets) else "less"
        raise ServerError(Errors.UNKNOWN_SERVER_ERROR, f"The server returned too {quantifier} results.Expected "
                                                       f"{len(targets)} but received {received}")
    return {tp: found.get(tp) for tp in targets}


# ---------------------------------------------------------------- topic descriptions


def describe_topics(admin: Admin, names) -> dict[str, TopicDescription | ServerError]:
    """Describe `names`: each topic's description, or its error (UNKNOWN_TOPIC_OR_PARTITION for a missing one)."""
    wanted = sorted(set(names))
    if not wanted:
        return {}

    def attempt(conn: sc.SyncConnection):
        if conn.supports("DescribeTopicPartitions", 0):
            return _describe_topic_partitions_on(conn, wanted, admin.deadline)
        return _metadata_topics_on(conn, wanted, admin.deadline)

    return on_active_controller(admin.addresses, admin.config, admin.deadline, attempt, api="DescribeTopicPartitions")


def _partitions(rows, leader, replicas, isr) -> list[PartitionInfo]:
    return sorted((PartitionInfo(r.partition_index, getattr(r, leader), list(getattr(r, replicas)),
                                 list(getattr(r, isr))) for r in rows), key=lambda p: p.partition)


def _describe_topic_partitions_on(conn: sc.SyncConnection, names: list[str], deadline: float) -> dict:
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeTopicPartitionsRequest")
    found: dict[str, TopicDescription | ServerError] = {}
    cursor = None
    while True:
        todo = [n for n in names if cursor is None or n >= cursor.topic_name]
        body = cls(topics=[cls.TopicRequest(name=n) for n in todo], response_partition_limit=2000, cursor=cursor)
        response = conn.request("DescribeTopicPartitions", 0, body, deadline)
        for t in response.topics:
            if t.error_code:
                found[t.name] = _error(t.error_code)
                continue
            rows = _partitions(t.partitions, "leader_id", "replica_nodes", "isr_nodes")
            known = found.get(t.name)
            if isinstance(known, TopicDescription):
                known.partitions.extend(rows)
            else:
                found[t.name] = TopicDescription(t.name, t.is_internal, rows)
        if response.next_cursor is None:
            return found
        cursor = cls.Cursor(topic_name=response.next_cursor.topic_name,
                            partition_index=response.next_cursor.partition_index)


def _metadata_topics_on(conn: sc.SyncConnection, names: list[str], deadline: float) -> dict:
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("Metadata")
    cls = codec.message_class("MetadataRequest")
    body = cls(topics=[cls.MetadataRequestTopic(name=n) for n in names], allow_auto_topic_creation=False)
    response = conn.request("Metadata", version, body, deadline)
    found: dict[str, TopicDescription | ServerError] = {}
    for t in response.topics:
        if t.error_code:
            found[t.name] = _error(t.error_code)
        else:
            found[t.name] = TopicDescription(t.name, t.is_internal,
                                             _partitions(t.partitions, "leader_id", "replica_nodes", "isr_nodes"))
    return found


# ---------------------------------------------------------------- IncrementalAlterConfigs (throttles)


def incremental_alter_configs(admin: Admin, changes: dict) -> dict[tuple[int, str], ServerError | None]:
    """Apply {(resource type, name): [(key, value or None, SET or DELETE)]}; return each resource's outcome.
    Broker resources named by id go to that broker, the rest in one request to any server (see Rules)."""
    outcomes: dict[tuple[int, str], ServerError | None] = {}
    if admin.config.bootstrap_controllers:
        outcomes |= _alter_on(admin, changes, None)
        return outcomes
    by_broker = {key: ops for key, ops in changes.items() if key[0] == BROKER and key[1]}
    rest = {key: ops for key, ops in changes.items() if key not in by_broker}
    if rest:
        outcomes |= _alter_on(admin, rest, None)
    if by_broker:
        nodes = {n.node_id: (n.host, n.port) for n in admin.describe_cluster().nodes}
        for key, ops in by_broker.items():
            address = nodes.get(int(key[1])) if key[1].lstrip("-").isdigit() else None
            if address is None:
                outcomes[key] = ServerError(Errors.BROKER_NOT_AVAILABLE,
                                            f"Broker {key[1]} is not among the cluster's live brokers")
            else:
                outcomes |= _alter_on(admin, {key: ops}, address)
    return outcomes


def _alter_on(admin: Admin, changes: dict, address) -> dict:
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("IncrementalAlterConfigsRequest")
    resources = [cls.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
        cls.AlterableConfig(name=key, config_operation=op, value=value) for key, value, op in ops])
        for (kind, name), ops in changes.items()]
    body = cls(resources=resources, validate_only=False)
    if address is None:
        response = _controller_call(admin, "IncrementalAlterConfigs", body)
    else:
        with sc.SyncConnection.open(*address, admin.config, admin.deadline) as conn:
            response = conn.request("IncrementalAlterConfigs", conn.pick_version("IncrementalAlterConfigs"), body,
                                    admin.deadline)
    found = {(r.resource_type, r.resource_name): _error(r.error_code, r.error_message) for r in response.responses}
    return {key: found.get(key, ServerError(Errors.UNKNOWN_SERVER_ERROR, "The server did not answer for this "
                                                                         "resource")) for key in changes}
