"""Test harness for the sans-I/O raft core: replicas with crash-safe storage, a faulty network, a
fake clock, a digest state machine, and the invariant checker (the seeded random runs over it are
raft_simulation.py; the scripted scenarios raft_scenario.py).

Rules:
- A Box is one machine: what survives a crash is the flushed log, snapshots and the last persisted
  quorum-state; the RaftNode and the state machine are rebuilt on restart.
- Every input (tick, step, propose) is followed by handling the node's Ready the way a driver must:
  persist quorum-state, flush the log, queue the messages, apply, snapshot, advance.
- The Network only queues; the caller decides delivery (scenario scripts by hand, the seeded
  simulation with random delay, loss, duplication, reordering and partitions).
- Invariants raise Violation; `trace` holds every event so a failing seed can be replayed.
- `kafka39` nodes speak only what Kafka 3.9 speaks on the Raft wire: they never campaign with a pre-vote, and
  a pre-vote sent to them comes back as UNSUPPORTED_VERSION, as the real transport answers it (peers.py).
- Every node is also checked as Kafka's FollowerState would check it: the high watermark of each Fetch
  response it accepts, min(response's, its log end), never goes below one it accepted before in the same
  process lifetime (Kafka's followers and observers exit on such a "Non-monotonic update"); -1 is skipped.
"""
from __future__ import annotations

import collections
import hashlib
import random
import struct

from kraftsman.controller.raft import snapshot as S
from kraftsman.controller.raft.config import RaftConfig
from kraftsman.controller.raft.core import RaftNode
from kraftsman.controller.raft.log import MemoryLog, SnapshotId
from kraftsman.controller.raft.messages import Envelope, vote_response
from kraftsman.controller.raft.state import FOLLOWER, LEADER, OBSERVER
from kraftsman.controller.raft.voters import VoterNode, VoterSet
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.protocol.uuids import Uuid

ADMIN = -100  # envelope source id of an administrative client
_MAX_TIMESTAMP = struct.Struct(">q")  # a batch's max timestamp, at byte 35


class Violation(AssertionError):
    """A safety invariant does not hold."""


def dir_id(node_id: int) -> Uuid:
    return Uuid.from_longs(node_id + 1, 1000 + node_id)


def bootstrap_snapshot(voter_ids):
    """The 0-0.checkpoint `kafka-storage format --initial-controllers` writes (kraft.version 1)."""
    voters = VoterSet(VoterNode(v, dir_id(v), (("CONTROLLER", "localhost", 9000 + v),)) for v in voter_ids)
    return S.build_snapshot(SnapshotId(0, 0), (), voters, 1)


class StateMachine:
    """Applies committed batches into a running digest; snapshots hold the digest."""

    def __init__(self):
        self.applied = 0
        self.digest = b""
        self.history: dict[int, bytes] = {}
        self.last_timestamp = 0  # of the last batch applied: a snapshot's LastContainedLogTimestamp

    def apply(self, batch) -> None:
        if batch.base_offset != self.applied:
            raise Violation(f"apply of batch at {batch.base_offset} but applied up to {self.applied}")
        self.digest = hashlib.sha1(self.digest + batch.data[21:]).digest()
        self.applied = batch.next_offset
        self.history[self.applied] = self.digest
        self.last_timestamp = _MAX_TIMESTAMP.unpack_from(batch.data, 35)[0]

    def load(self, snapshot) -> None:
        values = S.read_values(snapshot.data)
        self.applied = snapshot.snapshot_id.end_offset
        self.digest = values[0] if values else b""
        self.history[self.applied] = self.digest


class Box:
    """One machine."""

    def __init__(self, cfg: RaftConfig, seed: int, snapshots=()):
        self.cfg = cfg
        self.log = MemoryLog(snapshots)
        self.saved_qs = None
        self.rng = random.Random(seed * 1000 + cfg.node_id)
        self.alive = True
        self.node = None
        self.sm = None
        self.last_hw = 0
        self.start()

    def start(self) -> None:
        self.log.crash()
        self.node = RaftNode(self.cfg, self.log, self.rng, self.saved_qs)
        self.sm = StateMachine()
        self.last_hw = self.node.high_watermark
        self.seen_hw = -1  # the strict follower's high watermark (Kafka's FollowerState), new each process
        self.alive = True
        self.marks: dict[str, tuple] = {}


