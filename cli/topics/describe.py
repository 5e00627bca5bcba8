"""kafka-topics --describe: TopicService.describeTopic's requests, filters and lines.

Rules:
- Requests as Kafka 3.9 sends them: the matching topics (Metadata), their descriptions (DescribeTopicPartitions,
  at most --partition-size-limit-per-response partitions an answer), their configs (DescribeConfigs), the live
  brokers (DescribeCluster) and the ongoing reassignments of their partitions (ListPartitionReassignments at the
  controller; a server without it, or refusing it, means none).
- Topics come in the order Kafka prints them (its describeTopics map: controller.client.admin keeps it),
  partitions by index. A topic's line: `Topic: <name>\tTopicId: <id>\tPartitionCount: N\tReplicationFactor: R
  \tConfigs: <non-default entries, Kafka's Config order>`; a partition's: `\tTopic: ...\tPartition: ...\tLeader:
  <id|none>\tReplicas: ...\tIsr: ...[\tAdding Replicas: ...\tRemoving Replicas: ...]\tElr: ...\tLastKnownElr:
  ...` (N/A when the answer had no ELR lists: Metadata).
- Filters (DescribeOptions): any of --under-replicated-partitions, --unavailable-partitions,
  --under-min-isr-partitions, --at-min-isr-partitions prints only the partitions it selects and no topic lines;
  --topics-with-overrides prints only the topic lines of topics with a non-default config.
- The replication factor of a partition being reassigned is its target's (replicas minus the adding ones).
"""
from __future__ import annotations

from ..common import jopt
from ..common.status import ExitStatus
from .select import REPORTS, ensure_exists, matching_topics

TOPIC_RESOURCE = 2
MIN_ISR = "min.insync.replicas"


def describe(r: jopt.Run) -> int:
    """Describe the matching topics (or the one --topic-id names); return the exit status."""
    names = _named_by_id(r) if r.args.topic_id else matching_topics(r)
    if not r.args.topic_id:
        ensure_exists(r, names)
    admin = r.admin()
    limit = 2000 if r.args.partition_size_limit_per_response is None else \
        jopt.java_int(r.args.partition_size_limit_per_response, "partition-size-limit-per-response")
    described = r.call(admin.describe_topics, names, limit)
    configs = r.call(admin.describe_configs, [(TOPIC_RESOURCE, n) for n in described]) if described else {}
    live = {node.node_id for node in r.call(admin.describe_cluster).nodes}
    moving = _reassignments(r, admin, described)
    lines, topics = [], []
    for name, topic in described.items():
        config = configs[(TOPIC_RESOURCE, name)]
        if config.error is not None:
            raise jopt.server_error(config.error)
        shown = _topic(r, topic, config, live, moving)
        if shown is not None:
            lines += shown[0]
            topics.append(shown[1])
    r.emit("\n".join(lines), topics=topics)
    return ExitStatus.OK


def _named_by_id(r: jopt.Run) -> list[str]:
    """Return the name of the topic --topic-id names (TopicId '...' does not exist as expected, unless
    --if-exists)."""
    from kraftsman.storage.protocol.uuids import Uuid, UuidError

    try:
        wanted = Uuid.from_string(r.args.topic_id)
    except (UuidError, ValueError) as e:
        raise jopt.KafkaError(str(e)) from None
    admin = r.admin()
    found = [t.name for t in r.call(admin.list_topics) if t.topic_id == wanted and
             not (r.has("exclude_internal") and t.internal)]
    if not found and not r.has("if_exists"):
        raise jopt.KafkaError(f"TopicId '{wanted}' does not exist as expected")
    return found


def _reassignments(r: jopt.Run, admin, described: dict) -> dict:
    """Return the ongoing reassignments of the described partitions ({} when the server lacks the API)."""
    partitions = {(name, p.partition) for name, t in described.items() for p in t.partitions}
    try:
        return r.call(admin.list_partition_reassignments, partitions)
    except jopt.KafkaError as e:
        if e.java_class in (jopt.UNSUPPORTED_EXCEPTION,
                            "org.apache.kafka.common.errors.ClusterAuthorizationException"):
            return {}
        raise


