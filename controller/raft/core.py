"""RaftNode: the sans-I/O KRaft replica driven by tick / step / propose / ready / advance.

Rules:
- No I/O, no clock, no randomness of its own: time comes from tick(), randomness from the injected
  `rng` (anything with .randint/.random), messages from step(), and every effect leaves through
  ready(): quorum-state to persist, a log flush, messages to send, committed batches to apply.
- The node changes its log through the RaftLog interface; the driver makes that durable when a
  Ready says `flush`, and must do so before sending that Ready's messages.
- Role changes go through the `_become_*` methods only (checked by state.ALLOWED); message
  handlers live in election.py, leader.py, follower.py and reconfig.py and call back into the node.
- A leader's own log end offset counts toward the high watermark only once flushed.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records import control as C
from kraftsman.storage.records.raft_values import Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId

from . import election, follower, leader, reconfig, retention
from . import messages as msg
from . import records as R
from . import snapshot as S
from .config import RaftConfig, Ready, SnapshotRequest
from .log import RaftLog
from .state import CANDIDATE, FOLLOWER, LEADER, OBSERVER, PROSPECTIVE, RESIGNED, UNATTACHED, VOTED, QuorumState
from .voters import VoterHistory, VoterSet

HANDLERS = {
    "VoteRequest": election.on_vote_request, "VoteResponse": election.on_vote_response,
    "BeginQuorumEpochRequest": election.on_begin_epoch_request,
    "BeginQuorumEpochResponse": election.on_begin_epoch_response,
    "EndQuorumEpochRequest": election.on_end_epoch_request, "EndQuorumEpochResponse": election.on_end_epoch_response,
    "FetchRequest": leader.on_fetch_request, "FetchResponse": follower.on_fetch_response,
    "FetchSnapshotRequest": leader.on_fetch_snapshot_request,
    "FetchSnapshotResponse": follower.on_fetch_snapshot_response,
    "DescribeQuorumRequest": reconfig.on_describe_quorum_request,
    "AddRaftVoterRequest": reconfig.on_add_voter_request,
    "RemoveRaftVoterRequest": reconfig.on_remove_voter_request,
    "UpdateRaftVoterRequest": reconfig.on_update_voter_request,
}


class NotLeaderError(RuntimeError):
    """propose() on a replica that is not the leader."""


class RaftNode:
    """One KRaft replica (voter or observer)."""

    def __init__(self, config: RaftConfig, log: RaftLog, rng, quorum_state=None, now: int = 0):
        self.cfg, self.log, self.rng = config, log, rng
        self.node_id = config.node_id
        self.now = now  # milliseconds; a server starts it at the wall clock so batch timestamps are real
        self.steps = 0
        self.outbox: list[msg.Envelope] = []
        self._cid = 0
        self.kraft_version = config.kraft_version
        self.voter_history = VoterHistory(VoterSet.static(config.voters))
        self.high_watermark = self.applied = log.start_offset
        self.flushed_end = self.flush_issued = log.end_offset  # flush_issued: a background flush's target
        self._pending_load = log.latest_snapshot()
        self._snapshot_asked: SnapshotId | None = None
        self._persisted = None
        self.election_retries = 0
        self.deadline = 0
        self.tally = None          # election.Tally while prospective or candidate
        self.leader_state = None   # leader.LeaderState while leader
        self.fetcher = follower.Fetcher()
        self.state = QuorumState()
        self._load_voters()
        self._start(QuorumState.from_data(quorum_state) if quorum_state is not None else QuorumState())

    # ------------------------------------------------------------ start-up
    def _load_voters(self) -> None:
        """Read the voter set from the newest snapshot and the control batches of the log."""
        snap = self.log.latest_snapshot()
        if snap is not None and snap.data:
            level, voters = S.read_control(snap.data)
            self.kraft_version = max(self.kraft_version, level)
            if voters is not None:
                self.voter_history.reset(voters)
        for batch in self.log.read(self.log.start_offset, 1 << 62):
            if batch.is_control and (snap is None or batch.base_offset >= snap.snapshot_id.end_offset):
                self.on_control_batch(batch)

    def _start(self, saved: QuorumState) -> None:
        epoch = max(saved.epoch, self.log.last_epoch())
        st = self.state
        st.epoch, st.voted_id, st.voted_directory_id = epoch, None, saved.voted_directory_id
        st.leader_id = None
        if epoch == saved.epoch:
            st.leader_id, st.voted_id = saved.leader_id, saved.voted_id
        if not self.is_voter():
            st.role = OBSERVER
        elif st.leader_id == self.node_id:
            st.role = RESIGNED
        elif st.leader_id is not None:
            st.role = FOLLOWER
        elif st.voted_id is not None:
            st.role = VOTED
        self._persisted = st.persisted()
        self.fetcher.reset(self.now, self.fetch_timeout())
        self.deadline = self.now + self.election_timeout()

    # ------------------------------------------------------------ properties
    role = property(lambda self: self.state.role)
    epoch = property(lambda self: self.state.epoch)

    @property
    def leader_id(self) -> int | None:
        return self.state.leader_id

    @property
    def voters(self) -> VoterSet:
        return self.voter_history.latest()

    def is_voter(self, node_id: int | None = None) -> bool:
        node = self.node_id if node_id is None else node_id
        return self.voters.is_voter(node, self.cfg.directory_id if node_id is None else None)

    def is_leader(self) -> bool:
        return self.state.role == LEADER

    # ------------------------------------------------------------ timers and randomness
    def election_timeout(self) -> int:
        t = self.cfg.election_timeout_ms
        return t + self.rng.randint(0, t - 1)

    def fetch_timeout(self) -> int:
        """The fetch timeout, fixed as Kafka's is: followers of a dead leader that campaign in the same
        instant are told apart by the pre-vote tie-break (election.py), not by a random delay."""
        return self.cfg.fetch_timeout_ms

    def election_backoff(self) -> int:
        """Binary exponential backoff after a failed election (Kafka's binaryExponentialElectionBackoffMs)."""
        retries = max(self.election_retries, 1)
        return min(self.cfg.retry_backoff_ms * self.rng.randint(0, (2 << min(20, retries - 1)) - 1),
                   self.cfg.election_backoff_max_ms)

    # ------------------------------------------------------------ inputs
    def tick(self) -> None:
        """Advance the clock by one tick and fire whatever timer expired."""
        self.now += self.cfg.tick_ms
        retention.on_tick(self)
        role = self.state.role
        if role == LEADER:
            leader.leader_tick(self)
        elif role in (PROSPECTIVE, CANDIDATE):
            election.campaign_tick(self)
        elif role in (FOLLOWER, OBSERVER):
            follower.follower_tick(self)
        elif self.now >= self.deadline:
            self.on_election_timeout()
        else:
            election.resigned_tick(self)

    def step(self, env: msg.Envelope) -> None:
        """Handle one request or response addressed to this node."""
        self.steps += 1
        handler = HANDLERS.get(env.name)
        if handler is None or env.dst != self.node_id:
            return
        try:
            handler(self, env)
        except msg.Malformed:
            if not env.is_response:
                self.reply(env, reconfig.error_body(env.name, Errors.INVALID_REQUEST))

    def propose(self, values) -> tuple[int, int]:
        """Append one batch of opaque records; return (base offset, epoch). Only a leader may."""
        if self.state.role != LEADER:
            raise NotLeaderError(f"node {self.node_id} is {self.state.role}, leader is {self.state.leader_id}")
        batch = R.data_batch(values, self.log.end_offset, self.state.epoch, self.now)
        self.append(batch)
        return batch.base_offset, batch.epoch

    def resign(self) -> None:
        """Step down gracefully (EndQuorumEpoch with preferred successors); a no-op unless leader."""
        if self.state.role == LEADER:
            self.become_resigned()

    def snapshot_written(self, snapshot: Snapshot) -> None:
        """The state machine wrote a snapshot; keep it, then delete what retention lets go (retention.py)."""
        self.log.store_snapshot(snapshot)
        self._snapshot_asked = None
        self.voter_history.compact(snapshot.snapshot_id.end_offset)
        retention.clean(self)

    # ------------------------------------------------------------ outputs
    def has_ready(self) -> bool:
        return bool(self.outbox) or self.state.persisted() != self._persisted or (
            self.log.end_offset != self._flush_target()) or self.applied < self.high_watermark or (
            self._pending_load is not None)

    def ready(self) -> Ready:
        rd = Ready(high_watermark=self.high_watermark, messages=self.outbox, flush_end=self.log.end_offset)
        self.outbox = []
        if self.state.persisted() != self._persisted:
            rd.quorum_state, rd.data_version = self.state.to_data(self.kraft_version, self.voters.ids())
            rd.persisted = self.state.persisted()
        rd.flush = self.log.end_offset != self._flush_target()
        if self._pending_load is not None:
            rd.load_snapshot = self._pending_load
        rd.applied_to = max(self.applied, self._pending_load.snapshot_id.end_offset if self._pending_load else 0)
        if self.applied < self.log.start_offset and self._pending_load is None:
            rd.load_snapshot = self.log.latest_snapshot()
            rd.applied_to = rd.load_snapshot.snapshot_id.end_offset
        rd.committed = self._committed_from(rd.applied_to)
        if rd.committed:
            rd.applied_to = rd.committed[-1].next_offset
        rd.snapshot_request = self._maybe_ask_snapshot(rd.applied_to)
        return rd

    def _committed_from(self, offset: int) -> list:
        out = []
        if offset >= self.high_watermark:
            return out
        for batch in self.log.read(offset, 1 << 62):
            if batch.next_offset > self.high_watermark:
                break
            if batch.base_offset >= offset:
                out.append(batch)
        return out

    def _maybe_ask_snapshot(self, applied: int) -> SnapshotRequest | None:
        every = self.cfg.snapshot_every_records
        latest = self.log.latest_snapshot()
        base = latest.snapshot_id.end_offset if latest else 0
        if not every or self._snapshot_asked is not None or applied - base < every:
            return None
        sid = SnapshotId(applied, self.log.epoch_at(applied - 1))
        self._snapshot_asked = sid
        return SnapshotRequest(sid, self.kraft_version, self.voter_history.at(applied))

    def advance(self, rd: Ready) -> None:
        """The driver persisted, sent and applied `rd`."""
        if rd.quorum_state is not None:
            self._persisted = rd.persisted
        if rd.load_snapshot is not None and rd.load_snapshot is self._pending_load:
            self._pending_load = None
        if rd.flush:
            self.flushed_end = min(rd.flush_end, self.log.end_offset)
            self.flush_issued = max(self.flush_issued, self.flushed_end)
        self.applied = max(self.applied, rd.applied_to)
        if self.state.role == LEADER:
            leader.update_high_watermark(self)

    def _flush_target(self) -> int:
        """Return the end flushed or being flushed (a follower's fetch acknowledges durable data only)."""
        return max(self.flushed_end, self.flush_issued) if self.state.role == LEADER else self.flushed_end

    def flush_started(self, end_offset: int) -> None:
        """The driver began a background flush up to `end_offset`."""
        self.flush_issued = max(self.flush_issued, min(end_offset, self.log.end_offset))

    def flush_done(self, end_offset: int) -> None:
        """A background flush finished: the leader's own log end counts from there."""
        self.flushed_end = max(self.flushed_end, min(end_offset, self.log.end_offset))
        if self.state.role == LEADER:
            leader.update_high_watermark(self)

    def next_cid(self) -> int:
        self._cid += 1
        return self._cid

    def send(self, dst: int, body, pre_vote: bool = False) -> int:
        cid = self.next_cid()
        self.outbox.append(msg.Envelope(self.node_id, dst, cid, body, pre_vote))
        return cid

    def reply(self, request: msg.Envelope, body) -> None:
        self.outbox.append(msg.Envelope(self.node_id, request.src, request.correlation_id, body, request.pre_vote))

    def cluster_ok(self, cluster_id) -> bool:
        """Kafka's hasValidClusterId: a null id is accepted (older clients), else it must match."""
        return cluster_id is None or cluster_id == self.cfg.cluster_id

    # ------------------------------------------------------------ log
    def append(self, batch) -> None:
        """Append a batch as leader and wake parked fetches."""
        self.log.append(batch)
        if batch.is_control:
            self.on_control_batch(batch)
        if self.leader_state is not None:
            leader.complete_parked(self)

    def on_control_batch(self, batch) -> None:
        """Interpret KRaftVersion and Voters records of a batch now in the log."""
        changed = False
        for kind, record in batch.control_records():
            if kind == C.KRAFT_VERSION:
                self.kraft_version = max(self.kraft_version, record.kraft_version)
            elif kind == C.KRAFT_VOTERS:
                self.voter_history.add(batch.base_offset, VoterSet.from_record(record))
                changed = True
        if changed:
            self.on_voters_changed()

    def truncate(self, offset: int) -> None:
        if offset < self.high_watermark:
            raise AssertionError(f"node {self.node_id} asked to truncate to {offset} below the high "
                                 f"watermark {self.high_watermark}")
        self.log.truncate_to(offset)
        self.flushed_end = min(self.flushed_end, self.log.end_offset)
        self.flush_issued = min(self.flush_issued, self.log.end_offset)
        before = self.voters
        self.voter_history.truncate(self.log.end_offset)
        if self.voters != before:
            self.on_voters_changed()

    def install_snapshot(self, snapshot: Snapshot) -> None:
        self.log.install_snapshot(snapshot)
        self.flushed_end = self.flush_issued = self.log.end_offset
        level, voters = S.read_control(snapshot.data)
        self.kraft_version = max(self.kraft_version, level)
        if voters is not None:
            self.voter_history.reset(voters)
        self.high_watermark = max(self.high_watermark, snapshot.snapshot_id.end_offset)
        self._pending_load = snapshot
        self.on_voters_changed()

    def on_voters_changed(self) -> None:
        """Re-classify this node as voter or observer after the voter set changed."""
        role = self.state.role
        if self.is_voter() and role == OBSERVER:
            if self.state.leader_id is not None:
                self.state.move(FOLLOWER)
            else:
                self.state.move(UNATTACHED)
                self.deadline = self.now + self.election_timeout()
        elif not self.is_voter() and role in (UNATTACHED, VOTED, PROSPECTIVE, CANDIDATE, FOLLOWER):
            self.tally = None
            self.state.move(OBSERVER)
        elif role == LEADER:
            leader.update_high_watermark(self)

    # ------------------------------------------------------------ transitions
    def _leave_leadership(self) -> None:
        if self.leader_state is not None:
            reconfig.fail_pending(self)
            leader.complete_parked(self, force=True)
        self.leader_state = None
        self.tally = None

    def become_unattached(self, epoch: int) -> None:
        self._leave_leadership()
        self.state.move(UNATTACHED if self.is_voter() else OBSERVER, epoch)
        self.deadline = self.now + self.election_timeout()
        self.fetcher.reset(self.now, self.fetch_timeout())

    def become_follower(self, epoch: int, leader_id: int) -> None:
        self._leave_leadership()
        self.state.move(FOLLOWER if self.is_voter() else OBSERVER, epoch, leader_id=leader_id)
        self.election_retries = 0
        self.fetcher.reset(self.now, self.fetch_timeout())
        follower.maybe_fetch(self)

    def become_voted(self, candidate_id: int, candidate_dir: bytes) -> None:
        self.state.move(VOTED, voted_id=candidate_id, voted_dir=candidate_dir)
        self.tally = None
        self.deadline = self.now + self.election_timeout()

    def become_prospective(self, backoff_ms: int = 0) -> None:
        self.tally = None
        self.state.move(PROSPECTIVE)
        election.start_round(self, pre_vote=True, backoff_ms=backoff_ms)

    def become_candidate(self) -> None:
        self.state.move(CANDIDATE, self.state.epoch + 1, voted_id=self.node_id, voted_dir=self.cfg.directory_id)
        election.start_round(self, pre_vote=False, backoff_ms=0)

    def become_leader(self, granting) -> None:
        self.tally = None
        self.state.move(LEADER, leader_id=self.node_id)
        self.election_retries = 0
        leader.start_leading(self, granting)

    def become_resigned(self, removed: bool = False) -> None:
        preferred = leader.preferred_successors(self)
        self._leave_leadership()
        self.state.move(RESIGNED)
        self.deadline = self.now + (self.election_timeout() if not removed else 0)
        election.send_end_epoch(self, preferred)

    def on_election_timeout(self) -> None:
        """Unattached, voted, resigned or follower timed out: campaign (voters only)."""
        if not self.is_voter():
            self._leave_leadership()
            self.state.move(OBSERVER, leader_id=None)
            self.fetcher.reset(self.now, self.fetch_timeout())
            return
        if self.voters.ids() == {self.node_id} or not self.cfg.pre_vote:
            self.become_candidate()
        else:
            self.become_prospective()

    # ------------------------------------------------------------ common response handling
    def learn_leader(self, epoch: int, leader_id: int) -> bool:
        """Kafka's maybeHandleCommonResponse: move on if a response shows a newer epoch or the leader."""
        st = self.state
        if epoch > st.epoch:
            if leader_id >= 0 and leader_id != self.node_id:
                self.become_follower(epoch, leader_id)
            else:
                self.become_unattached(epoch)
            return True
        if epoch == st.epoch and 0 <= leader_id != self.node_id and st.role not in (LEADER, RESIGNED):
            if st.role not in (FOLLOWER, OBSERVER) or st.leader_id != leader_id:
                self.become_follower(epoch, leader_id)
                return True
        return False

    def describe(self) -> dict:
        """A plain summary for tests and traces."""
        st = self.state
        return {"id": self.node_id, "role": st.role, "epoch": st.epoch, "leader": st.leader_id, "voted": st.voted_id,
                "hw": self.high_watermark, "log": (self.log.start_offset, self.log.end_offset),
                "voters": sorted(self.voters.ids())}

