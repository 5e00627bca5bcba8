"""Log replication, the leader's side: Fetch and FetchSnapshot requests, the high watermark, check quorum.

Rules:
- The leader records a voter's end offset only for a fetch it validated, and advances the high
  watermark with quorum.next_high_watermark (majority, within the current epoch, never back).
- A new leader has no high watermark to show until one offset past its epoch start is committed (Kafka's
  LeaderState): until then Fetch and DescribeQuorum carry -1, never the lower offset it may know from a
  snapshot or its follower days, because Kafka's followers and observers treat a decrease as fatal.
- A fetch at the log end waits (parked) until new records, a high-watermark change, or MaxWaitMs.
  With high_watermark_linger_ms > 0 a change alone leaves parked fetches owed it for up to that long (the
  next records carry it: a single-record commit costs one fetch round, not two); drivers may answer sooner.
- Check quorum: the leader resigns when no majority of voters fetched within 1.5 fetch timeouts.
- A Fetch from a negative replica id (messages.fetch_replica_id: a non-replica such as kafka-cluster's reads or
  the live shell) is served but leaves no state, as Kafka's LeaderState.updateReplicaState ignores it: no
  replica row (DescribeQuorum lists no observer for it), no check-quorum or high-watermark effect. Parked, it
  is keyed by its correlation id, and it is owed nothing when the high watermark moves alone (nothing says
  what it knows): records, any high-watermark change or MaxWaitMs answer it.
- Kafka's validation of a Fetch: MaxWaitMs, FetchOffset or LastFetchedEpoch negative, or LastFetchedEpoch
  above CurrentLeaderEpoch -> INVALID_REQUEST.
- The follower's side is follower.py; the two share nothing but the messages.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records.snapshot_id import SnapshotId

from . import election, quorum, reconfig
from . import messages as msg
from . import records as R
from . import snapshot as S
from .state import LEADER


class ReplicaState:
    __slots__ = ("end_offset", "last_fetch_ms", "last_caught_up_ms", "directory_id", "sent_hw")

    def __init__(self):
        self.end_offset, self.last_fetch_ms, self.last_caught_up_ms = 0, -1, -1
        self.directory_id = b""
        self.sent_hw = -1


class LeaderState:
    """What only the leader of an epoch tracks."""

    __slots__ = ("epoch_start_offset", "replicas", "begin_acked", "check_deadline", "fetched_voters",
                 "parked", "last_begin_ms", "voter_change", "hw_owed_since")

    def __init__(self, epoch_start_offset: int, check_deadline: int):
        self.epoch_start_offset = epoch_start_offset
        self.replicas: dict[int, ReplicaState] = {}
        self.begin_acked: set[int] = set()
        self.check_deadline = check_deadline
        self.fetched_voters: set[int] = set()
        self.parked: dict[int, tuple] = {}
        self.last_begin_ms = 0
        self.voter_change, self.hw_owed_since = None, None  # hw_owed_since: see Rules

    def shown_high_watermark(self, high_watermark: int) -> int:
        """Return the high watermark this leader may tell others: -1 until it committed in its own epoch."""
        return high_watermark if high_watermark > self.epoch_start_offset else -1

    def replica(self, replica_id: int) -> ReplicaState:
        rs = self.replicas.get(replica_id)
        if rs is None:
            rs = self.replicas[replica_id] = ReplicaState()
        return rs


def check_quorum_timeout(node) -> int:
    return node.cfg.fetch_timeout_ms * 3 // 2


def start_leading(node, granting) -> None:
    log = node.log
    ls = node.leader_state = LeaderState(log.end_offset, node.now + check_quorum_timeout(node))
    ls.last_begin_ms = node.now
    records = [R.leader_change(node.node_id, node.voters.ids(), granting)]
    if node.kraft_version >= 1 and node.voter_history.latest_offset() < 0:
        records += [R.kraft_version(node.kraft_version), R.voters_record(node.voters)]
    node.append(R.control_batch(records, log.end_offset, node.epoch, node.now))
    election.send_begin_epoch(node, node.voters.ids())


def leader_tick(node) -> None:
    ls = node.leader_state
    for replica_id, (env, deadline) in list(ls.parked.items()):
        if node.now >= deadline:
            del ls.parked[replica_id]
            _answer_fetch(node, env)
    if ls.hw_owed_since is not None and node.now - ls.hw_owed_since >= node.cfg.high_watermark_linger_ms:
        complete_parked(node)
    if node.cfg.check_quorum and node.now >= ls.check_deadline:
        if node.voters.ids() - {node.node_id}:
            node.become_resigned()
            return
        ls.check_deadline = node.now + check_quorum_timeout(node)
    if node.now - ls.last_begin_ms >= node.cfg.retry_backoff_ms * 5:
        ls.last_begin_ms = node.now
        election.send_begin_epoch(node, node.voters.ids() - ls.begin_acked)
    reconfig.leader_tick(node)


def update_high_watermark(node) -> None:
    ls = node.leader_state
    voters = node.voters.ids()
    offsets = {v: ls.replicas[v].end_offset for v in voters if v in ls.replicas}
    offsets[node.node_id] = node.flushed_end
    new = quorum.next_high_watermark(voters, offsets, ls.epoch_start_offset, node.high_watermark)
    if new != node.high_watermark:
        node.high_watermark = new
        _owe_high_watermark(node)
        reconfig.on_high_watermark(node)


def _owe_high_watermark(node) -> None:
    """Tell parked fetches of the new high watermark now, or within the linger (see Rules)."""
    ls = node.leader_state
    if node.cfg.high_watermark_linger_ms <= 0:
        complete_parked(node)
    elif ls.hw_owed_since is None and ls.parked:
        ls.hw_owed_since = node.now


def complete_parked(node, force: bool = False) -> None:
    ls = node.leader_state
    parked, ls.parked = ls.parked, {}
    ls.hw_owed_since = None
    if not force:
        shared: dict = {}  # the followers at the same offset get one response body
        for env, _ in parked.values():
            _answer_fetch(node, env, shared)


def preferred_successors(node) -> list[tuple]:
    """Voters other than this leader, the most caught-up first."""
    ls = node.leader_state
    others = [v for v in node.voters.nodes() if v.voter_id != node.node_id]
    others.sort(key=lambda v: -(ls.replicas[v.voter_id].end_offset if ls and v.voter_id in ls.replicas else -1))
    return [(v.voter_id, v.directory_id) for v in others]


def leader_only_error(node, request_epoch: int) -> int:
    """Kafka's validateLeaderOnlyRequest."""
    if request_epoch < node.epoch:
        return Errors.FENCED_LEADER_EPOCH
    if request_epoch > node.epoch:
        return Errors.UNKNOWN_LEADER_EPOCH
    if node.role != LEADER:
        return Errors.NOT_LEADER_OR_FOLLOWER
    return Errors.NONE


