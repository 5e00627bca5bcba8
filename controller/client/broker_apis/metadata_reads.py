"""Metadata, DescribeTopicPartitions and DescribeCluster as a Kafka 3.9 broker answers them from its image
(KafkaApis, KRaftMetadataCache, DescribeTopicPartitionsRequestHandler).

Rules:
- A broker is alive when registered and unfenced; its node is its endpoint on the request's listener. Metadata and
  DescribeCluster list the alive brokers (by id), and name a random alive broker as the controller (KIP-590:
  clients send controller-bound requests to any broker, which forwards them). A broker knows no start time:
  DescribeCluster carries none of kraftsman's tags.
- Partition state comes from the image: leader -1 or an unregistered leader -> LEADER_NOT_AVAILABLE (leader -1),
  a leader with no endpoint on the listener -> LISTENER_NOT_FOUND (v6+); v0 lists only alive replicas in
  replicas/ISR and answers REPLICA_NOT_AVAILABLE when that hid any. A replica is offline when its broker is
  unregistered, fenced, lacks the listener or its directory is offline.
- Metadata topics: every topic (null, or empty at v0) or the ones asked; a missing name answers
  UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name), a missing id UNKNOWN_TOPIC_ID. Topics
  are never created here (auto.create.topics.enable=false, as the fixture cluster runs).
- DescribeTopicPartitions: topics at or after the cursor's, sorted by name, at most
  min(max.request.partition.size.limit (2000), ResponsePartitionLimit) partitions (at least 1) with NextCursor where
  it stopped; unknown names answer their error unless every topic was asked; a cursor topic missing from the list
  or a negative cursor partition is INVALID_REQUEST for the whole request. ELR fields are the image's (null: []).
- Authorized operations are everyone's (no broker-side authorizer here; see the package Rules).
"""
from __future__ import annotations

from kraftsman.controller.image.partitions import UNASSIGNED
from kraftsman.controller.quorum.describe_cluster import authorized_operations
from kraftsman.controller.quorum.directories import is_online_dir
from kraftsman.controller.quorum.error_responses import error_response
from kraftsman.controller.quorum.topics_names import INTERNAL_TOPICS, TopicNameError, validate_topic_name
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.protocol.uuids import ZERO_UUID

NO_LEADER = -1
TOPIC_OPERATIONS = (3, 4, 5, 6, 7, 8, 10, 11)  # READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
NOT_ASKED = -2147483648
MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000  # max.request.partition.size.limit
BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS = 1, 2
_M = codec.message_class("MetadataResponse")
_T = codec.message_class("DescribeTopicPartitionsResponse")


def topic_operations() -> int:
    """Return the bitfield of every topic operation (what a super user, or anyone without an authorizer, may do)."""
    return sum(1 << op for op in TOPIC_OPERATIONS)


def endpoint(image, broker_id: int, listener: str):
    """Return (host, port, rack) of a registered broker on `listener`, or None."""
    registration = image.cluster.brokers.get(broker_id)
    if registration is None:
        return None
    for e in registration.record.end_points:
        if e.name == listener:
            return e.host, e.port, registration.record.rack
    return None


def alive_brokers(image, listener: str) -> list[tuple[int, str, int, str | None]]:
    """Return (id, host, port, rack) of every unfenced broker with an endpoint on `listener`, by id."""
    out = []
    for broker_id in sorted(image.cluster.brokers):
        node = endpoint(image, broker_id, listener)
        if node is not None and not image.cluster.brokers[broker_id].record.fenced:
            out.append((broker_id, *node))
    return out


def _offline(image, partition, listener: str) -> list[int]:
    out = []
    for index, broker_id in enumerate(partition.replicas):
        registration = image.cluster.brokers.get(broker_id)
        directory = partition.directories[index] if index < len(partition.directories) else UNASSIGNED
        if registration is None or registration.record.fenced or endpoint(image, broker_id, listener) is None \
                or not is_online_dir(registration.record.log_dirs, directory):
            out.append(broker_id)
    return out


def _alive(image, ids, listener: str) -> list[int]:
    return [b for b in ids if b in image.cluster.brokers and not image.cluster.brokers[b].record.fenced
            and endpoint(image, b, listener) is not None]


