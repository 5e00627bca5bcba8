"""RecordBatch.raft_values: the fast path reads raft-shaped batches of any size without the general parser."""
from __future__ import annotations

import pytest

from kraftsman.storage.records.batch import RecordBatch, build_batch


@pytest.mark.parametrize("count", [1, 64, 8192, 10_000, 20_000])
def test_raft_values_fast_path_reads_every_offset_delta_width(count, monkeypatch):
    """Offset deltas of 8192 and more take three varint bytes; the fast path reads them itself."""
    raw = build_batch([(None, b"v%d" % i) for i in range(count)], 500)
    batch = RecordBatch(raw)
    expected = [(r.offset, r.value) for r in batch.records()]
    monkeypatch.setattr(RecordBatch, "records", lambda self: pytest.fail("fell back to the general parser"))
    assert list(batch.raft_values()) == expected
    assert expected[-1] == (500 + count - 1, b"v%d" % (count - 1))


def test_raft_values_falls_back_for_other_shapes():
    """A record with a key is not raft-shaped: the general parser yields it and the ones after it."""
    raw = build_batch([(None, b"a"), (b"k", b"b"), (None, b"c")], 0)
    assert list(RecordBatch(raw).raft_values()) == [(0, b"a"), (1, b"b"), (2, b"c")]


def _spans(raw: bytes):
    batch = RecordBatch(raw)
    return [(offset, batch.buffer[start:end]) for offset, start, end in batch.raft_value_spans()]


@pytest.mark.parametrize("count", [1, 64, 200, 8192])
def test_raft_value_spans_point_at_every_value_of_a_raft_batch(count):
    raw = build_batch([(None, b"v%d" % i) for i in range(count)], 7)
    assert _spans(raw) == [(r.offset, r.value) for r in RecordBatch(raw).records()]


def test_raft_value_spans_stop_at_the_first_other_shape():
    """A keyed record, a null value or bytes after the last record end the spans; a compressed batch has none."""
    assert _spans(build_batch([(None, b"a"), (b"k", b"b"), (None, b"c")], 0)) == [(0, b"a")]
    assert _spans(build_batch([(None, b"a"), (None, None)], 0)) == [(0, b"a")]
    assert _spans(build_batch([(None, b"a"), (None, b"b")], 0) + b"\x00") == [(0, b"a")]
    assert _spans(build_batch([(None, b"a")], 0, compression=1)) == []
