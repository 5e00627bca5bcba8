"""RaftDriver: runs one RaftNode against a durable log, a transport and the metadata state machine.

Rules:
- One Ready at a time, in the order config.Ready documents: persist quorum-state, flush the log,
  send, load a snapshot, apply committed batches, write a snapshot if due, then advance().
- A leader may fsync in a background thread (`background`), one job at a time: appends go on meanwhile
  and its log end counts once the job is done; followers always flush before they acknowledge.
- Except that a leader does not wait for its flush before it sends: it sends (its messages carry data to
  followers, and votes it already persisted), then hands the fsync to the background, and its own log end
  counts toward the high watermark only once flushed, so replication and the leader's fsync overlap (as Raft
  allows) and a commit costs one fsync in series. The sends go first because the fsync thread cannot start
  before this thread lets go of the GIL (when the loop waits again) anyway, and waking it first would only
  put a thread switch in front of the followers' data.
- A high watermark the core leaves owed to parked fetches (RaftConfig.high_watermark_linger_ms) is
  released through `defer` once the linger runs out, unless records carried it before.
- No asyncio here: time arrives through tick(), messages through step(), replies and commit
  notifications leave through callbacks, so the driver is tested without sockets.
- Proposals accumulate between raft events and are flushed as one batch before the next tick or
  step, so the offsets promised to handlers (ctx.next_offset) are exact. Records are encoded once,
  when proposed: the pending image replays partition records from those values and the batch carries them.
- A proposal's waiters complete once the high watermark passes its batch; they fail with
  NotController when this node stops being the active controller before that. They complete as soon as
  a Ready carries their batch as committed, before it is applied (as Kafka's controller completes its
  purgatory on commit: the active controller replayed the records when it proposed them), so a write's
  answer leaves before the image bookkeeping; nothing else runs on this thread in between, so a request
  read after the answer sees the batch applied.
- The driver's own snapshots (metadata.log.max.record.bytes.between.snapshots or the interval) are encoded
  in the background, one at a time, from the committed image captured when due (images are immutable), and
  written to their file there too when the log can (FileLog.prepare_snapshot: the file and its fsync), then
  stored on this thread when done (a rename) unless a newer snapshot was stored or installed meanwhile: a
  large image takes seconds to encode and its file a few hundred ms to write and fsync, which must not
  stall fetches and votes. Snapshots the raft asks for are written at once.
- The controller is active once it leads and has applied everything up to its epoch's start
  (Kafka's QuorumController claims leadership after replaying the previous epochs).
"""
from __future__ import annotations

import logging

from kraftsman.controller.raft import leader
from kraftsman.controller.raft.core import NotLeaderError, RaftNode
from kraftsman.storage.records.metadata import write_metadata_records
from kraftsman.storage.records.snapshot_id import SnapshotId

from .metadata_state import MetadataState

log = logging.getLogger("kraftsman.server")
MAX_BATCH_RECORDS = 10_000


class NotController(RuntimeError):
    """This node is not (or no longer) the active controller."""


class _Waiter:
    __slots__ = ("end_offset", "done")

    def __init__(self, end_offset: int, done):
        self.end_offset, self.done = end_offset, done


