"""FileLog against the raft core's MemoryLog: the same random operations give the same observables.

The model is controller.raft.log.MemoryLog (the reference semantics). One documented difference is
modelled: a reopened FileLog starts at its first segment (Kafka's restart rule, metadata_log.py), below
the start delete_before left when that was inside a segment, so a reopen moves it back up with
`delete_before(the model's start)`. Sizes differ by design (the log's counts whole segments).
"""
from __future__ import annotations

import os
import random

import pytest

from kraftsman.controller.raft import records as R
from kraftsman.controller.raft.log import MemoryLog
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.log.snapshot import list_snapshots
from kraftsman.storage.records.raft_values import Batch, Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId


def core_snapshot(end_offset, epoch, data):
    return Snapshot(SnapshotId(end_offset, epoch), data)


def open_log(path, segment_bytes):
    return FileLog.open(path, batch_type=Batch, snapshot_type=core_snapshot, segment_bytes=segment_bytes)


class Pair:
    """A FileLog and a MemoryLog driven together."""

    def __init__(self, path, rng: random.Random):
        self.path, self.rng = path, rng
        self.segment_bytes = rng.choice([150, 400, 1000, 1 << 20])
        self.file = open_log(path, self.segment_bytes)
        self.mem = MemoryLog()
        self.ops: list[str] = []

    # -- operations
    def append(self) -> None:
        rng, mem = self.rng, self.mem
        epoch = mem.last_epoch() + (rng.random() < 0.15) * rng.randint(1, 2)
        if rng.random() < 0.1:
            batch = R.control_batch([R.leader_change(1, [1, 2, 3], [1, 2])], mem.end_offset, epoch)
        else:
            values = [rng.randbytes(rng.randint(0, 60)) for _ in range(rng.randint(1, 4))]
            batch = R.data_batch(values, mem.end_offset, epoch, timestamp=rng.randint(0, 10 ** 12))
        self.both("append", batch)

    def floor(self) -> int:
        latest = self.mem.latest_snapshot()
        return max(self.mem.start_offset, latest.snapshot_id.end_offset if latest else 0)

    def boundaries(self) -> list[int]:
        """Batch boundaries at or above the newest snapshot (where raft may truncate or snapshot)."""
        low = self.floor()
        return [low] + [b.next_offset for b in self.mem.batches if b.next_offset > low]

    def truncate(self) -> None:
        offset = self.rng.randint(self.floor(), self.mem.end_offset)
        assert self.both("truncate_to", offset)[0] == self.mem.end_offset

    def snapshot(self) -> None:
        end = self.rng.choice(self.boundaries())
        if end == 0 or (self.mem.snapshots and end <= self.floor()):
            return
        snap = core_snapshot(end, self.mem.epoch_at(end - 1), self.rng.randbytes(self.rng.randint(1, 200)))
        self.both("store_snapshot", snap)
        if self.rng.random() < 0.5:  # what retention does when it lets every older snapshot go
            self.both("delete_before_snapshot", snap.snapshot_id)

    def delete_before_snapshot(self) -> None:
        """Any kept snapshot, or one never stored (refused). What it returns differs by design: whether
        segments (FileLog) or batches (MemoryLog) went, or older snapshots."""
        self.both("delete_before_snapshot", self.rng.choice([*self.mem.snapshots, SnapshotId(self.mem.end_offset + 3, 1)]))

    def delete_before(self) -> None:
        ids = [s for s in self.mem.snapshots if s.end_offset >= self.mem.start_offset]
        if ids:
            self.both("delete_before", self.rng.choice(ids).end_offset)

    def install(self) -> None:
        end = self.floor() + self.rng.randint(0, 30)
        end = max(end, self.mem.end_offset) if self.rng.random() < 0.7 else end
        epoch = max(self.mem.last_epoch(), self.mem.epoch_at(end - 1)) + self.rng.randint(0, 2)
        self.both("install_snapshot", core_snapshot(end, epoch, self.rng.randbytes(50)))

    def reopen(self) -> None:
        self.both("flush")
        self.file.close()
        self.ops.append("reopen")
        self.file = open_log(self.path, self.segment_bytes)
        assert self.file.start_offset <= self.mem.start_offset
        if self.file.start_offset < self.mem.start_offset:
            self.file.delete_before(self.mem.start_offset)

    def both(self, name, *args):
        self.ops.append(f"{name}{args if name != 'append' else (args[0],)}")
        return getattr(self.file, name)(*args), getattr(self.mem, name)(*args)

    # -- observation
    def check(self, full: bool = False) -> None:
        f, m = self.file, self.mem
        where = "\n".join(self.ops[-12:])
        assert (f.start_offset, f.end_offset, f.last_epoch()) == (m.start_offset, m.end_offset, m.last_epoch()), where
        top = m.last_epoch() + 2
        assert [f.end_offset_for_epoch(e) for e in range(top)] == [m.end_offset_for_epoch(e) for e in range(top)], where
        offsets = range(max(m.start_offset - 2, 0), m.end_offset + 2) if full else {
            m.start_offset - 1, m.start_offset, m.end_offset - 1, m.end_offset,
            self.rng.randint(m.start_offset, m.end_offset + 1)}
        for o in offsets:
            assert f.epoch_at(o) == m.epoch_at(o), (o, where)
            for max_bytes in ((0, 300, 1 << 40) if full else (self.rng.choice([0, 200, 1 << 40]),)):
                got = [(b.base_offset, b.epoch, b.data) for b in f.read(o, max_bytes)]
                assert got == [(b.base_offset, b.epoch, b.data) for b in m.read(o, max_bytes)], (o, where)
        self.check_snapshots(where)

    def check_snapshots(self, where: str) -> None:
        f, m = self.file, self.mem
        assert f.latest_snapshot() == m.latest_snapshot(), where
        assert f.earliest_snapshot_id() == m.earliest_snapshot_id(), where
        assert f.snapshot_ids() == m.snapshot_ids(), where
        for sid in m.snapshot_ids():
            assert f.snapshot_size(sid) == m.snapshot_size(sid), where
            assert f.snapshot_timestamp(sid) == m.snapshot_timestamp(sid), where
        for sid in [*m.snapshots, SnapshotId(m.end_offset + 7, 1)]:
            assert f.read_snapshot(sid) == m.read_snapshot(sid), where
        on_disk = [(s.end_offset, s.epoch) for s in list_snapshots(self.path)]
        assert on_disk == sorted(m.snapshots), where