class Network:
    """Messages in flight: (deliver_at, seq, envelope)."""

    def __init__(self):
        self.queue: list = []
        self.seq = 0
        self.cut: set[tuple[int, int]] = set()

    def put(self, env, at: int) -> None:
        self.seq += 1
        self.queue.append((at, self.seq, env))

    def blocked(self, src: int, dst: int) -> bool:
        return (src, dst) in self.cut

    def partition(self, groups) -> None:
        """Cut every link between different groups (lists of node ids)."""
        self.cut.clear()
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:
                for x in a:
                    for y in b:
                        self.cut.add((x, y))
                        self.cut.add((y, x))

    def heal(self) -> None:
        self.cut.clear()


class Cluster:
    """Replicas, network, clock and invariants."""

    def __init__(self, seed: int = 0, voters=(1, 2, 3), observers=(), kraft_version: int = 0, wire: bool = False,
                 kafka39=(), **overrides):
        self.seed, self.now, self.wire = seed, 0, wire
        self.kafka39 = frozenset(kafka39)
        self.net = Network()
        self.trace: list[str] = []
        self.epoch_leaders: dict[int, int] = {}
        self.committed: dict[int, tuple] = {}
        self.commit_epoch: dict[int, int] = {}
        self.digests: dict[int, bytes] = {}
        self.batch_keys: dict[tuple, tuple] = {}
        self.delay = lambda: 0
        self.admin_inbox: list = []
        self.sent = collections.Counter()  # messages sent, by name (e.g. FetchSnapshotRequest)
        self.boxes: dict[int, Box] = {}
        self.kraft_version = kraft_version
        self.overrides = overrides
        self.voter_ids = tuple(voters)
        for nid in (*voters, *observers):
            self.add_node(nid, voters)

    def add_node(self, nid: int, voters=None) -> Box:
        voters = self.voter_ids if voters is None else voters
        kv = self.kraft_version
        cfg = RaftConfig(node_id=nid, voters=() if kv else tuple(voters), kraft_version=kv,
                         directory_id=dir_id(nid) if kv else bytes(16),
                         endpoints=(("CONTROLLER", "localhost", 9000 + nid),),
                         bootstrap_voters=tuple(voters),
                         **{**self.overrides, **({"pre_vote": False} if nid in self.kafka39 else {})})
        snaps = [bootstrap_snapshot(voters)] if kv else []
        box = self.boxes[nid] = Box(cfg, self.seed, snaps)
        self.process(box)
        return box

    # ------------------------------------------------------------ driving
    def log_event(self, text, env=None) -> None:
        self.trace.append((self.now, text, env))

    def format_trace(self, last: int | None = None) -> str:
        events = self.trace if last is None else self.trace[-last:]
        return "\n".join(f"t={t} {text}{'' if env is None else ' ' + repr(env)}" for t, text, env in events)

    def process(self, box: Box) -> None:
        """Handle Ready until the node has nothing more to say."""
        node = box.node
        while box.alive and node.has_ready():
            rd = node.ready()
            if rd.quorum_state is not None:
                box.saved_qs = rd.quorum_state.replace()
            if rd.flush:
                box.log.flush()
            for env in rd.messages:
                self.sent[env.name] += 1
                self.net.put(env.wire_round_trip() if self.wire else env, self.now + self.delay())
            if rd.load_snapshot is not None:
                box.sm.load(rd.load_snapshot)
            for batch in rd.committed:
                box.sm.apply(batch)
            if rd.snapshot_request is not None:
                self._write_snapshot(box, rd.snapshot_request)
            node.advance(rd)
            self.check(box)

    def _write_snapshot(self, box: Box, req) -> None:
        if box.sm.applied != req.snapshot_id.end_offset:
            raise Violation(f"snapshot at {req.snapshot_id} but state machine applied {box.sm.applied}")
        snap = S.build_snapshot(req.snapshot_id, [box.sm.digest], req.voters, req.kraft_version,
                                timestamp=box.sm.last_timestamp)
        box.node.snapshot_written(snap)

    def tick(self, ids=None) -> None:
        for nid in sorted(self.boxes) if ids is None else ids:
            box = self.boxes[nid]
            if box.alive:
                box.node.tick()
                self.process(box)

    def advance_clock(self, ticks: int = 1, ids=None) -> None:
        for _ in range(ticks):
            self.now += self.boxes[next(iter(self.boxes))].cfg.tick_ms
            self.tick(ids)

    def deliver(self, env) -> bool:
        if env.dst == ADMIN:
            self.admin_inbox.append(env)
            return True
        box = self.boxes.get(env.dst)
        if box is None or not box.alive or self.net.blocked(env.src, env.dst):
            return False
        if env.pre_vote and env.name == "VoteRequest" and env.dst in self.kafka39:
            self.log_event("pre-vote unsupported", env)
            refusal = vote_response(Errors.UNSUPPORTED_VERSION)
            self.net.put(Envelope(env.dst, env.src, env.correlation_id, refusal, True), self.now)
            return True
        self.log_event("deliver", env)
        before = (box.node.fetcher.inflight, box.node.epoch, box.node.role, box.node.leader_id)
        box.node.step(env)
        self.process(box)
        if env.name == "FetchResponse" and box.alive:
            self._check_fetched_high_watermark(box, env, *before)
        return True

    def deliver_all(self, max_rounds: int = 10000) -> int:
        """Deliver everything queued, and what that produces, until quiet (scenario 'stabilize')."""
        n = 0
        while self.net.queue and n < max_rounds:
            batch, self.net.queue = sorted(self.net.queue), []
            for _, _, env in batch:
                n += self.deliver(env)
        return n

    def propose(self, nid: int, values) -> tuple:
        box = self.boxes[nid]
        self.log_event(f"propose {nid} x{len(values)}")
        result = box.node.propose(values)
        self.process(box)
        return result

    def admin(self, nid: int, body) -> None:
        from kraftsman.controller.raft.messages import Envelope
        self.net.put(Envelope(ADMIN, nid, 1, body), self.now)

    def crash(self, nid: int) -> None:
        self.log_event(f"crash {nid}")
        box = self.boxes[nid]
        box.alive = False
        self.net.queue = [m for m in self.net.queue if m[2].dst != nid]

    def restart(self, nid: int) -> None:
        self.log_event(f"restart {nid}")
        box = self.boxes[nid]
        box.start()
        box.node.now = self.now
        box.node.deadline = self.now + box.node.election_timeout()
        box.node.fetcher.reset(self.now, box.cfg.fetch_timeout_ms)
        self.process(box)

    def leaders(self) -> list[int]:
        return [n for n, b in self.boxes.items() if b.alive and b.node.role == LEADER]

    def leader(self) -> int | None:
        live = [n for n in self.leaders()]
        if not live:
            return None
        return max(live, key=lambda n: self.boxes[n].node.epoch)

    # ------------------------------------------------------------ invariants
    def check(self, box: Box) -> None:
        node = box.node
        if node.role == LEADER:
            other = self.epoch_leaders.setdefault(node.epoch, node.node_id)
            if other != node.node_id:
                raise Violation(f"two leaders in epoch {node.epoch}: {other} and {node.node_id}")
            self._check_leader_has_committed(box)
        if node.high_watermark < box.last_hw:
            raise Violation(f"node {node.node_id} high watermark went back from {box.last_hw} to "
                            f"{node.high_watermark}")
        box.last_hw = node.high_watermark
        self._check_log_matching(box)
        self._record_committed(box)
        for offset, digest in box.sm.history.items():
            seen = self.digests.setdefault(offset, digest)
            if seen != digest:
                raise Violation(f"node {node.node_id} applied a different committed prefix at {offset}")
        box.sm.history.clear()

    @staticmethod
    def _resume(box: Box, name: str) -> int:
        """Index of the first batch not yet checked for `name` (0 when the log changed under us)."""
        mark = box.marks.get(name)
        batches = box.log.batches
        if mark is None or mark[2] != box.log.start_offset:
            return 0
        n, last = mark[0], mark[1]
        return n if n <= len(batches) and (n == 0 or batches[n - 1] is last) else 0

    def _check_fetched_high_watermark(self, box: Box, env, inflight, epoch, role, leader_id) -> None:
        """Apply Kafka's follower rule to an accepted Fetch response (see Rules)."""
        body = env.body
        if env.correlation_id != inflight or body.error_code or role not in (FOLLOWER, OBSERVER):
            return
        part = body.responses[0].partitions[0]
        if part.error_code or part.current_leader.leader_epoch != epoch or env.src != leader_id:
            return
        if part.diverging_epoch.end_offset >= 0 or part.snapshot_id.end_offset >= 0 or part.high_watermark < 0:
            return
        hw = min(part.high_watermark, box.log.end_offset)
        if hw < box.seen_hw:
            raise Violation(f"node {box.cfg.node_id}: non-monotonic update of high watermark from {box.seen_hw} "
                            f"to {hw} (Fetch response of node {env.src}, epoch {epoch}); a Kafka follower exits")
        box.seen_hw = hw

    def _check_log_matching(self, box: Box) -> None:
        """Same (base offset, epoch) => same bytes and same predecessor batch (hence same prefix)."""
        batches = box.log.batches
        i = self._resume(box, "match")
        prev = None  # unknown below the first batch when the log starts after a snapshot
        if i:
            prev = (batches[i - 1].base_offset, batches[i - 1].epoch)
        elif box.log.start_offset == 0:
            prev = (0, -1)
        for batch in batches[i:]:
            key = (batch.base_offset, batch.epoch)
            seen = self.batch_keys.get(key)
            if seen is None or (seen[2] is None and prev is not None):
                self.batch_keys[key] = (batch.crc, batch.count, prev)
            elif seen[:2] != (batch.crc, batch.count) or (prev is not None and seen[2] != prev):
                raise Violation(f"log matching broken at {key} on node {box.cfg.node_id}: "
                                f"{seen} vs {(batch.crc, batch.count, prev)}")
            prev = key
        box.marks["match"] = (len(batches), batches[-1] if batches else None, box.log.start_offset)

    def _record_committed(self, box: Box) -> None:
        hw, epoch = box.node.high_watermark, box.node.epoch
        batches = box.log.batches
        i = self._resume(box, "commit")
        while i < len(batches) and batches[i].next_offset <= hw:
            batch = batches[i]
            value = (batch.epoch, batch.crc)
            seen = self.committed.setdefault(batch.base_offset, value)
            self.commit_epoch[batch.base_offset] = min(self.commit_epoch.get(batch.base_offset, epoch), epoch)
            if seen != value:
                raise Violation(f"node {box.cfg.node_id} committed {value} at {batch.base_offset}, "
                                f"but {seen} was committed there")
            i += 1
        box.marks["commit"] = (i, batches[i - 1] if i else None, box.log.start_offset)

    def _check_leader_has_committed(self, box: Box) -> None:
        """Every batch committed in an earlier epoch is in this leader's log (checked once per term)."""
        mark = (box.node.epoch, len(self.committed), box.log.start_offset)
        if box.marks.get("leader") == mark:
            return
        box.marks["leader"] = mark
        log = box.log
        index = {b.base_offset: (b.epoch, b.crc) for b in log.batches}
        epoch = box.node.epoch
        for offset, value in self.committed.items():
            if self.commit_epoch[offset] < epoch and offset >= log.start_offset and index.get(offset) != value:
                raise Violation(f"leader {box.cfg.node_id} (epoch {box.node.epoch}) lacks committed batch "
                                f"at {offset}")
