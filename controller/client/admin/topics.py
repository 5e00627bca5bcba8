"""Kafka's topic calls: list_topics, describe_topics, create_topics, delete_topics, create_partitions.

Rules:
- Reads go to any node (Metadata, DescribeTopicPartitions); CreateTopics, DeleteTopics and CreatePartitions to
  the controller (core's routes), each at the highest version both sides speak, carrying the time left as
  their timeout.
- list_topics: Metadata for every topic (v1+ null topics), sorted by name, internal ones flagged.
- describe_topics: DescribeTopicPartitions v0 (KIP-966) page after page (ResponsePartitionLimit, then the
  answer's NextCursor until it is null), falling back to Metadata for those topics where the node lacks it
  (then ELR lists are None: Kafka prints them N/A). The result iterates as Kafka's allTopicNames() map does
  (a java.util.HashMap sized to the request); the first topic answered with an error raises ServerError
  (`each=True` keeps each failed topic's ServerError in the result instead).
- Writes answer per topic as Kafka's futures do: create_topics returns a CreatedTopic per name (its error a
  ServerError), delete_topics and create_partitions {name: None or ServerError}. A top-level NOT_CONTROLLER (or
  one for every topic) is a refusal: the request goes again to the controller the metadata names next.
- Error messages are Kafka's exceptions': the server's, else the code's default text (core.error_message).
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors

from .. import sync_client as sc
from ..active_controller import Refused
from .core import ServerError, error_message
from .results import CreatedTopic, NewTopic, TopicDescription, TopicListing, TopicPartitionInfo

DEFAULT_PARTITION_LIMIT = 2000          # kafka-topics' --partition-size-limit-per-response default


class TopicCalls:
    """Metadata's topics, DescribeTopicPartitions, CreateTopics, DeleteTopics, CreatePartitions (a part of Admin)."""

    def list_topics(self) -> list[TopicListing]:
        """Return every topic, internal ones included and flagged, sorted by name (Metadata)."""
        return self.any_node(lambda conn: _list_on(conn, self.deadline), "Metadata")

    def describe_topics(self, names: list[str], partition_limit: int = DEFAULT_PARTITION_LIMIT, *,
                        each: bool = False) -> dict[str, TopicDescription]:
        """Describe `names` (DescribeTopicPartitions, else Metadata); raise ServerError for a failed topic, or,
        with `each`, keep it in the result as its ServerError (as Kafka's per-topic futures let a caller)."""
        if not names:
            return {}
        answers = self.any_node(lambda conn: _describe_on(conn, names, partition_limit, self.deadline),
                                "DescribeTopicPartitions")
        return _in_java_order(names, answers, each)

    def create_topics(self, topics: list[NewTopic], validate_only: bool = False) -> dict[str, CreatedTopic]:
        """Create `topics` (CreateTopics); return each one's outcome."""
        def attempt(conn: sc.SyncConnection) -> dict[str, CreatedTopic]:
            response = _create_on(conn, topics, validate_only, self.remaining_ms(), self.deadline)
            outcome = {t.name: _created(t) for t in response.topics}
            _refused_if_all(outcome.values(), lambda o: o.error)
            return {t.name: outcome.get(t.name) or _missing_topic(t.name) for t in topics}

        return self.on_controller(attempt, "CreateTopics")

    def delete_topics(self, names: list[str]) -> dict[str, ServerError | None]:
        """Delete the topics named (DeleteTopics); return each one's error or None."""
        def attempt(conn: sc.SyncConnection) -> dict[str, ServerError | None]:
            response = _delete_on(conn, names, self.remaining_ms(), self.deadline)
            outcome = {r.name: _error(r.error_code, getattr(r, "error_message", None)) for r in response.responses}
            _refused_if_all(outcome.values(), lambda e: e)
            return {name: outcome.get(name, _missing(name)) for name in names}

        return self.on_controller(attempt, "DeleteTopics")

    def create_partitions(self, increases: dict[str, tuple[int, list[list[int]] | None]],
                          validate_only: bool = False) -> dict[str, ServerError | None]:
        """Grow topics to a partition count, with the new partitions' replicas or None (the controller places
        them): {name: (count, assignments)}; return each one's error or None (CreatePartitions)."""
        def attempt(conn: sc.SyncConnection) -> dict[str, ServerError | None]:
            response = _create_partitions_on(conn, increases, validate_only, self.remaining_ms(), self.deadline)
            outcome = {r.name: _error(r.error_code, r.error_message) for r in response.results}
            _refused_if_all(outcome.values(), lambda e: e)
            return {name: outcome.get(name, _missing(name)) for name in increases}

        return self.on_controller(attempt, "CreatePartitions")


