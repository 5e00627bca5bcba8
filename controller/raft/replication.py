"""Log replication: the leader's side of Fetch/FetchSnapshot and the follower's (and observer's).

Rules:
- Followers pull: one Fetch in flight to the leader, carrying (log end offset, last epoch); the
  leader answers records, a DivergingEpoch (the follower truncates), or a SnapshotId (the follower
  downloads it with FetchSnapshot chunks and installs it). Responses not matching the outstanding
  correlation id are stale (duplicated or reordered) and are dropped.
- The leader records a voter's end offset only for a fetch it validated, and advances the high
  watermark with quorum.next_high_watermark (majority, within the current epoch, never back).
- A fetch at the log end waits (parked) until new records, a high-watermark change, or MaxWaitMs.
  With high_watermark_linger_ms > 0 a change alone leaves parked fetches owed it for up to that long (the
  next records carry it: a single-record commit costs one fetch round, not two); drivers may answer sooner.
- Check quorum: the leader resigns when no majority of voters fetched within 1.5 fetch timeouts.
- A follower's high watermark is min(leader's, its own end offset) and never decreases.
"""
from __future__ import annotations

from . import election, quorum
from . import messages as msg
from . import records as R
from . import reconfig
from . import snapshot as S
from .log import SnapshotId
from .state import FOLLOWER, LEADER, OBSERVER

_NEVER = -(1 << 62)


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

    def replica(self, replica_id: int) -> ReplicaState:
        rs = self.replicas.get(replica_id)
        if rs is None:
            rs = self.replicas[replica_id] = ReplicaState()
        return rs


class Fetcher:
    """A follower's or observer's fetch session with the leader."""

    __slots__ = ("inflight", "sent_ms", "next_ms", "deadline", "last_ok_ms", "assembly")

    def __init__(self):
        self.reset(0, 0)

    def reset(self, now: int, timeout: int) -> None:
        """Forget the session; the fetch timer runs `timeout` ms from `now`."""
        self.inflight, self.sent_ms, self.next_ms = None, 0, now
        self.deadline, self.last_ok_ms, self.assembly = now + timeout, _NEVER, None

    def leader_alive(self, node) -> bool:
        return node.now - self.last_ok_ms < node.cfg.fetch_timeout_ms

    def leader_resigned(self, node, delay_ms: int) -> None:
        self.deadline, self.last_ok_ms = node.now + delay_ms, _NEVER


# ---------------------------------------------------------------- leader


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
        for env, _ in parked.values():
            _answer_fetch(node, env)


def preferred_successors(node) -> list[tuple]:
    """Voters other than this leader, the most caught-up first."""
    ls = node.leader_state
    others = [v for v in node.voters.nodes() if v.voter_id != node.node_id]
    others.sort(key=lambda v: -(ls.replicas[v.voter_id].end_offset if ls and v.voter_id in ls.replicas else -1))
    return [(v.voter_id, v.directory_id) for v in others]


def leader_only_error(node, request_epoch: int) -> int:
    """Kafka's validateLeaderOnlyRequest."""
    if request_epoch < node.epoch:
        return msg.FENCED_LEADER_EPOCH
    if request_epoch > node.epoch:
        return msg.UNKNOWN_LEADER_EPOCH
    if node.role != LEADER:
        return msg.NOT_LEADER_OR_FOLLOWER
    return msg.NONE


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
        node.reply(env, msg.fetch_response(msg.INCONSISTENT_CLUSTER_ID))
        return
    part = msg.partition_of(body)
    if part.fetch_offset < 0 or part.last_fetched_epoch < 0 or part.last_fetched_epoch > part.current_leader_epoch \
            or body.replica_state.replica_id < 0:
        node.reply(env, msg.fetch_response(msg.INVALID_REQUEST))
        return
    error = leader_only_error(node, part.current_leader_epoch)
    if error != msg.NONE:
        _refuse_fetch(node, env, error, -1 if node.leader_id is None else node.leader_id)
        return
    replica_id = body.replica_state.replica_id
    _note_voter_fetch(node, replica_id)
    status = validate_offset(node, part.fetch_offset, part.last_fetched_epoch)
    if status[0] != "valid":
        _reply_fetch(node, env, **{status[0] if status[0] == "diverging" else "snapshot_id": status[1]})
        return
    rs = _record_replica(node, replica_id, part)
    update_high_watermark(node)
    if node.leader_state is None:  # the commit removed this leader, which resigned
        _refuse_fetch(node, env, msg.NOT_LEADER_OR_FOLLOWER, node.node_id)
        return
    hw_news = node.high_watermark > rs.sent_hw
    if part.fetch_offset >= node.log.end_offset and body.max_wait_ms > 0 and (
            not hw_news or node.cfg.high_watermark_linger_ms > 0):
        old = node.leader_state.parked.pop(replica_id, None)
        if old is not None:
            _answer_fetch(node, old[0])
        node.leader_state.parked[replica_id] = (env, node.now + body.max_wait_ms)
        if hw_news:
            _owe_high_watermark(node)
        return
    _answer_fetch(node, env)


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
    node.reply(env, msg.fetch_response(msg.NONE, error, leader_id, node.epoch, log_start_offset=node.log.start_offset))


