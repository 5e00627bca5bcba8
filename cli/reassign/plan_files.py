"""kafka-reassign-partitions' JSON files, read and written as Kafka 3.9's ReassignPartitionsCommand does: reassignment
plans (--reassignment-json-file), topics to move (--topics-to-move-json-file) and --broker-list, with the
exceptions Kafka throws for malformed or wrong-shaped input.

Rules:
- A plan: {"version": 1, "partitions": [{"topic": "foo", "partition": 1, "replicas": [1, 2], "log_dirs":
  ["any", "/data"]}]}. "version" defaults to 1 and any other is "Not supported version field value N";
  "partitions" may be absent (no partitions); "log_dirs" is optional and must be as long as "replicas" ("Size of
  replicas list [1, 2] is different from size of log dirs list [any] for partition foo-1"); a log dir other than
  "any" asks for a move between the broker's log directories.
- Text that is no JSON is the parser's exception wrapped in an AdminOperationException (plans) or "The input string
  is not a valid JSON" (topics files); wrong shapes are JsonMappingExceptions (kafka_json's texts).
- --execute checks a plan before anything is sent: not empty, no empty replica list, no partition twice, no broker
  twice in one replica list, each with Kafka's text.
- --generate: --broker-list is Integer.parseInt of each comma-separated item (Java's split drops trailing empty
  items); brokers or topics listed twice are refused with the duplicates in Java's HashSet order.
- format_plan writes Kafka's compact JSON: version, then the partitions sorted by topic and partition, each with
  topic, partition, replicas and log_dirs ("any" unless the plan named a directory).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from kraftsman.controller.quorum.java_hash_order import (
    hash_set_order,
    int_hash,
    java_order,
    string_hash,
    topic_partition_hash,
)

from ..common import kafka_json as kj
from ..common.jopt import KafkaError, wrapped

ADMIN_OPERATION = "org.apache.kafka.server.common.AdminOperationException"
ADMIN_COMMAND_FAILED = "org.apache.kafka.server.common.AdminCommandFailedException"
NUMBER_FORMAT = "java.lang.NumberFormatException"
ANY_LOG_DIR = "any"
_JAVA_INT = re.compile(r"[+-]?\d+")


@dataclass
class Plan:
    """A reassignment plan: target replicas per partition (file order, duplicates kept, as Kafka parses it) and
    the log directories named for replicas ((topic, partition, broker) -> directory)."""

    partitions: list[tuple[tuple[str, int], list[int]]] = field(default_factory=list)
    log_dirs: dict[tuple[str, int, int], str] = field(default_factory=dict)

    def targets(self) -> dict[tuple[str, int], list[int]]:
        """Return {partition: target replicas} (the last entry wins for a partition listed twice)."""
        return dict(self.partitions)


def java_list(values) -> str:
    """Return Java's List.toString(): "[a, b]"."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def _version(obj: dict) -> int:
    version = kj.to_int(obj["version"]) if "version" in obj else 1
    if version != 1:
        raise KafkaError(f"Not supported version field value {version}", ADMIN_OPERATION)
    return version


def parse_plan(text: str) -> Plan:
    """Parse a reassignment plan (parsePartitionReassignmentData) or raise Kafka's exception."""
    try:
        value = kj.try_parse_full(text)
    except KafkaError as e:
        raise wrapped(ADMIN_OPERATION, e) from None
    obj = kj.as_object(value)
    _version(obj)
    plan = Plan()
    for item in kj.as_array(obj["partitions"]) if "partitions" in obj else []:
        entry = kj.as_object(item)
        topic = kj.to_str(kj.field(entry, "topic"))
        index = kj.to_int(kj.field(entry, "partition"))
        replicas = kj.to_list(kj.field(entry, "replicas"), kj.to_int)
        dirs = kj.to_list(entry["log_dirs"], kj.to_str) if "log_dirs" in entry else [ANY_LOG_DIR] * len(replicas)
        if len(dirs) != len(replicas):
            raise KafkaError(f"Size of replicas list {java_list(replicas)} is different from size of log dirs list "
                             f"{java_list(dirs)} for partition {topic}-{index}", ADMIN_COMMAND_FAILED)
        plan.partitions.append(((topic, index), replicas))
        for broker, directory in zip(replicas, dirs):
            if directory != ANY_LOG_DIR:
                plan.log_dirs[(topic, index, broker)] = directory
    return plan