# ---------------------------------------------------------------- answers


def _uuid(raw):
    """Return a topic id as a Uuid (ZERO_UUID when the answer has none)."""
    from kraftsman.storage.protocol.uuids import ZERO_UUID, Uuid

    return ZERO_UUID if raw is None else Uuid(bytes(raw))


def _error(code: int, message: str | None) -> ServerError | None:
    return ServerError(code, error_message(code, message)) if code else None


def _missing(name: str) -> ServerError:
    return ServerError(Errors.UNKNOWN_SERVER_ERROR, f"The server response did not contain a reference to topic {name}")


def _missing_topic(name: str) -> CreatedTopic:
    return CreatedTopic(name, _missing(name))


def _refused_if_all(outcomes, error_of) -> None:
    """Raise Refused when every topic was answered NOT_CONTROLLER (the write reached a node that is not it)."""
    errors = [error_of(o) for o in outcomes]
    if errors and all(e is not None and e.code == Errors.NOT_CONTROLLER for e in errors):
        raise Refused(Errors.NOT_CONTROLLER.name)


def _created(topic) -> CreatedTopic:
    error = _error(topic.error_code, getattr(topic, "error_message", None))
    count, factor = getattr(topic, "num_partitions", -1), getattr(topic, "replication_factor", -1)
    return CreatedTopic(topic.name, error, _uuid(getattr(topic, "topic_id", None)), None if count == -1 else count,
                        None if factor == -1 else factor)


def _in_java_order(names: list[str], answers: dict[str, TopicDescription | ServerError], each: bool) -> dict:
    """Return the descriptions in Kafka's allTopicNames() order; raise the first failed topic's error unless
    `each` (then failed topics map to their errors)."""
    from kraftsman.controller.quorum.java_hash_order import JavaHashMap

    ordered = JavaHashMap(len(names))
    for name in names:
        ordered.put(name, answers.get(name) or ServerError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                                           Errors.UNKNOWN_TOPIC_OR_PARTITION.message))
    found = dict(ordered.items())
    failed = next((v for v in found.values() if isinstance(v, ServerError)), None)
    if failed is not None and not each:
        raise failed
    return found


# ---------------------------------------------------------------- requests


def _list_on(conn: sc.SyncConnection, deadline: float) -> list[TopicListing]:
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("Metadata")
    body = codec.message_class("MetadataRequest")(topics=[] if version == 0 else None)
    response = conn.request("Metadata", version, body, deadline)
    listings = [TopicListing(t.name, _uuid(getattr(t, "topic_id", None)), bool(getattr(t, "is_internal", False)))
                for t in response.topics if t.error_code == 0]
    return sorted(listings, key=lambda t: t.name)


def _describe_on(conn: sc.SyncConnection, names: list[str], limit: int, deadline: float) -> dict:
    if conn.supports("DescribeTopicPartitions", 0):
        return _partitions_pages(conn, names, limit, deadline)
    return _metadata_topics(conn, names, deadline)