class RaftDriver:
    """Glue between a RaftNode, its storage and the outside world."""

    def __init__(self, node: RaftNode, state: MetadataState, *, send, persist_quorum_state,
                 snapshot_max_bytes: int = 20 << 20, snapshot_interval_ms: int = 3_600_000,
                 on_activate=None, on_deactivate=None, background=None, defer=None):
        self.node, self.state = node, state
        self._send, self._persist_qs = send, persist_quorum_state
        self.snapshot_max_bytes, self.snapshot_interval_ms = snapshot_max_bytes, snapshot_interval_ms
        self.on_activate, self.on_deactivate = on_activate, on_deactivate
        self.inbound: dict[int, object] = {}
        self._next_inbound = 1 << 30
        self._accum: list = []
        self._accum_waiters: list = []
        self._waiters: list[_Waiter] = []
        self.active_epoch = -1
        self._last_snapshot_ms = node.now
        self.stopped = False
        self._background = background  # background(fn, done, what): run fn in a thread, then done() on this one
        self._defer = defer  # defer(seconds, fn): call fn on this thread later
        self._release_due = False  # a release of the owed high watermark is deferred
        self._flushing = False
        self._snapshotting = False  # a snapshot is being encoded in the background

    # ------------------------------------------------------------ inputs
    def tick(self, count: int = 1) -> None:
        """Advance the raft clock by `count` ticks."""
        self.flush_proposals()
        for _ in range(count):
            self.node.tick()
        self.process()

    def step(self, env) -> None:
        """Deliver a response from a peer (or any envelope addressed to this node)."""
        self.flush_proposals()
        self.node.step(env)
        self.process()

    def request(self, env, reply) -> None:
        """Deliver an inbound raft request; `reply(body or None)` is called with the answer."""
        self._next_inbound += 1
        env.correlation_id, env.dst = self._next_inbound, self.node.node_id
        self.inbound[env.correlation_id] = reply
        self.step(env)

    # ------------------------------------------------------------ proposals
    @property
    def is_active(self) -> bool:
        return self.active_epoch >= 0 and self.active_epoch == self.node.epoch and self.node.is_leader()

    def next_offset(self) -> int:
        """Return the offset the next proposed record will get."""
        return self.node.log.end_offset + len(self._accum)

    def propose(self, records, done) -> None:
        """Queue records for the next batch; `done(error or None)` is called when they commit or fail."""
        if not self.is_active:
            done(NotController("not the active controller"))
            return
        if records and len(self._accum) + len(records) > MAX_BATCH_RECORDS:
            self.flush_proposals()
        values = write_metadata_records(records)
        self.state.propose(records, values)
        self._accum.extend(values)
        if records:
            self._accum_waiters.append(done)
        else:
            self._wait(self.next_offset(), done)

    def flush_proposals(self) -> None:
        """Append the queued records as one raft batch."""
        if not self._accum:
            return
        values, waiters = self._accum, self._accum_waiters
        self._accum, self._accum_waiters = [], []
        try:
            base, _ = self.node.propose(values)
        except NotLeaderError:
            for done in waiters:
                done(NotController("leadership lost before the append"))
            return
        self.state.mark_proposed(base + len(values))
        for done in waiters:
            self._wait(base + len(values), done)
        self.process()
        self.state.settle()  # the pending image, applied once the batch is on its way

    def _wait(self, end_offset: int, done) -> None:
        if end_offset <= self.state.offset:
            done(None)
        else:
            self._waiters.append(_Waiter(end_offset, done))

    # ------------------------------------------------------------ the Ready loop
    def process(self) -> None:
        """Handle every Ready the node has."""
        node = self.node
        while node.has_ready():
            rd = node.ready()
            if rd.quorum_state is not None:
                self._persist_qs(rd.quorum_state, rd.data_version)
            early = node.is_leader()  # a leader's data may travel before its own flush (see Rules)
            if rd.flush and early and self._background is not None:
                self._send_all(rd.messages)
                self._flush_in_background(rd)  # after the sends (see Rules)
            elif early:
                self._send_all(rd.messages)
                if rd.flush:
                    node.log.flush()
            else:
                if rd.flush:
                    node.log.flush()
                self._send_all(rd.messages)
            if rd.load_snapshot is not None:
                self.state.load_snapshot(rd.load_snapshot)
            if rd.committed:
                self._complete_waiters(rd.committed[-1].next_offset)  # answers first (see Rules)
            for batch in rd.committed:
                self.state.apply_batch(batch)
            node.advance(rd)
            if rd.snapshot_request is not None:
                self._write_snapshot(process=False)
        self._maybe_snapshot()
        self._complete_waiters()
        self._check_activation()
        self._defer_release()

    def _defer_release(self) -> None:
        """Release the high watermark parked fetches are owed once the linger runs out (the core alone
        would wait for a tick)."""
        if self._defer is None or self._release_due or not self._high_watermark_owed():
            return
        self._release_due = True

        def release() -> None:
            self._release_due = False
            if not self.stopped:
                self.flush_proposals()
                if self._high_watermark_owed():
                    leader.complete_parked(self.node)
                self.process()
        self._defer(self.node.cfg.high_watermark_linger_ms / 1000, release)

    def _high_watermark_owed(self) -> bool:
        ls = self.node.leader_state
        return ls is not None and ls.hw_owed_since is not None

    def _flush_in_background(self, rd) -> None:
        """Make the log durable in a thread (one job at a time, the next one picks up what arrived
        meanwhile); the leader counts its own log end toward the high watermark when a job is done."""
        rd.flush = False
        self.node.flush_started(self.node.log.end_offset)
        if not self._flushing:
            self._start_flush_job()

    def _start_flush_job(self) -> None:
        node = self.node
        self._flushing = True
        end, job = node.log.end_offset, node.log.begin_flush()

        def done() -> None:
            self._flushing = False
            node.log.end_flush(job)
            if self.stopped:
                return
            node.flush_done(end)
            if node.is_leader() and node.flush_issued > node.flushed_end:
                self._start_flush_job()
            self.process()
        self._background(job, done, "fsync")

    def _send_all(self, messages) -> None:
        for env in messages:
            self._route(env)

    def _route(self, env) -> None:
        if env.is_response:
            reply = self.inbound.pop(env.correlation_id, None)
            if reply is not None:
                reply(env.body)
        else:
            self._send(env)

    def _complete_waiters(self, offset: int | None = None) -> None:
        """Complete the waiters whose batches end at or below `offset` (default: what is applied)."""
        if not self._waiters:
            return
        if offset is None:
            offset = self.state.offset
        ready = [w for w in self._waiters if w.end_offset <= offset]
        if ready:
            self._waiters = [w for w in self._waiters if w.end_offset > offset]
            for w in ready:
                w.done(None)

    # ------------------------------------------------------------ activation
    def _check_activation(self) -> None:
        node = self.node
        if self.active_epoch >= 0 and not (node.is_leader() and node.epoch == self.active_epoch):
            self._deactivate()
        if self.active_epoch < 0 and node.is_leader() and node.leader_state is not None:
            if self.state.offset > node.leader_state.epoch_start_offset:
                self.active_epoch = node.epoch
                self.state.reset_pending()
                log.info("node %d is the active controller in epoch %d", node.node_id, node.epoch)
                if self.on_activate is not None:
                    self.on_activate()

    def _deactivate(self) -> None:
        log.info("node %d is no longer the active controller (epoch %d)", self.node.node_id, self.active_epoch)
        self.active_epoch = -1
        self.state.drop_pending()
        waiters = self._waiters + [_Waiter(0, d) for d in self._accum_waiters]
        self._waiters, self._accum, self._accum_waiters = [], [], []
        for w in waiters:
            w.done(NotController("leadership lost"))
        if self.on_deactivate is not None:
            self.on_deactivate()

    # ------------------------------------------------------------ snapshots
    def _maybe_snapshot(self) -> None:
        st = self.state
        due = st.bytes_since_snapshot >= self.snapshot_max_bytes or (
            st.bytes_since_snapshot > 0 and self.node.now - self._last_snapshot_ms >= self.snapshot_interval_ms)
        if due and st.offset > self.node.log.start_offset and not self._snapshotting:
            self._write_snapshot()

    def _write_snapshot(self, process: bool = True) -> None:
        """Snapshot the committed image. The driver's own snapshots (size or interval) are encoded in the
        background when it has one: a large image takes seconds, which must not stall fetches and votes."""
        node, st = self.node, self.state
        sid = SnapshotId(st.offset, st.last_epoch)
        job = st.snapshot_job(sid, node.voter_history.at(st.offset), node.kraft_version, st.last_timestamp)
        if not process or self._background is None:
            self._store_snapshot(job(), process)
            return
        self._snapshotting = True
        built: list = []
        prepare = getattr(node.log, "prepare_snapshot", None)  # FileLog: write and fsync the file there too

        def encode() -> None:
            snapshot = job()
            if prepare is not None:
                prepare(snapshot)
            built.append(snapshot)

        def done() -> None:
            self._snapshotting = False
            latest = node.log.latest_snapshot()
            if self.stopped or not built or sid.end_offset <= node.log.start_offset or (
                    latest is not None and latest.snapshot_id.end_offset >= sid.end_offset):
                if built and prepare is not None:
                    node.log.discard_prepared_snapshot(sid)
                return  # stopped, or a newer snapshot was written or installed while this one was encoded
            self._store_snapshot(built[0], True)
        self._background(encode, done, "snapshot")

    def _store_snapshot(self, snapshot, process: bool) -> None:
        node = self.node
        node.snapshot_written(snapshot)
        self._last_snapshot_ms = node.now
        log.info("node %d wrote snapshot %s", node.node_id, snapshot.snapshot_id)
        if process:
            self.process()

    def stop(self) -> None:
        """Fail everything pending (shutdown)."""
        self.stopped = True
        if self.active_epoch >= 0:
            self._deactivate()
        for reply in self.inbound.values():
            reply(None)
        self.inbound.clear()
