"""Log replication, the follower's (and observer's) side: one Fetch session with the leader.

Rules:
- Followers pull: one Fetch in flight to the leader, carrying (log end offset, last epoch); the
  leader answers records, a DivergingEpoch (the follower truncates), or a SnapshotId (the follower
  downloads it with FetchSnapshot chunks and installs it). Responses not matching the outstanding
  correlation id are stale (duplicated or reordered) and are dropped.
- A follower's high watermark is min(leader's, its own end offset) and never decreases; a -1 (a new
  leader that has not committed in its epoch yet) leaves it as it is.
- An observer without a leader asks a random bootstrap voter; the answer names the leader.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records.snapshot_id import SnapshotId

from . import messages as msg
from . import records as R
from . import snapshot as S
from .state import FOLLOWER, OBSERVER

_NEVER = -(1 << 62)


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
    if env.body.error_code != Errors.NONE:
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
    if part.error_code != Errors.NONE:
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
    if part.error_code in (Errors.SNAPSHOT_NOT_FOUND, Errors.POSITION_OUT_OF_RANGE):
        f.assembly = None
    elif part.error_code != Errors.NONE:
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