def _partitions_pages(conn: sc.SyncConnection, names: list[str], limit: int, deadline: float) -> dict:
    """Ask DescribeTopicPartitions page after page; return {name: TopicDescription or ServerError}."""
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeTopicPartitionsRequest")
    found, cursor = {}, None
    while True:
        body = cls(topics=[cls.TopicRequest(name=n) for n in names], response_partition_limit=limit, cursor=cursor)
        response = conn.request("DescribeTopicPartitions", 0, body, deadline)
        for topic in response.topics:
            if topic.error_code:
                found[topic.name] = ServerError(topic.error_code, error_message(topic.error_code, None))
                continue
            described = found.setdefault(topic.name, TopicDescription(topic.name, _uuid(topic.topic_id),
                                                                      bool(topic.is_internal)))
            described.partitions += [_partition(p, elr=True) for p in topic.partitions]
        if response.next_cursor is None:
            return found
        cursor = cls.Cursor(topic_name=response.next_cursor.topic_name,
                            partition_index=response.next_cursor.partition_index)


def _metadata_topics(conn: sc.SyncConnection, names: list[str], deadline: float) -> dict:
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("MetadataRequest")
    version = conn.pick_version("Metadata")
    body = cls(topics=[cls.MetadataRequestTopic(name=n) for n in names])
    response = conn.request("Metadata", version, body, deadline)
    found = {}
    for topic in response.topics:
        if topic.error_code:
            found[topic.name] = ServerError(topic.error_code, error_message(topic.error_code, None))
        else:
            partitions = [_partition(p, elr=False) for p in topic.partitions]
            found[topic.name] = TopicDescription(topic.name, _uuid(getattr(topic, "topic_id", None)),
                                                 bool(getattr(topic, "is_internal", False)), partitions)
    return found


def _partition(p, *, elr: bool) -> TopicPartitionInfo:
    leader = p.leader_id if p.leader_id >= 0 else None
    info = TopicPartitionInfo(p.partition_index, leader, list(p.replica_nodes), list(p.isr_nodes))
    if elr:
        info.elr = list(p.eligible_leader_replicas or [])
        info.last_known_elr = list(p.last_known_elr or [])
    return info


def _create_on(conn: sc.SyncConnection, topics: list[NewTopic], validate_only: bool, timeout_ms: int,
               deadline: float):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("CreateTopicsRequest")
    creatable = []
    for t in topics:
        assignments = [cls.CreatableReplicaAssignment(partition_index=i, broker_ids=list(ids))
                       for i, ids in (t.assignments or {}).items()]
        configs = [cls.CreatableTopicConfig(name=k, value=v) for k, v in t.configs.items()]
        creatable.append(cls.CreatableTopic(name=t.name, num_partitions=-1 if t.assignments else t.num_partitions,
                                            replication_factor=-1 if t.assignments else t.replication_factor,
                                            assignments=assignments, configs=configs))
    version = conn.pick_version("CreateTopics")
    if validate_only and version < 1:
        raise sc.UnsupportedVersion(f"{conn.name} speaks CreateTopics v0 only, which cannot validate only")
    body = cls(topics=creatable, timeout_ms=timeout_ms, validate_only=validate_only)
    return conn.request("CreateTopics", version, body, deadline)


def _delete_on(conn: sc.SyncConnection, names: list[str], timeout_ms: int, deadline: float):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DeleteTopicsRequest")
    version = conn.pick_version("DeleteTopics")
    if version >= 6:
        body = cls(topics=[cls.DeleteTopicState(name=n) for n in names], timeout_ms=timeout_ms)
    else:
        body = cls(topic_names=list(names), timeout_ms=timeout_ms)
    return conn.request("DeleteTopics", version, body, deadline)


def _create_partitions_on(conn: sc.SyncConnection, increases: dict, validate_only: bool, timeout_ms: int,
                          deadline: float):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("CreatePartitionsRequest")
    topics = []
    for name, (count, assignments) in increases.items():
        made = None if assignments is None else [cls.CreatePartitionsAssignment(broker_ids=list(ids))
                                                 for ids in assignments]
        topics.append(cls.CreatePartitionsTopic(name=name, count=count, assignments=made))
    body = cls(topics=topics, timeout_ms=timeout_ms, validate_only=validate_only)
    return conn.request("CreatePartitions", conn.pick_version("CreatePartitions"), body, deadline)