OPERATIONS = ["append"] * 12 + ["truncate", "snapshot", "snapshot", "delete_before", "delete_before_snapshot",
                                 "install", "reopen"]


@pytest.mark.parametrize("seed", range(12))
def test_file_log_matches_memory_log(tmp_path, seed):
    rng = random.Random(seed)
    pair = Pair(tmp_path / "__cluster_metadata-0", rng)
    try:
        for step in range(160):
            getattr(pair, rng.choice(OPERATIONS))()
            pair.check(full=step % 20 == 19)
        pair.reopen()
        pair.check(full=True)
    finally:
        pair.file.close()


def test_segments_roll_at_segment_bytes_and_are_named_by_base_offset(tmp_path):
    log = open_log(tmp_path, 250)
    batches = [R.data_batch([b"v" * 40], i, 1) for i in range(6)]  # 61 + 47 = 108 bytes each: two per segment
    for b in batches:
        log.append(b)
    log.flush()
    names = sorted(p for p in os.listdir(tmp_path) if p.endswith(".log"))
    assert names == [f"{o:020d}.log" for o in (0, 2, 4)]
    assert all(len(b.data) == 108 for b in batches)
    assert (tmp_path / names[1]).read_bytes() == batches[2].data + batches[3].data
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n1\n1 0\n"
    log.close()


def test_delete_before_keeps_every_segment_holding_an_offset_at_or_above_it(tmp_path):
    log = open_log(tmp_path, 250)
    for i in range(6):  # segments [0, 2), [2, 4), [4, 6) as above
        log.append(R.data_batch([b"v" * 40], i, 1))

    def segments():
        return sorted(int(p[:20]) for p in os.listdir(tmp_path) if p.endswith(".log"))

    (tmp_path / f"{0:020d}.index").write_bytes(bytes(8))  # as Kafka leaves them
    (tmp_path / f"{0:020d}.timeindex").write_bytes(bytes(12))
    log.delete_before(3)
    assert segments() == [2, 4] and log.start_offset == 3
    assert not any(p.endswith("index") for p in os.listdir(tmp_path))
    assert [b.base_offset for b in log.read(0, 1 << 20)] == [3, 4, 5]  # 2 is still on disk, never read
    log.delete_before(4)
    assert segments() == [4]
    log.delete_before(6)
    assert segments() == [4] and (log.start_offset, log.end_offset) == (6, 6)  # the active segment stays
    log.append(R.data_batch([b"w"], 6, 2))  # 216 + 69 bytes > 250: a new segment
    assert segments() == [4, 6]
    log.delete_before(7)
    assert segments() == [6]
    log.close()
