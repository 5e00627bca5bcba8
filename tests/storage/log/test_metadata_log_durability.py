"""FileLog's durability contract: what is fsynced when, and how snapshot files are written."""
from __future__ import annotations

import os

import pytest

from kraftsman.controller.raft import records as R
from kraftsman.storage.log.atomic import FileSystem
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.records.raft_values import Snapshot


class Recording(FileSystem):
    """The real file system, with a journal of directory fsyncs and temp files opened."""

    def __init__(self):
        self.events: list[tuple[str, str]] = []

    def open_write(self, path):
        self.events.append(("open", path.name))
        return super().open_write(path)

    def rename(self, src, dst):
        self.events.append(("rename", f"{src.name} -> {dst.name}"))
        super().rename(src, dst)

    def fsync_dir(self, directory):
        self.events.append(("fsync_dir", directory.name))
        super().fsync_dir(directory)


@pytest.fixture
def fsyncs(monkeypatch):
    """Record the file names behind every os.fsync."""
    names: list[str] = []
    real = os.fsync

    def spy(fd):
        names.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to name file descriptors")
    monkeypatch.setattr(os, "fsync", spy)
    return names


def test_append_is_not_fsynced_until_flush_and_flush_costs_one_fsync(tmp_path, fsyncs):
    fs = Recording()
    log = FileLog.open(tmp_path, fs=fs, segment_bytes=1 << 20)
    log.append(R.data_batch([b"a"], 0, 1))
    assert fsyncs == [] and fs.events == []
    log.flush()  # first flush: the new segment, its directory entry, the epoch checkpoint
    assert fsyncs[0] == "00000000000000000000.log" and ("fsync_dir", tmp_path.name) in fs.events
    assert ("rename", "leader-epoch-checkpoint.tmp -> leader-epoch-checkpoint") in fs.events
    fsyncs.clear()
    fs.events.clear()
    log.append(R.data_batch([b"b"], 1, 1))
    log.flush()  # same segment, same epoch: one fsync and nothing else
    assert (fsyncs, fs.events) == (["00000000000000000000.log"], [])
    fsyncs.clear()
    log.flush()
    assert (fsyncs, fs.events) == ([], [])
    log.close()


def test_a_roll_fsyncs_both_segments_and_the_directory(tmp_path, fsyncs):
    fs = Recording()
    log = FileLog.open(tmp_path, fs=fs, segment_bytes=100)
    log.append(R.data_batch([b"a" * 30], 0, 1))
    log.flush()
    fsyncs.clear()
    fs.events.clear()
    log.append(R.data_batch([b"b" * 30], 1, 1))  # 98 + 98 bytes > 100: a new segment
    log.append(R.data_batch([b"c" * 30], 2, 1))
    log.flush()
    assert sorted(n for n in fsyncs if n.endswith(".log")) == ["00000000000000000001.log", "00000000000000000002.log"]
    assert fs.events == [("fsync_dir", tmp_path.name)]
    log.close()


def test_truncation_is_durable_when_it_returns(tmp_path, fsyncs):
    log = FileLog.open(tmp_path, segment_bytes=1 << 20)
    for i in range(3):
        log.append(R.data_batch([b"x"], i, 1))
    log.flush()
    log.append(R.data_batch([b"x"], 3, 1))
    fsyncs.clear()
    assert log.truncate_to(1) == 1
    assert fsyncs == ["00000000000000000000.log"]
    assert (tmp_path / "00000000000000000000.log").stat().st_size == len(R.data_batch([b"x"], 0, 1).data)
    log.close()


def test_snapshots_are_written_through_a_part_file_then_renamed(tmp_path):
    fs = Recording()
    log = FileLog.open(tmp_path, fs=fs)
    log.append(R.data_batch([b"x"], 0, 3))
    log.store_snapshot(Snapshot.of(1, 3, b"snap"))
    name = "00000000000000000001-0000000003.checkpoint"
    assert fs.events == [("open", name + ".part"), ("rename", f"{name}.part -> {name}"), ("fsync_dir", tmp_path.name)]
    assert (tmp_path / name).read_bytes() == b"snap"
    log.close()


def test_a_prepared_snapshot_is_written_and_fsynced_first_and_store_only_renames_it(tmp_path, fsyncs):
    fs = Recording()
    log = FileLog.open(tmp_path, fs=fs)
    log.append(R.data_batch([b"x"], 0, 3))
    name = "00000000000000000001-0000000003.checkpoint"
    log.prepare_snapshot(Snapshot.of(1, 3, b"snap"))  # what a background thread runs
    assert fs.events == [("open", name + ".prepared.tmp")] and fsyncs == [name + ".prepared.tmp"]
    assert log.latest_snapshot() is None
    fs.events.clear()
    fsyncs.clear()
    log.store_snapshot(Snapshot.of(1, 3, b"snap"))
    assert fs.events == [("rename", f"{name}.prepared.tmp -> {name}"), ("fsync_dir", tmp_path.name)]
    assert (tmp_path / name).read_bytes() == b"snap" and log.latest_snapshot().data == b"snap"
    assert not (tmp_path / (name + ".prepared.tmp")).exists()
    log.close()


def test_a_discarded_prepared_snapshot_leaves_no_file_and_a_crashed_one_is_deleted_on_open(tmp_path):
    log = FileLog.open(tmp_path)
    log.append(R.data_batch([b"x"], 0, 3))
    log.prepare_snapshot(Snapshot.of(1, 3, b"snap"))
    log.discard_prepared_snapshot(Snapshot.of(1, 3, b"").snapshot_id)
    assert sorted(os.listdir(tmp_path)) == ["00000000000000000000.log"]
    log.prepare_snapshot(Snapshot.of(1, 3, b"snap"))  # then the process dies before storing it
    log.flush()
    log.close()
    reopened = FileLog.open(tmp_path)
    assert reopened.latest_snapshot() is None
    assert not any(n.endswith(".prepared.tmp") for n in os.listdir(tmp_path))
    reopened.close()


def test_a_failed_snapshot_write_changes_nothing(tmp_path):
    class Full(FileSystem):
        def write(self, handle, data):
            raise OSError(28, "No space left on device")

    log = FileLog.open(tmp_path, fs=Full())
    log.append(R.data_batch([b"x"], 0, 1))
    with pytest.raises(OSError):
        log.store_snapshot(Snapshot.of(1, 1, b"snap"))
    assert log.latest_snapshot() is None and sorted(os.listdir(tmp_path)) == ["00000000000000000000.log"]
    log.close()
