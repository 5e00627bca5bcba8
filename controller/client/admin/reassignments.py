"""Kafka's partition reassignment calls: list_partition_reassignments (ListPartitionReassignments v0).

Rules:
- The request goes to the controller (core.on_controller). `partitions` None asks for every ongoing
  reassignment (null topics); a set of (topic, partition) asks for those, grouped by topic.
- The answer maps (topic, partition) to a PartitionReassignment; a top-level error raises ServerError (Kafka's
  message rule), NOT_CONTROLLER a refusal (retried at the controller the metadata names next).
"""
from __future__ import annotations

from .. import sync_client as sc
from .core import raise_for
from .results import PartitionReassignment


class ReassignmentCalls:
    """ListPartitionReassignments (a part of Admin)."""

    def list_partition_reassignments(self, partitions=None) -> dict[tuple[str, int], PartitionReassignment]:
        """Return the ongoing reassignments of `partitions` ((topic, index) pairs; None: of every partition)."""
        return self.on_controller(lambda conn: _list_on(conn, partitions, self.remaining_ms(), self.deadline),
                                  "ListPartitionReassignments")


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