def validate_offset(node, offset: int, last_epoch: int) -> tuple:
    """Kafka's validateOffsetAndEpoch: ('valid',), ('snapshot', id) or ('diverging', (epoch, end))."""
    log = node.log
    start = log.start_offset
    if start == 0 and offset == 0:
        return ("valid",)
    start_epoch = log.epoch_at(start - 1) if start > 0 else 0
    if start > 0 and (offset < start or (offset == start and last_epoch != start_epoch) or last_epoch < start_epoch):
        return ("snapshot", log.latest_snapshot().snapshot_id)
    epoch, end = log.end_offset_for_epoch(last_epoch)
    if epoch != last_epoch or end < offset:
        return ("diverging", (epoch, end))
    return ("valid",)


def _note_voter_fetch(node, replica_id: int) -> None:
    ls = node.leader_state
    ls.begin_acked.add(replica_id)
    if replica_id in node.voters:
        ls.fetched_voters.add(replica_id)
        if quorum.has_majority(node.voters.ids(), ls.fetched_voters | {node.node_id}):
            ls.check_deadline = node.now + check_quorum_timeout(node)
            ls.fetched_voters.clear()


def on_fetch_request(node, env) -> None:
    body = env.body
    if not node.cluster_ok(body.cluster_id):
        node.reply(env, msg.fetch_response(Errors.INCONSISTENT_CLUSTER_ID))
        return
    part = msg.partition_of(body)
    if body.max_wait_ms < 0 or part.fetch_offset < 0 or part.last_fetched_epoch < 0 \
            or part.last_fetched_epoch > part.current_leader_epoch:
        node.reply(env, msg.fetch_response(Errors.INVALID_REQUEST))
        return
    error = leader_only_error(node, part.current_leader_epoch)
    if error != Errors.NONE:
        _refuse_fetch(node, env, error, -1 if node.leader_id is None else node.leader_id)
        return
    replica_id = msg.fetch_replica_id(body)
    if replica_id >= 0:
        _note_voter_fetch(node, replica_id)
    status = validate_offset(node, part.fetch_offset, part.last_fetched_epoch)
    if status[0] != "valid":
        _reply_fetch(node, env, **{status[0] if status[0] == "diverging" else "snapshot_id": status[1]})
        return
    hw_news = False
    if replica_id >= 0:
        rs = _record_replica(node, replica_id, part)
        update_high_watermark(node)
        if node.leader_state is None:  # the commit removed this leader, which resigned
            _refuse_fetch(node, env, Errors.NOT_LEADER_OR_FOLLOWER, node.node_id)
            return
        hw_news = node.leader_state.shown_high_watermark(node.high_watermark) > rs.sent_hw
    if part.fetch_offset >= node.log.end_offset and body.max_wait_ms > 0 and (
            not hw_news or node.cfg.high_watermark_linger_ms > 0):
        _park(node, env, replica_id if replica_id >= 0 else ("non-replica", env.correlation_id), hw_news)
        return
    _answer_fetch(node, env)


