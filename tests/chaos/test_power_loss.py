"""Power-loss simulation of the metadata log directory: segment appends and rolls, foreground and background
flushes, truncation, snapshot writes and installs, log-start moves and quorum-state writes, with a crash taken
before every fsync and after every operation, keeping only what was fsynced (PowerLossDisk).

After each crash the directory must open (FileLog.open recovers it) and hold:
- every batch that a returned flush made durable (at or above the recovered log start), byte for byte;
- no batch that was never appended at its offset, nor one a returned truncation removed;
- a newest snapshot at least as new as the last returned store_snapshot/install_snapshot, with its bytes;
- the quorum-state of the last returned write, or of the write in progress.
"""
from __future__ import annotations

import bisect
import os
import random
import shutil

import pytest

from kraftsman.controller.raft import records as R
from kraftsman.storage.errors import StorageError
from kraftsman.storage.log import quorum_state as qs
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.records.raft_values import Batch, Snapshot

from .power_loss import PowerLossDisk

SEGMENT_BYTES = 400


class Model:
    """What the test did to the log and what must survive a crash."""

    def __init__(self):
        self.batches: dict[int, bytes] = {}       # the live log: base offset -> bytes
        self.durable: dict[int, bytes] = {}       # batches a returned flush made durable
        self.allowed: dict[int, set] = {}         # offset -> versions that may be found there after a crash
        self.snapshots: dict[tuple, bytes] = {}   # every snapshot ever stored
        self.min_snapshot = None                  # the last returned snapshot write: recovery keeps it or newer
        self.qs_done = None
        self.qs_pending = None
        self.truncating_from = None               # during truncate_to: batches from here on may be gone


