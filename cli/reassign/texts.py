"""kafka-reassign-partitions' texts (Kafka 3.9's ReassignPartitionsCommand), all printed on stdout: plans, states of
reassignments, throttle notices, cancellations and the terse errors that end a run.

Rules:
- Partitions are listed sorted by topic (Java's String order) then partition, as "topic-partition".
- A state is (current replicas, target replicas, done): done and equal is "completed", done and different is
  "There is no active reassignment of partition t-0, but replica set is 4 rather than 5.", not done is "still in
  progress". A partition with an ongoing reassignment is not done (its current replicas are the reassignment's);
  any other takes its replicas from the topic's description, none when the topic or partition is missing.
- Kafka's quirks are kept: after cancelling, "None of the specified partition moves are active." has no newline,
  so the next line follows it on the same line; "broker"/"brokers", "topic"/"topics", "reassignment"/
  "reassignments" follow the count.
- Any other failure is "Error: <message>", the stack trace and an empty line on stdout (jopt.stdout_error),
  exit 1.
- A TerseException (Kafka's own one-line failures: an existing reassignment without --additional, partitions the
  controller refused) is printed as its message alone, exit 1.
"""
from __future__ import annotations

from dataclasses import dataclass

from kraftsman.controller.quorum.java_hash_order import hash_set_order, int_hash, string_hash

from ..common.jopt import KafkaError
from .plan_files import format_plan, partition_order

EXISTING_REASSIGNMENT = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used to "
    "change the throttle by resubmitting the current reassignment.")
VERIFY_WARNING = ("Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
                  "throttle is removed.")
NO_MOVES = "None of the specified partition moves are active."


class TerseException(Exception):
    """Kafka's TerseException: its message is all that is printed (stdout, exit 1); `fields` go into the
    --output json|yaml failure object (what was applied before it)."""

    fields: dict = {}


@dataclass
class ReassignmentState:
    """One partition's reassignment as --verify sees it (Kafka's PartitionReassignmentState)."""

    current: list[int]
    target: list[int]
    done: bool


def partition_text(tp: tuple[str, int]) -> str:
    """Return Kafka's TopicPartition.toString()."""
    return f"{tp[0]}-{tp[1]}"


def _sorted(partitions) -> list:
    return sorted(partitions, key=partition_order)


def _ids(values) -> str:
    return ",".join(map(str, values))


def plural(count: int, word: str) -> str:
    """Return `word` with an "s" unless `count` is 1, as Kafka's texts pluralize."""
    return word if count == 1 else word + "s"


def reassignment_states(targets: list, ongoing: dict, topics: dict) -> dict:
    """Return {(topic, partition): ReassignmentState} for the plan's targets ((partition, replicas) pairs), the
    ongoing reassignments and the plan's topics' descriptions (a TopicDescription, or an error for a missing
    topic) (findPartitionReassignmentStates). Kafka's partition count check lets a partition number equal to the
    count (or negative) through to a list lookup: IndexOutOfBoundsException, as Kafka fails."""
    states = {}
    for tp, target in targets:
        if tp in ongoing:
            states[tp] = ReassignmentState(list(ongoing[tp].replicas), list(target), False)
            continue
        described = topics.get(tp[0])
        partitions = getattr(described, "partitions", None)
        if partitions is None or len(partitions) < tp[1]:
            states[tp] = ReassignmentState([], list(target), True)
        elif not 0 <= tp[1] < len(partitions):
            raise KafkaError(f"Index {tp[1]} out of bounds for length {len(partitions)}",
                             "java.lang.IndexOutOfBoundsException")
        else:
            states[tp] = ReassignmentState(list(partitions[tp[1]].replicas), list(target), True)
    return states


