"""Kafka's leader election call: elect_leaders (ElectLeaders, KIP-460).

Rules:
- The request goes to the controller (core.on_controller), at the highest version both sides speak (v1+ carry the
  ElectionType: PREFERRED 0, UNCLEAN 1), with the time left as its timeout.
- `partitions` None elects every partition (null TopicPartitions: the controller leaves out those whose election
  is not needed); a list of (topic, partition) pairs is grouped by topic in its order.
- The answer maps (topic, partition) to None (elected) or ServerError (ELECTION_NOT_NEEDED among them), in the
  answer's order; an error of the whole answer (v1+) raises ServerError with the code's default message (Kafka's
  client reads no message there), NOT_CONTROLLER a refusal.
"""
from __future__ import annotations

from .. import sync_client as sc
from .core import ServerError, error_message, raise_for

PREFERRED, UNCLEAN = 0, 1                       # ElectLeaders' ElectionType


class ElectionCalls:
    """ElectLeaders (a part of Admin)."""

    def elect_leaders(self, election_type: int, partitions) -> dict:
        """Elect leaders of `partitions` (see Rules); return {(topic, partition): None or ServerError}."""
        return self.on_controller(lambda conn: _elect_on(conn, election_type, partitions, self.remaining_ms(),
                                                         self.deadline), "ElectLeaders")


def _elect_on(conn: sc.SyncConnection, election_type: int, partitions, timeout_ms: int, deadline: float) -> dict:
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("ElectLeadersRequest")
    wanted = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for topic, index in partitions:
            by_topic.setdefault(topic, []).append(index)
        wanted = [cls.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()]
    body = cls(election_type=election_type, topic_partitions=wanted, timeout_ms=timeout_ms)
    response = conn.request("ElectLeaders", conn.pick_version("ElectLeaders"), body, deadline)
    raise_for(getattr(response, "error_code", 0), None)
    return {(r.topic, p.partition_id): ServerError(p.error_code, error_message(p.error_code, p.error_message))
            if p.error_code else None for r in response.replica_election_results for p in r.partition_result}