class Runner:
    def __init__(self, tmp_path, monkeypatch, seed: int, torn):
        self.rng = random.Random(seed)
        self.torn = torn  # False: only fsynced bytes survive; True: plus random torn tails; or choose(lo, hi)
        self.dir = tmp_path / "__cluster_metadata-0"
        self.dir.mkdir()
        self.crash_root = tmp_path / "crashes"
        self.disk = PowerLossDisk(self.dir)
        monkeypatch.setattr(os, "fsync", self.disk.fsync)
        self.log = FileLog.open(self.dir, segment_bytes=SEGMENT_BYTES)
        self.m = Model()
        self.crashes = 0
        self.epoch = 1
        self.disk.on_fsync = self.crash_and_check

    # ------------------------------------------------------------ operations
    def append(self) -> None:
        if self.rng.random() < 0.1:
            self.epoch += 1
        base = self.log.end_offset
        values = [self.rng.randbytes(self.rng.randint(5, 90)) for _ in range(self.rng.randint(1, 3))]
        batch = R.data_batch(values, base, self.epoch)
        self.log.append(batch)
        self.m.batches[base] = batch.data
        self.m.allowed.setdefault(base, set()).add(batch.data)

    def flush(self) -> None:
        self.log.flush()
        self.m.durable = dict(self.m.batches)

    def background_flush(self) -> None:
        before = dict(self.m.batches)
        job = self.log.begin_flush()
        if self.rng.random() < 0.5:
            self.append()  # appends go on while the job runs
        self.crash_and_check()
        job()
        self.log.end_flush(job)
        self.m.durable = before

    def truncate(self) -> None:
        if not self.m.batches:
            return
        offset = self.rng.randint(self.log.start_offset, self.log.end_offset)
        bases = sorted(self.m.batches)
        i = max(bisect.bisect_right(bases, offset) - 1, 0)  # FileLog's rule: the batch holding offset goes
        self.m.truncating_from = bases[i] if i else self.log.start_offset
        end = self.log.truncate_to(offset)
        self.m.truncating_from = None
        for base in [b for b in self.m.batches if b >= end]:
            del self.m.batches[base]
            self.m.allowed[base] = set()
        self.m.durable = {b: v for b, v in self.m.durable.items() if b < end}

    def snapshot(self) -> None:
        if not self.m.batches:
            return
        end = Batch(self.m.batches[self.rng.choice(sorted(self.m.batches))]).next_offset  # a batch boundary
        sid = (end, self.log.epoch_at(end - 1))
        data = self.rng.randbytes(50)
        self.m.snapshots[sid] = data
        self.log.store_snapshot(Snapshot.of(*sid, data))
        self.m.min_snapshot = max(self.m.min_snapshot or sid, sid)
        self.log.delete_before(end)
        self.m.batches = {b: v for b, v in self.m.batches.items() if b >= end}

    def install(self) -> None:
        self.epoch += 1
        sid = (self.log.end_offset + self.rng.randint(1, 20), self.epoch)
        data = self.rng.randbytes(50)
        self.m.snapshots[sid] = data
        self.log.install_snapshot(Snapshot.of(*sid, data))
        self.m.min_snapshot = sid
        self.m.batches, self.m.durable = {}, {}

    def quorum_state(self) -> None:
        state = qs.QuorumState(leader_id=self.rng.choice((-1, 1, 2)), leader_epoch=self.epoch,
                               voted_id=self.rng.choice((-1, 1, 2, 3)), data_version=1)
        self.m.qs_pending = state
        qs.write(self.dir, state)
        self.m.qs_done, self.m.qs_pending = state, None

    # ------------------------------------------------------------ the crash
    def crash_and_check(self) -> None:
        self.disk.on_fsync = None
        try:
            self.crashes += 1
            target = self.crash_root / f"crash-{self.crashes}"
            if callable(self.torn):
                self.disk.crash_image(target, choose=self.torn)
            else:
                self.disk.crash_image(target, self.rng if self.torn else None)
            try:
                self.check(target)
            finally:
                shutil.rmtree(target, ignore_errors=True)
        finally:
            self.disk.on_fsync = self.crash_and_check

    def check(self, target) -> None:
        m = self.m
        try:
            log = FileLog.open(target, segment_bytes=SEGMENT_BYTES)
        except StorageError as e:
            raise AssertionError(f"crash {self.crashes}: the directory does not open after a power loss: {e}; "
                                 f"files {sorted(os.listdir(target))}") from None
        try:
            found = {b.base_offset: b.data for b in log.read(log.start_offset, 1 << 30)}
            latest = log.latest_snapshot()
        finally:
            log.close()
        sid = tuple(latest.snapshot_id) if latest is not None else None
        where = f"crash {self.crashes} (log {log.start_offset}..{log.end_offset}, snapshot {sid})"
        for base, data in found.items():
            assert data in m.allowed.get(base, ()), f"{where}: a batch at {base} that is not in the log"
        for base, data in m.durable.items():
            if base >= log.start_offset and (m.truncating_from is None or base < m.truncating_from):
                assert found.get(base) == data, f"{where}: flushed batch at {base} lost"
        if m.min_snapshot is not None:
            assert sid is not None and sid >= m.min_snapshot, \
                f"{where}: snapshot {m.min_snapshot} lost"
        if sid is not None:
            assert m.snapshots[sid] == latest.data, f"{where}: snapshot bytes"
        state = qs.read(target)
        if m.qs_done is not None or m.qs_pending is not None:
            assert state in (m.qs_done, m.qs_pending), f"{where}: quorum-state {state}"

    def run(self, steps: int, *, truncate: bool = True, background_flush: bool = True) -> None:
        ops = [(self.append, 40), (self.flush, 12), (self.background_flush, 12 if background_flush else 0),
               (self.truncate, 4 if truncate else 0), (self.snapshot, 4), (self.install, 1), (self.quorum_state, 5)]
        funcs, weights = zip(*ops)
        for _ in range(steps):
            self.rng.choices(funcs, weights)[0]()
            self.crash_and_check()
        self.log.close()
        self.disk.close()


MODES = pytest.mark.parametrize("torn", [False, True], ids=["fsynced-only", "fsynced-plus-torn-tails"])
# Found by these tests and fixed in storage/log: S1, FileLog.truncate_to shrank the cut segment before the
# unlinks of the later segments were durable (a power loss in between left stale segments after a short one);
# S2, a roll created the next segment while the previous one still had an unflushed tail, which a directory
# fsync (begin_flush, snapshot or quorum-state writes) could make durable first, so a power loss left a torn
# segment before the last one and recovery refused the directory; S3, a log reopened after an unclean stop was read,
# rolled past and acknowledged with the earlier process's unsynced tail still in the page cache only, so a later
# power loss left a segment ending short of the next one (seen in a loaded chaos run: a failed fsync stopped a
# voter, and after the next power loss it could not start again).


