"""Quorum administration: DescribeQuorum and KIP-853 voter changes (AddRaftVoter, RemoveRaftVoter,
UpdateRaftVoter), answered by the leader.

Rules:
- One voter change at a time: refused (REQUEST_TIMED_OUT) while a VotersRecord is uncommitted or a
  change request is pending, and until the leader committed an entry of its own epoch.
- The new voter set takes effect when its VotersRecord is appended (for the high watermark too);
  the request is answered when that record commits, or REQUEST_TIMED_OUT after its timeout, or
  NOT_LEADER_OR_FOLLOWER if leadership is lost first.
- A new voter must already replicate as an observer and have caught up to the high watermark.
- A leader that removed itself resigns once the removal commits.
- Static quorums (kraft.version 0) cannot change voters: UNSUPPORTED_VERSION with Kafka's message ("Cluster doesn't
  support removing voter because the kraft.version feature is 0"), after the in-progress and high-watermark checks.
- DescribeQuorum lists an observer until it has not fetched for 5 minutes, as Kafka's leader does.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors

from . import messages as msg
from . import records as R
from .voters import VoterNode

OBSERVER_SESSION_TIMEOUT_MS = 300_000  # an observer silent this long leaves DescribeQuorum (Kafka's LeaderState)

DescribeQuorumResponse = msg.M["DescribeQuorumResponse"]


class VoterChange:
    __slots__ = ("env", "offset", "deadline", "removes_leader")

    def __init__(self, env, offset: int, deadline: int, removes_leader: bool):
        self.env, self.offset, self.deadline, self.removes_leader = env, offset, deadline, removes_leader


def error_body(request_name: str, code: int):
    """Return a response to `request_name` carrying top-level error `code`."""
    name = request_name.replace("Request", "Response")
    if name == "VoteResponse":
        return msg.vote_response(code)
    if name in ("BeginQuorumEpochResponse", "EndQuorumEpochResponse"):
        return msg.epoch_response(name, code)
    if name == "FetchResponse":
        return msg.fetch_response(code)
    if name == "FetchSnapshotResponse":
        return msg.fetch_snapshot_response(code)
    if name in ("AddRaftVoterResponse", "RemoveRaftVoterResponse"):
        return msg.voter_change_response(name, code, None if code == Errors.NONE else Errors(code).name)
    return msg.M[name](error_code=code)


# ---------------------------------------------------------------- DescribeQuorum


def on_describe_quorum_request(node, env) -> None:
    msg.partition_of(env.body)
    cls = DescribeQuorumResponse
    part = cls.PartitionData(partition_index=0)
    if not node.is_leader():
        part.error_code, part.error_message = Errors.NOT_LEADER_OR_FOLLOWER, None
        part.leader_id = -1 if node.leader_id is None else node.leader_id
        part.leader_epoch = node.epoch
    else:
        _describe_leader(node, part)
    static = dict(node.cfg.static_endpoints)
    nodes = [cls.Node(node_id=v.voter_id, listeners=[cls.Listener(name=n, host=h, port=p)
                                                     for n, h, p in v.endpoints or static.get(v.voter_id, ())])
             for v in node.voters.nodes()]
    node.reply(env, cls(error_code=Errors.NONE, error_message=None,
                        topics=[cls.TopicData(topic_name=msg.TOPIC, partitions=[part])], nodes=nodes))


def _replica_state(node, replica_id: int, rs, directory_id: bytes):
    cls = DescribeQuorumResponse.ReplicaState
    if replica_id == node.node_id:
        return cls(replica_id=replica_id, replica_directory_id=directory_id, log_end_offset=node.log.end_offset,
                   last_fetch_timestamp=node.now, last_caught_up_timestamp=node.now)
    if rs is None:
        return cls(replica_id=replica_id, replica_directory_id=directory_id, log_end_offset=-1)
    return cls(replica_id=replica_id, replica_directory_id=directory_id, log_end_offset=rs.end_offset,
               last_fetch_timestamp=rs.last_fetch_ms, last_caught_up_timestamp=rs.last_caught_up_ms)


def _forget_idle_observers(node, ls) -> None:
    """Drop observers that have not fetched for OBSERVER_SESSION_TIMEOUT_MS (Kafka's clearInactiveObservers)."""
    for replica_id in [r for r, rs in ls.replicas.items() if r not in node.voters and r != node.node_id
                       and node.now - rs.last_fetch_ms >= OBSERVER_SESSION_TIMEOUT_MS]:
        del ls.replicas[replica_id]


def _describe_leader(node, part) -> None:
    ls = node.leader_state
    part.error_message = None
    part.leader_id, part.leader_epoch = node.node_id, node.epoch
    part.high_watermark = ls.shown_high_watermark(node.high_watermark)
    part.current_voters = [_replica_state(node, v.voter_id, ls.replicas.get(v.voter_id), v.directory_id)
                           for v in node.voters.nodes()]
    _forget_idle_observers(node, ls)
    observers = sorted(r for r in ls.replicas if r not in node.voters)
    part.observers = [_replica_state(node, r, ls.replicas[r], ls.replicas[r].directory_id or bytes(16))
                      for r in observers]


# ---------------------------------------------------------------- voter changes


def _change_error(node, env) -> int:
    """Checks shared by every voter change, in Kafka's order (Add/RemoveVoterHandler: a change in progress, the
    leader's high watermark in its epoch, kraft.version, an uncommitted VotersRecord); NONE when it may proceed."""
    if not node.cluster_ok(env.body.cluster_id):
        return Errors.INCONSISTENT_CLUSTER_ID
    if not node.is_leader():
        return Errors.NOT_LEADER_OR_FOLLOWER
    ls = node.leader_state
    if ls.voter_change is not None or node.high_watermark <= ls.epoch_start_offset:
        return Errors.REQUEST_TIMED_OUT
    if node.kraft_version < 1:
        return Errors.UNSUPPORTED_VERSION
    if node.voter_history.pending(node.high_watermark):
        return Errors.REQUEST_TIMED_OUT
    return Errors.NONE


_VERBS = {"AddRaftVoterRequest": "adding", "RemoveRaftVoterRequest": "removing", "UpdateRaftVoterRequest": "updating"}


def _reject(node, env, code: int) -> None:
    body = error_body(env.name, code)
    if code == Errors.UNSUPPORTED_VERSION and env.name in _VERBS and hasattr(body, "error_message"):
        # a static quorum: Kafka's words name the feature that forbids the change
        body.error_message = (f"Cluster doesn't support {_VERBS[env.name]} voter because the kraft.version feature "
                              f"is {node.kraft_version}")
    node.reply(env, body)


def _commit_change(node, env, voters, timeout_ms: int, removes_leader: bool = False) -> None:
    offset = node.log.end_offset
    node.append(R.control_batch([R.voters_record(voters)], offset, node.epoch, node.now))
    deadline = node.now + (timeout_ms if timeout_ms > 0 else node.cfg.request_timeout_ms)
    node.leader_state.voter_change = VoterChange(env, offset, deadline, removes_leader)


def on_add_voter_request(node, env) -> None:
    body = env.body
    error = _change_error(node, env)
    if error == Errors.NONE and body.voter_id in node.voters:
        error = Errors.DUPLICATE_VOTER
    if error == Errors.NONE and body.voter_id < 0:
        error = Errors.INVALID_REQUEST
    if error == Errors.NONE:
        rs = node.leader_state.replicas.get(body.voter_id)
        if rs is None or rs.end_offset < node.high_watermark:
            error = Errors.REQUEST_TIMED_OUT
    if error != Errors.NONE:
        _reject(node, env, error)
        return
    endpoints = tuple((e.name, e.host, e.port) for e in body.listeners)
    new = node.voters.add(VoterNode(body.voter_id, bytes(body.voter_directory_id), endpoints))
    _commit_change(node, env, new, body.timeout_ms)


def on_remove_voter_request(node, env) -> None:
    body = env.body
    error = _change_error(node, env)
    if error == Errors.NONE and not node.voters.is_voter(body.voter_id, bytes(body.voter_directory_id)):
        error = Errors.VOTER_NOT_FOUND
    if error == Errors.NONE and len(node.voters) == 1:
        error = Errors.INVALID_REQUEST
    if error != Errors.NONE:
        _reject(node, env, error)
        return
    _commit_change(node, env, node.voters.remove(body.voter_id), 0, body.voter_id == node.node_id)


def on_update_voter_request(node, env) -> None:
    body = env.body
    error = _change_error(node, env)
    stale_epoch = body.current_leader_epoch != node.epoch and node.is_leader()
    if error in (Errors.NONE, Errors.REQUEST_TIMED_OUT) and stale_epoch:
        error = Errors.FENCED_LEADER_EPOCH if body.current_leader_epoch < node.epoch else Errors.UNKNOWN_LEADER_EPOCH
    current = node.voters.get(body.voter_id)
    if error == Errors.NONE and (current is None or not node.voters.is_voter(body.voter_id,
                                                                         bytes(body.voter_directory_id))):
        error = Errors.VOTER_NOT_FOUND
    if error != Errors.NONE:
        _reject(node, env, error)
        return
    feature = body.kraft_version_feature
    endpoints = tuple((e.name, e.host, e.port) for e in body.listeners)
    updated = current._replace(endpoints=endpoints, min_kraft=feature.min_supported_version,
                               max_kraft=feature.max_supported_version)
    _commit_change(node, env, node.voters.remove(body.voter_id).add(updated), 0)


# ---------------------------------------------------------------- leader hooks


def on_high_watermark(node) -> None:
    change = node.leader_state.voter_change
    if change is not None and node.high_watermark > change.offset:
        node.leader_state.voter_change = None
        node.reply(change.env, error_body(change.env.name, Errors.NONE))
        if change.removes_leader:
            node.become_resigned(removed=True)


def leader_tick(node) -> None:
    change = node.leader_state.voter_change
    if change is not None and node.now >= change.deadline:
        node.leader_state.voter_change = None
        node.reply(change.env, error_body(change.env.name, Errors.REQUEST_TIMED_OUT))


def fail_pending(node) -> None:
    change = node.leader_state.voter_change
    if change is not None:
        node.leader_state.voter_change = None
        node.reply(change.env, error_body(change.env.name, Errors.NOT_LEADER_OR_FOLLOWER))
