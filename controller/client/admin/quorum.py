"""Kafka's quorum calls: describe_metadata_quorum (DescribeQuorum), add_raft_voter and remove_raft_voter (KIP-853).

Rules:
- DescribeQuorum for `__cluster_metadata`-0: a controller that does not lead answers NOT_LEADER_OR_FOLLOWER, and
  the leader its Nodes (v2) name is asked next (kraftsman lists them, Kafka 3.9 does not); -1 timestamps become
  None (Kafka's OptionalLong.empty()).
- AddRaftVoter / RemoveRaftVoter go to the quorum leader: a controller that answers NOT_LEADER_OR_FOLLOWER is
  asked where the leader is (DescribeQuorum's Nodes) and the leader is asked next.
"""
from __future__ import annotations

import time

from kraftsman.storage.protocol.errors import Errors

from .. import sync_client as sc
from ..active_controller import Refused
from .core import ServerError
from .results import QuorumInfo, ReplicaState

METADATA_TOPIC = "__cluster_metadata"


class QuorumCalls:
    """DescribeQuorum, AddRaftVoter and RemoveRaftVoter (a part of Admin)."""

    def describe_metadata_quorum(self) -> QuorumInfo:
        """Return the quorum as its leader describes it (DescribeQuorum)."""
        return self._on_active_controller(lambda conn: _describe_quorum_on(conn, self.deadline), "DescribeQuorum")

    def add_raft_voter(self, voter_id: int, voter_directory_id, listeners: list[tuple[str, str, int]]) -> None:
        """Add a voter with its (listener, host, port) endpoints to the quorum (AddRaftVoter, KIP-853)."""
        self._change_voters("AddRaftVoter", voter_id=voter_id, voter_directory_id=voter_directory_id,
                            listeners=listeners)

    def remove_raft_voter(self, voter_id: int, voter_directory_id) -> None:
        """Remove a voter from the quorum (RemoveRaftVoter, KIP-853)."""
        self._change_voters("RemoveRaftVoter", voter_id=voter_id, voter_directory_id=voter_directory_id)

    def _change_voters(self, api: str, **fields) -> None:
        """Send AddRaftVoter or RemoveRaftVoter until the quorum leader answers. A controller that answers
        NOT_LEADER_OR_FOLLOWER is asked where the leader is (DescribeQuorum's Nodes) and the leader is asked next:
        it need not be among the bootstrap addresses (an added controller may lead)."""
        from kraftsman.storage.protocol import codec

        cls = codec.message_class(api + "Request")
        if "listeners" in fields:
            fields["listeners"] = [cls.Listener(name=n, host=h, port=p) for n, h, p in fields["listeners"]]

        def attempt(conn: sc.SyncConnection) -> None:
            if not _change_voters_on(conn, api, cls, fields, self.deadline):
                raise Refused(Errors.NOT_LEADER_OR_FOLLOWER.name, _leader_address(conn, self.deadline))

        self._on_active_controller(attempt, api)


# ---------------------------------------------------------------- DescribeQuorum, AddRaftVoter, RemoveRaftVoter


def _describe_quorum_on(conn: sc.SyncConnection, deadline: float) -> QuorumInfo:
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("DescribeQuorum")
    cls = codec.message_class("DescribeQuorumRequest")
    body = cls(topics=[cls.TopicData(topic_name=METADATA_TOPIC, partitions=[cls.PartitionData(partition_index=0)])])
    response = conn.request("DescribeQuorum", version, body, deadline)
    if response.error_code:
        raise ServerError(response.error_code, getattr(response, "error_message", None) or "")
    if len(response.topics) != 1 or len(response.topics[0].partitions) != 1:
        count = len(response.topics)
        raise ServerError(-1, f"DescribeMetadataQuorum received {count} topics when 1 was expected")
    part = response.topics[0].partitions[0]
    nodes = {n.node_id: [(x.name, x.host, x.port) for x in n.listeners] for n in getattr(response, "nodes", [])}
    if part.error_code == Errors.NOT_LEADER_OR_FOLLOWER:
        leader = leader_endpoint(nodes, part.leader_id, (conn.host, conn.port))
        raise Refused(Errors.NOT_LEADER_OR_FOLLOWER.name, leader)
    if part.error_code:
        raise ServerError(part.error_code, getattr(part, "error_message", None) or "")
    return QuorumInfo(part.leader_id, part.leader_epoch, part.high_watermark,
                      [_replica(r) for r in part.current_voters], [_replica(r) for r in part.observers], nodes)


def leader_endpoint(nodes: dict, leader_id: int, connected: tuple[str, int]) -> tuple[str, int] | None:
    """Return the leader's (host, port) on the listener this client came in through (the listener of some
    node that serves `connected`), or None when it cannot tell: a controller with a PLAINTEXT and a
    SASL_SSL listener must be reached on the one the client's security settings are for. Kafka 3.9's
    refusal lists no Nodes (and LeaderId 0, the schema's default): it names nobody."""
    leader = nodes.get(leader_id) or []
    names = {name for listeners in nodes.values() for name, host, port in listeners if (host, port) == connected}
    if not names:
        names = {name for listeners in nodes.values() for name, _, port in listeners if port == connected[1]}
    for name, host, port in leader:
        if name in names:
            return host, port
    return None


def _replica(r) -> ReplicaState:
    from kraftsman.storage.protocol.uuids import ZERO_UUID, Uuid

    directory = getattr(r, "replica_directory_id", None)
    fetch, caught_up = getattr(r, "last_fetch_timestamp", -1), getattr(r, "last_caught_up_timestamp", -1)
    return ReplicaState(r.replica_id, ZERO_UUID if directory is None else Uuid(bytes(directory)), r.log_end_offset,
                        None if fetch == -1 else fetch, None if caught_up == -1 else caught_up)


def _change_voters_on(conn: sc.SyncConnection, api: str, cls, fields: dict, deadline: float) -> bool:
    """Send the voter change on `conn`: True when done, False on NOT_LEADER_OR_FOLLOWER, else ServerError."""
    version = conn.pick_version(api)
    if api == "AddRaftVoter":
        fields["timeout_ms"] = max(1, int((deadline - time.monotonic()) * 1000))
    response = conn.request(api, version, cls(cluster_id=None, **fields), deadline)
    if response.error_code == Errors.NOT_LEADER_OR_FOLLOWER:
        return False
    if response.error_code:
        raise ServerError(response.error_code, response.error_message or "")
    return True


def _leader_address(conn: sc.SyncConnection, deadline: float) -> tuple[str, int] | None:
    """Return the leader's endpoint as the controller on `conn` knows it (DescribeQuorum v2 Nodes), or None."""
    try:
        _describe_quorum_on(conn, deadline)
    except Refused as e:
        return e.leader
    except (ServerError, sc.UnsupportedVersion):
        return None
    return None