def _skip_without_proc():
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to name file descriptors")


@MODES
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_power_loss_at_every_fsync_keeps_what_was_promised(tmp_path, monkeypatch, seed, torn):
    """Appends and rolls, flush() and background flushes, truncations, snapshots of flushed and unflushed logs
    with their log-start moves, snapshot installs and quorum-state writes: a crash before any fsync, or between
    operations, loses nothing that was promised and the directory always opens."""
    _skip_without_proc()
    runner = Runner(tmp_path, monkeypatch, seed, torn)
    runner.run(100)
    assert runner.crashes > 100


def _big_batch(base: int, epoch: int):
    return R.data_batch([bytes([base % 256]) * 300], base, epoch)  # one batch per 400-byte segment


def test_power_loss_during_a_truncation_to_the_snapshot_keeps_the_snapshot(tmp_path, monkeypatch):
    _skip_without_proc()
    runner = Runner(tmp_path, monkeypatch, 0, False)
    runner.disk.on_fsync = None
    log = runner.log
    log.install_snapshot(Snapshot.of(10, 1, b"state up to offset 10"))
    for base in (10, 11, 12):
        log.append(_big_batch(base, 1))
        runner.m.allowed[base] = {_big_batch(base, 1).data}
    log.flush()
    assert [s.base_offset for s in log.segments] == [10, 11, 12]
    runner.m.snapshots[(10, 1)] = b"state up to offset 10"
    runner.m.min_snapshot = (10, 1)
    runner.m.truncating_from = 10
    runner.disk.on_fsync = runner.crash_and_check  # a crash before each fsync of the truncation
    log.truncate_to(10)  # a follower truncating its whole log after the snapshot (a diverging leader)


def test_power_loss_during_a_background_flush_after_a_roll_reopens(tmp_path, monkeypatch):
    _skip_without_proc()
    runner = Runner(tmp_path, monkeypatch, 0, lambda lo, hi: (lo + hi) // 2)  # half the unsynced bytes
    runner.disk.on_fsync = None
    log = runner.log
    log.append(R.data_batch([b"a" * 100], 0, 1))
    log.flush()
    runner.m.durable = {0: R.data_batch([b"a" * 100], 0, 1).data}
    runner.m.allowed = {0: {runner.m.durable[0]}}
    for base in (1, 2):  # 1 joins segment 0 unflushed, 2 rolls segment 2
        batch = R.data_batch([bytes([base]) * 150], base, 1)
        log.append(batch)
        runner.m.allowed[base] = {batch.data}
    assert [s.base_offset for s in log.segments] == [0, 2]
    runner.disk.on_fsync = runner.crash_and_check
    job = log.begin_flush()  # the leader's path: directory fsync now, segment fsyncs in a thread later
    job()
    log.end_flush(job)


def test_a_log_reopened_after_an_unclean_stop_is_durable_before_it_is_used(tmp_path, monkeypatch):
    """A process stops with a batch written and never synced (its fsync failed, or it was killed); the next one
    reads it from the page cache, rolls past it and syncs only its own appends. A power cut after that must
    find every batch the second process had, without a gap between segments."""
    _skip_without_proc()
    runner = Runner(tmp_path, monkeypatch, 0, False)
    runner.disk.on_fsync = None
    log = runner.log
    batches = [R.data_batch([bytes([base]) * (100 if base == 0 else 150)], base, 1) for base in range(3)]
    log.append(batches[0])
    log.flush()
    log.append(batches[1])           # joins segment 0, never synced by this process
    log.close()                      # the unclean stop: no flush
    reopened = FileLog.open(runner.dir, segment_bytes=SEGMENT_BYTES)
    assert reopened.end_offset == 2  # the unsynced batch is read back (the page cache kept it)
    reopened.append(batches[2])      # rolls segment 2
    reopened.flush()
    assert [s.base_offset for s in reopened.segments] == [0, 2]
    runner.m.durable = runner.m.batches = {b.base_offset: b.data for b in batches}
    runner.m.allowed = {b.base_offset: {b.data} for b in batches}
    runner.crash_and_check()         # the power cut: the directory opens and holds all three batches
    reopened.close()