def _topic(r: jopt.Run, topic, config, live: set[int], moving: dict):
    """Return (the lines to print, the JSON object) of one topic as the filters select it, or None."""
    reporting = any(r.has(name) for name in REPORTS)
    overrides = [e for e in config.entries if not e.is_default]
    partitions = sorted(topic.partitions, key=lambda p: p.partition)
    lines, shown = [], []
    factor = replication_factor(partitions[0], moving.get((topic.name, partitions[0].partition)))
    if not reporting and (not r.has("topics_with_overrides") or overrides):
        lines.append(topic_line(topic, len(partitions), factor, overrides))
    if not r.has("topics_with_overrides"):
        for p in partitions:
            reassignment = moving.get((topic.name, p.partition))
            if not reporting or _selected(r, p, reassignment, _min_isr(config), live):
                lines.append(partition_line(topic.name, p, reassignment))
                shown.append(partition_object(p, reassignment))
    if not lines:
        return None
    return lines, {"name": topic.name, "topic_id": str(topic.topic_id), "partition_count": len(partitions),
                   "replication_factor": factor,
                   "configs": {e.name: e.value for e in overrides}, "partitions": shown}


def _min_isr(config) -> int:
    entry = config.get(MIN_ISR)
    return int(entry.value) if entry is not None and entry.value is not None else 1


def _selected(r: jopt.Run, p, reassignment, min_isr: int, live: set[int]) -> bool:
    """Tell whether a report flag selects partition `p` (DescribeOptions.shouldPrintTopicPartition)."""
    return (r.has("under_replicated_partitions") and replication_factor(p, reassignment) - len(p.isr) > 0) or \
        (r.has("unavailable_partitions") and (p.leader is None or p.leader not in live)) or \
        (r.has("under_min_isr_partitions") and (p.leader is None or len(p.isr) < min_isr)) or \
        (r.has("at_min_isr_partitions") and len(p.isr) == min_isr)


def replication_factor(p, reassignment) -> int:
    """Return a partition's replication factor: its target's while a reassignment is changing it."""
    if reassignment is not None and set(p.replicas) & (set(reassignment.adding_replicas) |
                                                       set(reassignment.removing_replicas)):
        return len(reassignment.replicas) - len(reassignment.adding_replicas)
    return len(p.replicas)


def _ids(values) -> str:
    return ",".join(str(v) for v in values)


def topic_line(topic, count: int, factor: int, overrides) -> str:
    """Return Kafka's topic line (TopicDescription.printDescription)."""
    from kraftsman.storage.protocol.uuids import ZERO_UUID

    configs = ",".join(f"{e.name}={'null' if e.value is None else e.value}" for e in overrides)
    topic_id = "" if topic.topic_id == ZERO_UUID else f"\tTopicId: {topic.topic_id}"
    return f"Topic: {topic.name}{topic_id}\tPartitionCount: {count}\tReplicationFactor: {factor}\tConfigs: {configs}"


def partition_line(name: str, p, reassignment) -> str:
    """Return Kafka's partition line (PartitionDescription.printDescription)."""
    line = (f"\tTopic: {name}\tPartition: {p.partition}\tLeader: {'none' if p.leader is None else p.leader}"
            f"\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(p.isr)}")
    if reassignment is not None:
        line += (f"\tAdding Replicas: {_ids(reassignment.adding_replicas)}"
                 f"\tRemoving Replicas: {_ids(reassignment.removing_replicas)}")
    line += f"\tElr: {'N/A' if p.elr is None else _ids(p.elr)}"
    return line + f"\tLastKnownElr: {'N/A' if p.last_known_elr is None else _ids(p.last_known_elr)}"


def partition_object(p, reassignment) -> dict:
    """Return a partition as the JSON/YAML output shows it."""
    obj = {"partition": p.partition, "leader": p.leader, "replicas": p.replicas, "isr": p.isr, "elr": p.elr,
           "last_known_elr": p.last_known_elr}
    if reassignment is not None:
        obj |= {"adding_replicas": reassignment.adding_replicas, "removing_replicas": reassignment.removing_replicas}
    return obj
