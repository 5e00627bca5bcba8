"""metadata_files: which files a directory load reads, and PinnedFile's reads of a batch by position."""
from __future__ import annotations

import pytest

from kraftsman.storage.log.metadata_files import (
    MetadataFilesError,
    PinnedFile,
    PinnedFileError,
    bootstrap_only,
    partition_directory,
    pin,
    plan_directory,
)
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.snapshot_id import SnapshotId


def _touch(folder, *names):
    for name in names:
        (folder / name).write_bytes(b"")


def test_a_plan_takes_the_newest_snapshot_and_the_segments_after_it(tmp_path):
    _touch(tmp_path, f"{0:020d}.log", f"{500:020d}.log", f"{900:020d}.log",
           f"{400:020d}-{2:010d}.checkpoint", f"{800:020d}-{3:010d}.checkpoint")
    plan = plan_directory(tmp_path, None)
    assert plan.snapshot == SnapshotId(800, 3) and plan.start == 800
    assert [p.name for p in plan.segments] == [f"{500:020d}.log", f"{900:020d}.log"]
    assert plan.files[0].name == f"{800:020d}-{3:010d}.checkpoint"
    older = plan_directory(tmp_path, 450)
    assert older.snapshot == SnapshotId(400, 2) and [p.name for p in older.segments][0] == f"{0:020d}.log"


def test_a_log_that_does_not_start_at_zero_needs_a_snapshot(tmp_path):
    _touch(tmp_path, f"{500:020d}.log")
    with pytest.raises(MetadataFilesError, match="the log starts at offset 500"):
        plan_directory(tmp_path, None)


def test_partition_directory_and_bootstrap(tmp_path):
    pdir = tmp_path / "__cluster_metadata-0"
    pdir.mkdir()
    assert partition_directory(tmp_path) == pdir and partition_directory(pdir) == pdir
    with pytest.raises(MetadataFilesError, match="No such file or directory"):
        partition_directory(tmp_path / "absent")
    _touch(tmp_path, "bootstrap.checkpoint")
    assert bootstrap_only(tmp_path, pdir) == tmp_path / "bootstrap.checkpoint"
    _touch(pdir, f"{0:020d}.log")
    assert bootstrap_only(tmp_path, pdir) is None


def test_a_pinned_file_reads_a_batch_by_position_even_after_it_is_deleted(tmp_path):
    first, second = build_batch([(None, b"a")], 0), build_batch([(None, b"bc")], 1)
    path = tmp_path / f"{0:020d}.log"
    path.write_bytes(first + second)
    pinned = PinnedFile(path)
    path.unlink()
    batch = pinned.read_batch(len(first))
    assert batch.base_offset == 1 and batch.buffer == second and batch.position == len(first)
    assert pinned.read_batch(len(first) + len(second)) is None       # nothing there
    assert pinned.read_batch(len(first) + 1) is None                 # not a whole batch
    pinned.close()
    with pytest.raises(PinnedFileError, match="cannot read the batch at position 0 again"):
        pinned.read_batch(0)


def test_a_missing_file_cannot_be_pinned(tmp_path):
    with pytest.raises(PinnedFileError, match="cannot open it"):
        PinnedFile(tmp_path / "absent.log")


def test_loads_alive_at_once_share_one_pin_per_file(tmp_path):
    path = tmp_path / f"{0:020d}.log"
    path.write_bytes(build_batch([(None, b"a")], 0))
    first = pin(path)
    assert pin(path) is first
    first.close()
    assert pin(path) is not first