def _metadata_partition(image, index: int, p, listener: str, version: int):
    replicas, isr = (_alive(image, p.replicas, listener), _alive(image, p.isr, listener)) if version == 0 \
        else (list(p.replicas), list(p.isr))
    out = _M.MetadataResponsePartition(partition_index=index, leader_epoch=p.leader_epoch, replica_nodes=replicas,
                                       isr_nodes=isr, offline_replicas=_offline(image, p, listener))
    if p.leader not in image.cluster.brokers:
        out.error_code, out.leader_id = E.LEADER_NOT_AVAILABLE, NO_LEADER
    elif endpoint(image, p.leader, listener) is None:
        out.error_code = E.LISTENER_NOT_FOUND if version >= 6 else E.LEADER_NOT_AVAILABLE
        out.leader_id = NO_LEADER
    else:
        out.leader_id = p.leader
        hidden = len(replicas) < len(p.replicas) or len(isr) < len(p.isr)
        out.error_code = E.REPLICA_NOT_AVAILABLE if hidden else 0
    return out


def _metadata_topic(image, topic, listener: str, version: int):
    partitions = [_metadata_partition(image, i, topic.partition(i), listener, version)
                  for i in sorted(topic.partitions)]
    return _M.MetadataResponseTopic(error_code=0, name=topic.name, topic_id=topic.topic_id,
                                    is_internal=topic.name in INTERNAL_TOPICS, partitions=partitions)


def _name_error(name: str) -> int:
    try:
        validate_topic_name(name)
        return E.UNKNOWN_TOPIC_OR_PARTITION
    except TopicNameError:
        return E.INVALID_TOPIC_EXCEPTION


def _wanted_topic(image, item, listener: str, version: int):
    topics = image.topics
    topic_id = getattr(item, "topic_id", ZERO_UUID) if version >= 10 else ZERO_UUID
    if topic_id != ZERO_UUID:
        topic = topics.by_id.get(bytes(topic_id))
        if topic is None:
            return _M.MetadataResponseTopic(error_code=E.UNKNOWN_TOPIC_ID, name=None, topic_id=topic_id, partitions=[])
        return _metadata_topic(image, topic, listener, version)
    topic = topics.by_name.get(item.name)
    if topic is not None:
        return _metadata_topic(image, topic, listener, version)
    return _M.MetadataResponseTopic(error_code=_name_error(item.name), name=item.name, topic_id=ZERO_UUID,
                                    is_internal=item.name in INTERNAL_TOPICS, partitions=[])


def metadata(image, request, *, version: int, listener: str, cluster_id: str, rng):
    """Answer Metadata v0-v12."""
    wanted = request.topics
    if wanted is not None and version < 12 and any(t.name is None for t in wanted):
        raise ValueError(f"Topic name can not be null for version {version}")  # Kafka closes the connection
    if wanted is None or (version == 0 and not wanted):
        topics = [_metadata_topic(image, t, listener, version) for t in image.topics.by_name.values()]
    else:
        topics = [_wanted_topic(image, item, listener, version) for item in wanted]
    brokers = alive_brokers(image, listener)
    controller = rng.choice(brokers)[0] if brokers else -1
    if version >= 8 and getattr(request, "include_topic_authorized_operations", False):
        for topic in topics:
            topic.topic_authorized_operations = topic_operations()
    cluster_ops = authorized_operations() if 8 <= version <= 10 and \
        getattr(request, "include_cluster_authorized_operations", False) else NOT_ASKED
    return _M(throttle_time_ms=0, cluster_id=cluster_id, controller_id=controller, topics=topics,
              cluster_authorized_operations=cluster_ops,
              brokers=[_M.MetadataResponseBroker(node_id=b, host=h, port=p, rack=r) for b, h, p, r in brokers])


# ---------------------------------------------------------------- DescribeTopicPartitions


def _tp_partition(image, index: int, p, listener: str):
    leader = p.leader if endpoint(image, p.leader, listener) is not None else NO_LEADER
    return _T.DescribeTopicPartitionsResponsePartition(
        error_code=0, partition_index=index, leader_id=leader, leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas), isr_nodes=list(p.isr), eligible_leader_replicas=list(p.elr or ()),
        last_known_elr=list(p.last_known_elr or ()), offline_replicas=_offline(image, p, listener))