def status_text(states: dict) -> str:
    """Return "Status of partition reassignment:" and a line per partition."""
    lines = ["Status of partition reassignment:"]
    for tp in _sorted(states):
        state = states[tp]
        if not state.done:
            lines.append(f"Reassignment of partition {partition_text(tp)} is still in progress.")
        elif state.current == state.target:
            lines.append(f"Reassignment of partition {partition_text(tp)} is completed.")
        else:
            lines.append(f"There is no active reassignment of partition {partition_text(tp)}, but replica set is "
                         f"{_ids(state.current)} rather than {_ids(state.target)}.")
    return "\n".join(lines)


def current_assignment_text(targets: dict, current: dict) -> str:
    """Return --execute's rollback text: the current replicas of the plan's partitions."""
    kept = {tp: replicas for tp, replicas in current.items() if tp in targets}
    return ("Current partition replica assignment\n\n" + format_plan(kept) +
            "\n\nSave this to use as the --reassignment-json-file option during rollback")


def generate_text(current: dict, proposed: dict) -> str:
    """Return --generate's text: the current and the proposed assignment."""
    return (f"Current partition replica assignment\n{format_plan(current)}\n\n"
            f"Proposed partition reassignment configuration\n{format_plan(proposed)}")


def started_text(targets) -> str:
    """Return "Successfully started partition reassignment(s) for t-0,t-1"."""
    names = ",".join(partition_text(tp) for tp in _sorted(targets))
    return f"Successfully started partition {plural(len(targets), 'reassignment')} for {names}"


def partition_errors(errors: dict) -> str:
    """Return the "topic-partition: message" lines of failed partitions ({tp: exception}), sorted."""
    return "\n".join(f"{partition_text(tp)}: {errors[tp]}" for tp in _sorted(errors))


def reassign_failed(errors: dict) -> TerseException:
    """Return the TerseException --execute ends with when the controller refused some partitions."""
    return TerseException("Error reassigning partition(s):\n" + partition_errors(errors))


def cancel_failed(errors: dict) -> TerseException:
    """Return the TerseException --cancel ends with when some cancellations failed."""
    return TerseException(f"Error cancelling partition {plural(len(errors), 'reassignment')} for:\n"
                          + partition_errors(errors))


def cancelled_text(cancelled) -> str:
    """Return the line --cancel prints for the reassignments it cancelled (or found none to cancel)."""
    if not cancelled:
        return "None of the specified partition reassignments are active."
    names = ",".join(partition_text(tp) for tp in _sorted(cancelled))
    return f"Successfully cancelled partition {plural(len(cancelled), 'reassignment')} for: {names}"


def list_text(ongoing: dict) -> str:
    """Return --list's text for the ongoing reassignments ({tp: PartitionReassignment})."""
    if not ongoing:
        return "No partition reassignments found."
    lines = ["Current partition reassignments:"]
    for tp in _sorted(ongoing):
        r = ongoing[tp]
        adding = f" adding: {_ids(r.adding_replicas)}." if r.adding_replicas else ""
        removing = f" removing: {_ids(r.removing_replicas)}." if r.removing_replicas else ""
        lines.append(f"{partition_text(tp)}: replicas: {_ids(r.replicas)}.{adding}{removing}")
    return "\n".join(lines)


def clearing_brokers_text(brokers: list[int]) -> str:
    """Return "Clearing broker-level throttles on brokers 4,5" (`brokers` in Java's HashSet order)."""
    return f"Clearing broker-level throttles on {plural(len(brokers), 'broker')} {_ids(brokers)}"


def clearing_topics_text(topics: list[str]) -> str:
    """Return "Clearing topic-level throttles on topic t" (`topics` in Java's HashSet order)."""
    return f"Clearing topic-level throttles on {plural(len(topics), 'topic')} {','.join(topics)}"


def clearing_sets(cluster_brokers: list[int], targets: list) -> tuple[list[int], list[str]]:
    """Return the brokers (the cluster's, then the plan's replicas) and topics whose throttles --verify and --cancel
    clear, each in the order of the Java HashSet Kafka builds."""
    brokers = hash_set_order([*cluster_brokers, *(b for _, replicas in targets for b in replicas)], int_hash)
    topics = hash_set_order([tp[0] for tp, _ in targets], string_hash)
    return brokers, topics