def _reply_fetch(node, env, records=b"", diverging=None, snapshot_id=None) -> None:
    body = msg.fetch_response(msg.NONE, msg.NONE, node.node_id, node.epoch, node.high_watermark, records,
                              diverging, snapshot_id, node.log.start_offset)
    node.reply(env, body)


def _answer_fetch(node, env) -> None:
    """Answer a validated fetch with the records from its offset (maybe none)."""
    part = env.body.topics[0].partitions[0]
    node.leader_state.replica(env.body.replica_state.replica_id).sent_hw = node.high_watermark
    records = b""
    if part.fetch_offset < node.log.end_offset:
        limit = min(env.body.max_bytes, part.partition_max_bytes or env.body.max_bytes)
        records = R.join_batches(node.log.read(part.fetch_offset, limit))
    _reply_fetch(node, env, records)


def on_fetch_snapshot_request(node, env) -> None:
    body = env.body
    if not node.cluster_ok(body.cluster_id):
        node.reply(env, msg.fetch_snapshot_response(msg.INCONSISTENT_CLUSTER_ID))
        return
    part = msg.partition_of(body)
    error = leader_only_error(node, part.current_leader_epoch)
    sid = SnapshotId(part.snapshot_id.end_offset, part.snapshot_id.epoch)
    snap = node.log.read_snapshot(sid) if error == msg.NONE else None
    if error == msg.NONE and snap is None:
        error = msg.SNAPSHOT_NOT_FOUND
    elif snap is not None and not 0 <= part.position <= len(snap.data):
        error = msg.POSITION_OUT_OF_RANGE
    leader = -1 if node.leader_id is None else node.leader_id
    if error != msg.NONE:
        node.reply(env, msg.fetch_snapshot_response(msg.NONE, error, leader, node.epoch, sid))
        return
    _note_voter_fetch(node, body.replica_id)
    data = S.chunk(snap, part.position, min(body.max_bytes, node.cfg.snapshot_chunk_bytes))
    node.reply(env, msg.fetch_snapshot_response(msg.NONE, msg.NONE, leader, node.epoch, sid, len(snap.data),
                                                part.position, data))


# ---------------------------------------------------------------- follower and observer


def follower_tick(node) -> None:
    f = node.fetcher
    if node.leader_id is None:
        _find_leader(node)
        return
    if node.now >= f.deadline:
        if node.role == FOLLOWER:
            node.on_election_timeout()
        else:
            node.state.move(OBSERVER, leader_id=None)
            f.reset(node.now, node.fetch_timeout())
        return
    maybe_fetch(node)


def _find_leader(node) -> None:
    """An observer without a leader asks a random bootstrap voter (the answer names the leader)."""
    f = node.fetcher
    if node.now < f.next_ms:
        return
    choices = sorted(set(node.cfg.bootstrap_voters or node.voters.ids()) - {node.node_id})
    if not choices:
        return
    f.next_ms = node.now + node.cfg.retry_backoff_ms * 5
    target = choices[node.rng.randint(0, len(choices) - 1)]
    f.inflight, f.sent_ms = node.send(target, _fetch_body(node)), node.now