def _park(node, env, key, hw_news: bool) -> None:
    """Hold a fetch at the log end until records, a high-watermark change or its MaxWaitMs (a replica's newer
    fetch answers its older one at once)."""
    ls = node.leader_state
    old = ls.parked.pop(key, None)
    if old is not None:
        _answer_fetch(node, old[0])
    ls.parked[key] = (env, node.now + env.body.max_wait_ms)
    if hw_news:
        _owe_high_watermark(node)


def _record_replica(node, replica_id: int, part) -> None:
    rs = node.leader_state.replica(replica_id)
    rs.end_offset = part.fetch_offset
    rs.last_fetch_ms = node.now
    rs.directory_id = bytes(part.replica_directory_id)
    if part.fetch_offset >= node.high_watermark:
        rs.last_caught_up_ms = node.now
    return rs


def _refuse_fetch(node, env, error: int, leader_id: int) -> None:
    """Answer a fetch with a partition error, the leader and our log start offset (as Kafka's are)."""
    node.reply(env, msg.fetch_response(Errors.NONE, error, leader_id, node.epoch,
                                       log_start_offset=node.log.start_offset))


def _reply_fetch(node, env, records=b"", diverging=None, snapshot_id=None) -> None:
    node.reply(env, _fetch_body(node, records, diverging, snapshot_id))


def _fetch_body(node, records=b"", diverging=None, snapshot_id=None):
    return msg.fetch_response(Errors.NONE, Errors.NONE, node.node_id, node.epoch,
                              node.leader_state.shown_high_watermark(node.high_watermark), records,
                              diverging, snapshot_id, node.log.start_offset)


def _answer_fetch(node, env, shared: dict | None = None) -> None:
    """Answer a validated fetch with the records from its offset (maybe none). Fetches answered together at the
    same offset and size limit get the same body (`shared`): the bytes are read, and encoded, once."""
    part = env.body.topics[0].partitions[0]
    ls = node.leader_state
    replica_id = msg.fetch_replica_id(env.body)
    if replica_id >= 0:
        ls.replica(replica_id).sent_hw = ls.shown_high_watermark(node.high_watermark)
    limit = min(env.body.max_bytes, part.partition_max_bytes or env.body.max_bytes)
    body = shared.get((part.fetch_offset, limit)) if shared is not None else None
    if body is None:
        records = b""
        if part.fetch_offset < node.log.end_offset:
            records = R.join_batches(node.log.read(part.fetch_offset, limit))
        body = _fetch_body(node, records)
        if shared is not None:
            shared[(part.fetch_offset, limit)] = body
    node.reply(env, body)


def on_fetch_snapshot_request(node, env) -> None:
    body = env.body
    if not node.cluster_ok(body.cluster_id):
        node.reply(env, msg.fetch_snapshot_response(Errors.INCONSISTENT_CLUSTER_ID))
        return
    part = msg.partition_of(body)
    error = leader_only_error(node, part.current_leader_epoch)
    sid = SnapshotId(part.snapshot_id.end_offset, part.snapshot_id.epoch)
    snap = node.log.read_snapshot(sid) if error == Errors.NONE else None
    if error == Errors.NONE and snap is None:
        error = Errors.SNAPSHOT_NOT_FOUND
    elif snap is not None and not 0 <= part.position <= len(snap.data):
        error = Errors.POSITION_OUT_OF_RANGE
    leader = -1 if node.leader_id is None else node.leader_id
    if error != Errors.NONE:
        node.reply(env, msg.fetch_snapshot_response(Errors.NONE, error, leader, node.epoch, sid))
        return
    if body.replica_id >= 0:
        _note_voter_fetch(node, body.replica_id)
    data = S.chunk(snap, part.position, min(body.max_bytes, node.cfg.snapshot_chunk_bytes))
    node.reply(env, msg.fetch_snapshot_response(Errors.NONE, Errors.NONE, leader, node.epoch, sid, len(snap.data),
                                                part.position, data))