def check_execute(plan: Plan) -> None:
    """Refuse a plan --execute cannot run (parseExecuteAssignmentArgs), before anything is sent."""
    if not plan.partitions:
        raise KafkaError("Partition reassignment list cannot be empty", ADMIN_COMMAND_FAILED)
    if any(not replicas for _, replicas in plan.partitions):
        raise KafkaError("Partition replica list cannot be empty", ADMIN_COMMAND_FAILED)
    twice = duplicates([tp for tp, _ in plan.partitions], topic_partition_hash)
    if twice:
        names = ",".join(f"{t}-{p}" for t, p in twice)
        raise KafkaError(f"Partition reassignment contains duplicate topic partitions: {names}", ADMIN_COMMAND_FAILED)
    repeated = [(tp, duplicates(replicas, int_hash)) for tp, replicas in plan.partitions]
    repeated = [(tp, brokers) for tp, brokers in repeated if brokers]
    if repeated:
        text = ". ".join(f"{t}-{p} contains multiple entries for {','.join(map(str, brokers))}"
                         for (t, p), brokers in repeated)
        raise KafkaError(f"Partition replica lists may not contain duplicate entries: {text}", ADMIN_COMMAND_FAILED)


def duplicates(items: list, hash_of) -> list:
    """Return the items listed more than once, once each, in Java's HashSet order (ToolsUtils.duplicates)."""
    seen, again = set(), []
    for item in items:
        if item in seen:
            again.append(item)
        seen.add(item)
    return hash_set_order(again, hash_of)


def parse_topics(text: str) -> list[str]:
    """Parse a topics-to-move file (parseTopicsData): the topic names in file order."""
    value = kj.parse_full(text)
    if value is None:
        raise KafkaError("The input string is not a valid JSON", ADMIN_OPERATION)
    obj = kj.as_object(value)
    _version(obj)
    if "topics" not in obj:
        return []
    return [kj.to_str(kj.field(kj.as_object(item), "topic")) for item in kj.as_array(obj["topics"])]


def parse_broker_list(text: str) -> list[int]:
    """Parse --broker-list as Kafka does (String.split(",") then Integer.parseInt)."""
    items = text.split(",")
    while len(items) > 1 and items[-1] == "":
        items.pop()
    brokers = []
    for item in items:
        if not _JAVA_INT.fullmatch(item) or int(item) not in kj.INT_RANGE:
            raise KafkaError(f'For input string: "{item}"', NUMBER_FORMAT)
        brokers.append(int(item))
    return brokers


def check_brokers(brokers: list[int]) -> None:
    """Refuse brokers listed twice in --broker-list (parseGenerateAssignmentArgs)."""
    twice = duplicates(brokers, int_hash)
    if twice:
        raise KafkaError(f"Broker list contains duplicate entries: {java_list(twice)}", ADMIN_COMMAND_FAILED)


def check_topics(topics: list[str]) -> None:
    """Refuse topics listed twice in a topics-to-move file (parseGenerateAssignmentArgs)."""
    again = duplicates(topics, string_hash)
    if again:
        raise KafkaError(f"List of topics to reassign contains duplicate entries: {java_list(again)}",
                         ADMIN_COMMAND_FAILED)


def format_plan(assignment: dict, log_dirs: dict | None = None) -> str:
    """Return Kafka's JSON for {(topic, partition): replicas} (formatAsReassignmentJson)."""
    log_dirs = log_dirs or {}
    partitions = [{"topic": t, "partition": p, "replicas": list(replicas),
                   "log_dirs": [log_dirs.get((t, p, r), ANY_LOG_DIR) for r in replicas]}
                  for (t, p), replicas in sorted(assignment.items(), key=lambda item: partition_order(item[0]))]
    return kj.write({"version": 1, "partitions": partitions})


def plan_fields(assignment: dict) -> list[dict]:
    """Return the "partitions" of format_plan's JSON for {(topic, partition): replicas}, as objects."""
    import json

    return json.loads(format_plan(assignment))["partitions"]


def partition_order(tp: tuple[str, int]) -> tuple:
    """Return the sort key of a (topic, partition) pair as Kafka sorts them: topic (Java's String order), partition."""
    return java_order(tp[0]), tp[1]