def _fetch_body(node):
    log = node.log
    return msg.fetch_request(node.cfg.cluster_id, node.node_id, node.epoch, log.end_offset, log.last_epoch(),
                             node.cfg.fetch_max_wait_ms, node.cfg.max_fetch_bytes, node.cfg.directory_id)


def maybe_fetch(node) -> None:
    f = node.fetcher
    if node.role not in (FOLLOWER, OBSERVER) or node.leader_id is None or node.now < f.next_ms:
        return
    if f.inflight is not None and node.now - f.sent_ms < node.cfg.request_timeout_ms:
        return
    if f.assembly is not None:
        body = msg.fetch_snapshot_request(node.cfg.cluster_id, node.node_id, node.epoch, f.assembly.snapshot_id,
                                          f.assembly.received, node.cfg.snapshot_chunk_bytes, node.cfg.directory_id)
    else:
        body = _fetch_body(node)
    f.inflight, f.sent_ms = node.send(node.leader_id, body), node.now


def _accept_response(node, env):
    """Common checks of a Fetch/FetchSnapshot response; return its partition or None."""
    f = node.fetcher
    if env.correlation_id != f.inflight or f.inflight is None:
        return None
    f.inflight = None
    if env.body.error_code != msg.NONE:
        f.next_ms = node.now + node.cfg.retry_backoff_ms
        return None
    part = msg.partition_of(env.body)
    leader = part.current_leader
    if node.learn_leader(leader.leader_epoch, leader.leader_id):
        return None
    if node.role not in (FOLLOWER, OBSERVER) or env.src != node.leader_id:
        return None
    return part


def _backoff(node) -> None:
    node.fetcher.next_ms = node.now + node.cfg.retry_backoff_ms


def on_fetch_response(node, env) -> None:
    part = _accept_response(node, env)
    if part is None:
        return
    if part.error_code != msg.NONE:
        _backoff(node)
        return
    f = node.fetcher
    f.last_ok_ms, f.deadline = node.now, node.now + node.fetch_timeout()
    if part.diverging_epoch.epoch >= 0 or part.diverging_epoch.end_offset >= 0:
        _truncate_to_end_offset(node, part.diverging_epoch.epoch, part.diverging_epoch.end_offset)
    elif part.snapshot_id.end_offset >= 0:
        f.assembly = S.Assembly(SnapshotId(part.snapshot_id.end_offset, part.snapshot_id.epoch))
    elif not _append_records(node, part.records, part.high_watermark):
        _backoff(node)
        return
    maybe_fetch(node)


def _truncate_to_end_offset(node, epoch: int, end_offset: int) -> None:
    """Kafka's truncateToEndOffset: cut the log where it stops agreeing with the leader."""
    local_epoch, local_end = node.log.end_offset_for_epoch(epoch)
    target = min(local_end, end_offset) if local_epoch == epoch else local_end
    node.truncate(min(target, node.log.end_offset))


def _append_records(node, records: bytes, high_watermark: int) -> bool:
    try:
        batches = R.split_batches(records or b"")
    except R.InvalidRecords:
        return False
    for batch in batches:
        if batch.base_offset != node.log.end_offset or batch.epoch > node.epoch:
            return False
        node.log.append(batch)
        if batch.is_control:
            node.on_control_batch(batch)
    hw = min(high_watermark, node.log.end_offset)
    if hw > node.high_watermark:
        node.high_watermark = hw
    return True


def on_fetch_snapshot_response(node, env) -> None:
    part = _accept_response(node, env)
    if part is None:
        return
    f = node.fetcher
    if part.error_code in (msg.SNAPSHOT_NOT_FOUND, msg.POSITION_OUT_OF_RANGE):
        f.assembly = None
    elif part.error_code != msg.NONE:
        _backoff(node)
        return
    elif f.assembly is not None:
        f.last_ok_ms, f.deadline = node.now, node.now + node.fetch_timeout()
        sid = SnapshotId(part.snapshot_id.end_offset, part.snapshot_id.epoch)
        if not f.assembly.accept(sid, part.size, part.position, part.unaligned_records):
            f.assembly = None
        elif f.assembly.complete:
            snap, f.assembly = f.assembly.snapshot(), None
            node.install_snapshot(snap)
    maybe_fetch(node)
