"""The raft core on FileLog: a single-voter quorum proposes, snapshots, restarts from its directory
(cleanly and after a torn write) and recovers the same log, state and high watermark."""
from __future__ import annotations

import hashlib
import os
import random

from kraftsman.controller.raft import snapshot as S
from kraftsman.controller.raft.config import RaftConfig
from kraftsman.controller.raft.core import RaftNode
from kraftsman.controller.raft.state import LEADER
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.records.raft_values import Batch, Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId


def core_snapshot(end_offset, epoch, data):
    return Snapshot(SnapshotId(end_offset, epoch), data)


class Machine:
    """One controller: a FileLog in `directory`, a RaftNode, a digest state machine, a saved quorum-state."""

    def __init__(self, directory, saved_qs=None, snapshot_every=25, retention_max_bytes=0):
        self.log = FileLog.open(directory, batch_type=Batch, snapshot_type=core_snapshot, segment_bytes=600)
        cfg = RaftConfig(node_id=1, voters=(1,), snapshot_every_records=snapshot_every,
                         retention_max_bytes=retention_max_bytes)  # 0: only the newest snapshot and the log after it
        self.node = RaftNode(cfg, self.log, random.Random(1), saved_qs)
        self.saved_qs = saved_qs
        self.applied, self.digest, self.history = 0, b"", {}
        self.process()

    def process(self) -> None:
        node = self.node
        while node.has_ready():
            rd = node.ready()
            if rd.quorum_state is not None:
                self.saved_qs = rd.quorum_state.replace()
            if rd.flush:
                self.log.flush()
            if rd.load_snapshot is not None:
                values = S.read_values(rd.load_snapshot.data)
                self.applied, self.digest = rd.load_snapshot.snapshot_id.end_offset, values[0] if values else b""
            for batch in rd.committed:
                assert batch.base_offset == self.applied
                self.digest = hashlib.sha1(self.digest + batch.data[21:]).digest()
                self.applied = batch.next_offset
                self.history[self.applied] = self.digest
            if rd.snapshot_request is not None:
                assert rd.snapshot_request.snapshot_id.end_offset == self.applied
                node.snapshot_written(S.build_snapshot(rd.snapshot_request.snapshot_id, [self.digest]))
            node.advance(rd)

    def elect(self) -> None:
        for _ in range(200):
            if self.node.role == LEADER:
                return
            self.node.tick()
            self.process()
        raise AssertionError("no leader after 200 ticks")

    def propose(self, rng: random.Random, n: int) -> None:
        for _ in range(n):
            self.node.propose([rng.randbytes(rng.randint(1, 40)) for _ in range(rng.randint(1, 3))])
            self.process()

    def state(self, start=None) -> tuple:
        """The log from `start` (its start offset by default), its end, last epoch and newest snapshot."""
        log = self.log
        start = log.start_offset if start is None else start
        return (start, log.end_offset, log.last_epoch(), log.latest_snapshot(),
                [b.data for b in log.read(start, 1 << 40) if b.base_offset >= start])


def test_single_voter_restarts_with_the_same_log_and_high_watermark(tmp_path):
    rng = random.Random(5)
    m = Machine(tmp_path)
    m.elect()
    m.propose(rng, 80)
    assert m.node.high_watermark == m.log.end_offset and m.applied == m.log.end_offset
    assert m.log.start_offset > 0 and len(list(tmp_path.glob("*.log"))) > 1  # snapshots deleted old segments
    before, hw, epoch = m.state(), m.node.high_watermark, m.node.epoch
    m.log.close()

    again = Machine(tmp_path, m.saved_qs)
    first_segment = min(int(p.stem) for p in tmp_path.glob("*.log"))
    assert again.log.start_offset == first_segment <= before[0]  # Kafka's restart rule: the first segment's base
    assert again.state(before[0]) == before
    again.elect()
    assert again.node.epoch == epoch + 1
    assert again.node.high_watermark == again.log.end_offset > hw  # the new leader's control batch committed
    assert again.history[hw] == m.history[hw]  # replayed from snapshot + log to the same state
    again.propose(rng, 10)
    assert again.applied == again.log.end_offset
    again.log.close()


def test_a_torn_tail_loses_only_what_was_not_committed(tmp_path):
    rng = random.Random(6)
    m = Machine(tmp_path, snapshot_every=0)
    m.elect()
    m.propose(rng, 30)
    hw = m.node.high_watermark
    m.node.propose([b"uncommitted"])  # appended, never flushed nor committed: then the machine dies
    segment = sorted(tmp_path.glob("*.log"))[-1]
    m.log.close()
    segment.write_bytes(segment.read_bytes()[:-5])

    again = Machine(tmp_path, m.saved_qs, snapshot_every=0)
    assert again.log.end_offset == hw
    again.elect()
    assert again.history[hw] == m.history[hw]
    assert again.node.high_watermark == again.log.end_offset == hw + 1  # plus the new leader's control batch
    again.log.close()


