"""FileLog.read serves the batches appended last from memory (no pread), and the files give the same answer.

A follower commits the batch before the one it just appended, and a leader answers a follower one batch behind:
both read the batch before the newest, which once cost a pread on the commit path.
"""
from __future__ import annotations

import pytest

from kraftsman.controller.raft import records as R
from kraftsman.storage.log import metadata_log
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.log.segment_files import Segment


@pytest.fixture
def preads(monkeypatch):
    """Count the segment reads (os.pread) FileLog does."""
    calls = []
    real = Segment.read

    def counted(self, position, size):
        calls.append((position, size))
        return real(self, position, size)
    monkeypatch.setattr(Segment, "read", counted)
    return calls


def append(log, count: int, size: int = 20, epoch: int = 1) -> None:
    for _ in range(count):
        log.append(R.data_batch([bytes([log.end_offset % 251]) * size], log.end_offset, epoch))


def as_tuples(batches):
    return [(b.base_offset, b.epoch, b.data) for b in batches]


def read_from_files(path, offset: int, max_bytes: int):
    with FileLog.open(path) as fresh:
        return as_tuples(fresh.read(offset, max_bytes))


def test_the_batches_appended_last_are_read_without_a_pread(tmp_path, preads):
    path = tmp_path / "__cluster_metadata-0"
    log = FileLog.open(path)
    append(log, 12)
    log.flush()
    for offset, max_bytes in [(11, 1 << 20), (10, 1 << 20), (10, 0), (9, 100), (4, 1 << 20)]:
        got = as_tuples(log.read(offset, max_bytes))
        assert not preads, (offset, max_bytes)
        assert got == read_from_files(path, offset, max_bytes), (offset, max_bytes)
        preads.clear()
    log.close()


def test_older_batches_and_reads_past_the_end_still_come_from_the_files(tmp_path, preads):
    path = tmp_path / "__cluster_metadata-0"
    log = FileLog.open(path)
    append(log, 12)
    log.flush()
    for offset in (0, 3, 12, 13):
        got = as_tuples(log.read(offset, 1 << 20))
        assert preads, offset
        assert got == read_from_files(path, offset, 1 << 20), offset
        preads.clear()
    log.close()


def test_the_bytes_kept_are_bounded_but_the_newest_batch_always_stays(tmp_path, preads, monkeypatch):
    monkeypatch.setattr(metadata_log, "RECENT_BYTES", 300)
    log = FileLog.open(tmp_path / "__cluster_metadata-0")
    append(log, 4, size=200)
    assert as_tuples(log.read(3, 1 << 20)) and not preads
    assert log.read(2, 1 << 20) and preads
    log.close()


@pytest.mark.parametrize("cut", ["truncate_to", "delete_before"])
def test_a_cut_log_reads_what_it_holds_then_remembers_new_appends(tmp_path, preads, cut):
    path = tmp_path / "__cluster_metadata-0"
    log = FileLog.open(path)
    append(log, 10)
    getattr(log, cut)(8 if cut == "truncate_to" else 4)
    append(log, 3, size=33, epoch=2)  # truncate_to: offsets 8-10 again, with other bytes
    log.flush()
    preads.clear()
    newest = as_tuples(log.read(log.end_offset - 1, 1 << 20))
    assert not preads
    assert newest == read_from_files(path, log.end_offset - 1, 1 << 20)
    assert as_tuples(log.read(6, 1 << 20)) == read_from_files(path, 6, 1 << 20)
    log.close()