def _tp_topic(topic, partitions, code: int = 0):
    return _T.DescribeTopicPartitionsResponseTopic(
        error_code=code, name=topic.name, topic_id=topic.topic_id, is_internal=topic.name in INTERNAL_TOPICS,
        partitions=partitions, topic_authorized_operations=topic_operations())


def _names(image, request) -> tuple[list[str], bool]:
    cursor = request.cursor
    start = cursor.topic_name if cursor is not None else ""
    every = not request.topics
    names = set(image.topics.by_name) if every else {t.name for t in request.topics}
    names = {n for n in names if n >= start}
    if cursor is not None and not every and cursor.topic_name not in names:
        raise _Invalid(f"DescribeTopicPartitionsRequest topic list should contain the cursor topic: "
                       f"{cursor.topic_name}")
    if cursor is not None and cursor.partition_index < 0:
        raise _Invalid(f"DescribeTopicPartitionsRequest cursor partition must be valid: {cursor}")
    return sorted(names), every


class _Invalid(Exception):
    """An InvalidRequestException of the whole request."""


def describe_topic_partitions(image, request, *, listener: str):
    """Answer DescribeTopicPartitions v0."""
    try:
        names, every = _names(image, request)
    except _Invalid as e:
        response = error_response("DescribeTopicPartitions", request, E.INVALID_REQUEST, str(e))
        return response
    cursor = request.cursor
    remaining = max(min(MAX_REQUEST_PARTITION_SIZE_LIMIT, request.response_partition_limit), 1)
    out = _T(throttle_time_ms=0, topics=[], next_cursor=None)
    for name in names:
        if remaining <= 0:
            out.next_cursor = _T.Cursor(topic_name=name, partition_index=0)
            break
        topic = image.topics.by_name.get(name)
        if topic is None:
            if not every:
                out.topics.append(_T.DescribeTopicPartitionsResponseTopic(
                    error_code=_name_error(name), name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
                    partitions=[], topic_authorized_operations=topic_operations()))
            continue
        first = cursor.partition_index if cursor is not None and cursor.topic_name == name else 0
        upper = min(len(topic.partitions), first + remaining)
        out.topics.append(_tp_topic(topic, [_tp_partition(image, i, topic.partition(i), listener)
                                            for i in range(first, upper) if i in topic.partitions]))
        if upper < len(topic.partitions):
            out.next_cursor = _T.Cursor(topic_name=name, partition_index=upper)
            break
        remaining -= upper - first
    return out


# ---------------------------------------------------------------- DescribeCluster


def describe_cluster(image, request, *, version: int, listener: str, cluster_id: str, rng):
    """Answer DescribeCluster v0-v1 as a broker (EndpointType 1; 2 is MISMATCHED_ENDPOINT_TYPE)."""
    cls = codec.message_class("DescribeClusterResponse")
    wanted = request.endpoint_type if version >= 1 else BROKER_ENDPOINTS
    if wanted not in (BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS):
        return cls(error_code=E.INVALID_REQUEST if version == 0 else E.UNSUPPORTED_ENDPOINT_TYPE,
                   error_message=f"Unsupported endpoint type {wanted}", cluster_id="")
    if wanted != BROKER_ENDPOINTS:
        return cls(error_code=E.INVALID_REQUEST if version == 0 else E.MISMATCHED_ENDPOINT_TYPE, cluster_id="",
                   error_message="The request was sent to an endpoint of type BROKER, but we wanted an endpoint of "
                                 "type CONTROLLER")
    brokers = alive_brokers(image, listener)
    nodes = [cls.DescribeClusterBroker(broker_id=b, host=h, port=p, rack=r) for b, h, p, r in brokers]
    operations = authorized_operations() if request.include_cluster_authorized_operations else NOT_ASKED
    return cls(throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=BROKER_ENDPOINTS,
               cluster_id=cluster_id, controller_id=rng.choice(brokers)[0] if brokers else -1, brokers=nodes,
               cluster_authorized_operations=operations)
