"""kafka-leader-election's texts (Kafka 3.9's LeaderElectionCommand): the outcome of an election, per partition, and
the exceptions it ends with.

Rules:
- The answer is read as Kafka's Admin client reads it (a HashMap of TopicPartition by the answer's order), then
  split into three Java collections, printed in their iteration order (java_hash_order): elected ("Successfully
  completed leader election (PREFERRED) for partitions t-0, t-1"), not needed ("Valid replica already elected for
  partitions t-2") and failed (one "Error completing leader election (PREFERRED) for partition: t-3: <exception>"
  line each), all on stdout.
- Failures end the run as an AdminCommandFailedException "N replica(s) could not be elected" carrying each
  partition's exception as suppressed (stderr, exit 1).
- partition_text(topic, partition) is TopicPartition.toString(): "topic-partition".
- Any failure is printed on stderr as Kafka's mainNoExit prints it (jopt.uncaught): getMessage(), then the
  stack trace and an empty line; exit 1.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraftsman.controller.quorum.java_hash_order import JavaHashMap, topic_partition_hash

from ..common.jopt import KafkaError, server_error

ADMIN_COMMAND_FAILED = "org.apache.kafka.server.common.AdminCommandFailedException"
ELECTION_NOT_NEEDED = 84
ELECTION_TYPES = {0: "PREFERRED", 1: "UNCLEAN"}


def partition_text(tp: tuple[str, int]) -> str:
    """Return Kafka's TopicPartition.toString()."""
    return f"{tp[0]}-{tp[1]}"


@dataclass
class ElectionOutcome:
    """The partitions of one election, each collection in Java's iteration order."""

    elected: list[tuple[str, int]] = field(default_factory=list)
    not_needed: list[tuple[str, int]] = field(default_factory=list)
    failed: list[tuple[tuple[str, int], KafkaError]] = field(default_factory=list)


def outcome(results: dict) -> ElectionOutcome:
    """Split an election's answer ({(topic, partition): None or ServerError}, in the answer's order)."""
    answer = JavaHashMap(hash_of=topic_partition_hash)
    for tp, error in results.items():
        answer.put(tp, error)
    elected, not_needed = JavaHashMap(hash_of=topic_partition_hash), JavaHashMap(hash_of=topic_partition_hash)
    failed = JavaHashMap(hash_of=topic_partition_hash)
    for tp, error in answer.items():
        if error is None:
            elected.put(tp, True)
        elif error.code == ELECTION_NOT_NEEDED:
            not_needed.put(tp, True)
        else:
            failed.put(tp, server_error(error))
    return ElectionOutcome(elected.keys(), not_needed.keys(), failed.items())


def outcome_lines(election_type: int, result: ElectionOutcome) -> list[str]:
    """Return the stdout lines Kafka prints for an election's outcome."""
    kind = ELECTION_TYPES[election_type]
    lines = []
    if result.elected:
        lines.append(f"Successfully completed leader election ({kind}) for partitions "
                     + ", ".join(map(partition_text, result.elected)))
    if result.not_needed:
        names = ", ".join(map(partition_text, result.not_needed))
        lines.append(f"Valid replica already elected for partitions {names}")
    for tp, error in result.failed:
        lines.append(f"Error completing leader election ({kind}) for partition: {partition_text(tp)}: "
                     f"{error.java_string()}")
    return lines


def failure(result: ElectionOutcome) -> KafkaError | None:
    """Return the exception the run ends with when some partitions failed, else None."""
    if not result.failed:
        return None
    return KafkaError(f"{len(result.failed)} replica(s) could not be elected", ADMIN_COMMAND_FAILED,
                      suppressed=[error for _, error in result.failed])

