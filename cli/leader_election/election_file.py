"""The partition list of kafka-leader-election's --path-to-json-file, read as Kafka 3.9's LeaderElectionCommand reads
it, with the exceptions it throws for a missing, malformed or wrong-shaped file.

Rules:
- Format: {"partitions": [{"topic": "foo", "partition": 1}, ...]} (other fields are ignored, as in Kafka).
- A file Java cannot read is wrapped in a RuntimeException (its message the java.nio exception's toString); text
  that is not JSON is "Replica election data is empty" (AdminOperationException, as Json.parseFull gives nothing);
  a missing "partitions" field is 'Replica election data is missing "partitions" field'; a wrong shape is the
  JsonMappingException wrapped in a RuntimeException; a partition listed twice is "Replica election data contains
  duplicate partitions: [t-1, t-2]" (the duplicates in Java's HashSet order).
- The result is the set of (topic, partition) pairs in the file's order, duplicates removed (an empty list is an
  empty set: Kafka sends it and elects nothing).
"""
from __future__ import annotations

from collections import Counter

from kraftsman.controller.quorum.java_hash_order import hash_set_order, topic_partition_hash

from ..common import kafka_json as kj
from ..common.jopt import KafkaError, wrapped

ADMIN_OPERATION = "org.apache.kafka.server.common.AdminOperationException"
RUNTIME = "java.lang.RuntimeException"


def read_election_file(path: str, cwd: str | None = None) -> list[tuple[str, int]]:
    """Return the partitions the file lists (a relative path from `cwd`), or raise the KafkaError
    LeaderElectionCommand throws."""
    try:
        text = kj.read_file(path, cwd)
    except KafkaError as e:
        raise wrapped(RUNTIME, e) from None
    value = kj.parse_full(text)
    if value is None:
        raise KafkaError("Replica election data is empty", ADMIN_OPERATION)
    try:
        partitions = kj.as_object(value)
        if "partitions" not in partitions:
            raise KafkaError('Replica election data is missing "partitions" field', ADMIN_OPERATION)
        return _partitions(partitions["partitions"])
    except KafkaError as e:
        if e.java_class != kj.MAPPING:
            raise
        raise wrapped(RUNTIME, e) from None


def _partitions(value) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for item in kj.as_array(value):
        entry = kj.as_object(item)
        topic = kj.to_str(kj.field(entry, "topic"))
        found.append((topic, kj.to_int(kj.field(entry, "partition"))))
    counts = Counter(found)
    duplicates = [tp for tp in found if counts[tp] > 1]
    if duplicates:
        listed = ", ".join(f"{t}-{p}" for t, p in hash_set_order(duplicates, topic_partition_hash))
        raise KafkaError(f"Replica election data contains duplicate partitions: [{listed}]", ADMIN_OPERATION)
    return list(dict.fromkeys(found))
