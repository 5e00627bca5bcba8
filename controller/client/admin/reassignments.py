"""Kafka's partition reassignment calls: list_partition_reassignments (ListPartitionReassignments v0) and
alter_partition_reassignments (AlterPartitionReassignments v0).

Rules:
- The requests go to the controller (core.on_controller). `partitions` None asks for every ongoing
  reassignment (null topics); a set of (topic, partition) asks for those, grouped by topic.
- The answer maps (topic, partition) to a PartitionReassignment; a top-level error raises ServerError (Kafka's
  message rule), NOT_CONTROLLER a refusal (retried at the controller the metadata names next).
- alter_partition_reassignments starts ({(topic, partition): replicas}) or cancels (replicas None) and answers
  {(topic, partition): None or ServerError}, as Kafka's futures complete: a top-level error fails every partition
  the answer lists; an answer with too many or too few partitions (and no error) raises UNKNOWN_SERVER_ERROR with
  Kafka's "The server returned too less results.Expected 1 but received 0".
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors

from .. import sync_client as sc
from .core import ServerError, error_message, raise_for
from .results import PartitionReassignment


class ReassignmentCalls:
    """ListPartitionReassignments and AlterPartitionReassignments (a part of Admin)."""

    def list_partition_reassignments(self, partitions=None) -> dict[tuple[str, int], PartitionReassignment]:
        """Return the ongoing reassignments of `partitions` ((topic, index) pairs; None: of every partition)."""
        return self.on_controller(lambda conn: _list_on(conn, partitions, self.remaining_ms(), self.deadline),
                                  "ListPartitionReassignments")

    def alter_partition_reassignments(self, targets: dict) -> dict:
        """Start or cancel the reassignments of `targets` ({(topic, partition): replicas or None}); return each
        partition's None or ServerError (see Rules)."""
        if not targets:
            return {}
        return self.on_controller(lambda conn: _alter_on(conn, targets, self.remaining_ms(), self.deadline),
                                  "AlterPartitionReassignments")


def _list_on(conn: sc.SyncConnection, partitions, timeout_ms: int, deadline: float) -> dict:
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("ListPartitionReassignmentsRequest")
    topics = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(partitions):
            by_topic.setdefault(topic, []).append(index)
        topics = [cls.ListPartitionReassignmentsTopics(name=t, partition_indexes=p) for t, p in by_topic.items()]
    body = cls(timeout_ms=timeout_ms, topics=topics)
    response = conn.request("ListPartitionReassignments", conn.pick_version("ListPartitionReassignments"), body,
                            deadline)
    raise_for(response.error_code, response.error_message)
    return {(t.name, p.partition_index): PartitionReassignment(list(p.replicas), list(p.adding_replicas),
                                                               list(p.removing_replicas))
            for t in response.topics for p in t.partitions}


def _alter_on(conn: sc.SyncConnection, targets: dict, timeout_ms: int, deadline: float) -> dict:
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("AlterPartitionReassignmentsRequest")
    by_topic: dict[str, list] = {}
    for (topic, index), replicas in sorted(targets.items()):
        by_topic.setdefault(topic, []).append(cls.ReassignablePartition(partition_index=index, replicas=replicas))
    topics = [cls.ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()]
    body = cls(timeout_ms=timeout_ms, topics=topics)
    response = conn.request("AlterPartitionReassignments", conn.pick_version("AlterPartitionReassignments"), body,
                            deadline)
    if response.error_code == Errors.NOT_CONTROLLER:
        raise_for(response.error_code, response.error_message)
    listed = [((t.name, p.partition_index), p) for t in response.responses for p in t.partitions]
    if response.error_code:
        failure = ServerError(response.error_code, error_message(response.error_code, response.error_message))
        return {tp: failure for tp, _ in listed}
    found = {tp: ServerError(p.error_code, error_message(p.error_code, p.error_message)) if p.error_code else None
             for tp, p in listed}
    if len(listed) != len(targets) and not any(found.values()):        # Kafka's assertResponseCountMatch
        quantifier = "many" if len(listed) > len(targets) else "less"
        raise ServerError(Errors.UNKNOWN_SERVER_ERROR, f"The server returned too {quantifier} results.Expected "
                                                       f"{len(targets)} but received {len(listed)}")
    return {tp: found.get(tp) for tp in targets}