def test_a_restart_with_log_below_the_newest_snapshot_applies_from_that_snapshot(tmp_path):
    """Retention keeps the log below the newest snapshot (here: a snapshot stored, the machine died before
    retention ran; the same holds within metadata.max.retention.bytes): the restarted node must load the newest
    snapshot and apply the log after it, never the log below it on top of it."""
    rng = random.Random(7)
    m = Machine(tmp_path, snapshot_every=10)
    m.elect()
    m.propose(rng, 25)
    assert m.log.latest_snapshot() is not None
    hw = m.node.high_watermark
    older = m.log.earliest_snapshot_id()
    m.log.store_snapshot(S.build_snapshot(SnapshotId(hw, m.log.epoch_at(hw - 1)), [m.history[hw]]))
    m.log.close()  # ... and the machine died before retention dropped the older snapshot and its log

    again = Machine(tmp_path, m.saved_qs, snapshot_every=10)
    assert again.log.start_offset <= older.end_offset < hw == again.log.latest_snapshot().snapshot_id.end_offset
    assert again.log.snapshot_ids() == [older, SnapshotId(hw, m.log.epoch_at(hw - 1))]  # both kept over a restart
    again.elect()  # Machine.process asserts every committed batch follows what was applied
    assert again.applied == again.log.end_offset == hw + 1 and again.history[hw + 1]
    again.log.close()


# ------------------------------------------------------------------ the seeded quorum simulation on disk

class DiskLog(FileLog):
    """A FileLog for the raft simulation harness: `crash()` loses what was not flushed and leaves a torn
    tail, then reopens the directory; `batches` lists the log as MemoryLog's attribute does."""

    @classmethod
    def make(cls, directory, snapshots=()):
        log = cls.open(directory, batch_type=Batch, snapshot_type=core_snapshot, segment_bytes=700)
        for snap in snapshots:
            log.store_snapshot(snap)
        if snapshots:
            log.install_snapshot(max(snapshots))
        log.durable_end, log._cache, log._cached_start = log.end_offset, [], None
        return log

    def flush(self) -> None:
        super().flush()
        self.durable_end = self.end_offset

    def truncate_to(self, offset: int) -> int:
        self._cached_start = None
        end = super().truncate_to(offset)
        self.durable_end = min(self.durable_end, end)
        return end

    def install_snapshot(self, snapshot) -> None:
        self._cached_start = None
        super().install_snapshot(snapshot)
        self.durable_end = self.end_offset

    def delete_before(self, offset: int) -> None:
        self._cached_start = None
        super().delete_before(offset)

    def crash(self) -> None:
        if self.end_offset > self.durable_end:
            FileLog.truncate_to(self, self.durable_end)
        self.close()
        if self.segments:
            with open(self.segments[-1].path, "ab") as f:
                f.write(b"\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x01")  # a write torn by the crash
        fresh = FileLog.open(self.directory, batch_type=Batch, snapshot_type=core_snapshot, segment_bytes=700)
        assert fresh.end_offset == self.durable_end and fresh.start_offset <= self.start_offset
        if fresh.start_offset < self.start_offset:  # back to the first segment (Kafka's rule): MemoryLog's start
            fresh.delete_before(self.start_offset)  # is kept, and the runs must stay identical
        self.__dict__.update(fresh.__dict__)
        self._cached_start = None

    @property
    def batches(self) -> list:
        if self._cached_start != self.start_offset:
            self._cache, self._cached_start = self.read(self.start_offset, 1 << 62), self.start_offset
        elif self._cache and self._cache[-1].next_offset < self.end_offset:
            self._cache.extend(self.read(self._cache[-1].next_offset, 1 << 62))
        elif not self._cache and self.end_offset > self.start_offset:
            self._cache.extend(self.read(self.start_offset, 1 << 62))
        return self._cache


SEEDS = (0, 1, 3, 4, 5)  # snapshots/installs, many segments, crashes, snapshots, kraft.version 1


def test_seeded_quorum_simulation_on_file_logs_replays_the_memory_log_run(tmp_path, monkeypatch):
    """Crashes, partitions, snapshots and installs with every replica on disk: the invariants hold and,
    the simulation being deterministic, every event is the same as with MemoryLog."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "controller" / "raft"))
    import raft_harness
    from raft_simulation import Simulation

    def outcome(sim):
        boxes = sim.cluster.boxes.values()
        return sim.run(), sim.cluster.format_trace(), [(b.log.start_offset, b.log.end_offset, b.log.last_epoch(),
                                                        b.node.high_watermark, b.log.latest_snapshot()) for b in boxes]

    expected = {seed: outcome(Simulation(seed)) for seed in SEEDS}
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # semantics only here: 3 ms fsyncs would dominate
    dirs = iter(range(10 ** 6))
    monkeypatch.setattr(raft_harness, "MemoryLog", lambda snapshots=(): DiskLog.make(tmp_path / str(next(dirs)), snapshots))
    for seed in SEEDS:
        sim = Simulation(seed)
        assert outcome(sim) == expected[seed], f"seed {seed}"
        assert all(isinstance(b.log, DiskLog) for b in sim.cluster.boxes.values())
        for box in sim.cluster.boxes.values():
            box.log.close()
