"""Fuzz the record batch reader, the compression paths and the segment readers (strict, lenient, dump).

Oracle: RecordBatch header parsing, records() and raft_values() return or raise CorruptRecordError;
raft_values() (the fast path) agrees with records() whenever records() succeeds; decompress raises
only CompressionError; BatchReader strict raises only CorruptRecordError and lenient never raises;
huge declared lengths and counts allocate next to nothing.
"""
from __future__ import annotations

import struct

import pytest
from fuzzkit import (
    SMALL_ALLOCATION,
    check,
    corpus,
    fuzz_inputs,
    fuzz_settings,
    peak_bytes,
    real_files,
    regressions,
    single_mutations,
)
from hypothesis import given
from hypothesis import strategies as st

from kraftsman.storage.log.index import DumpBatchReader, find_next_batch
from kraftsman.storage.log.segment import BatchReader
from kraftsman.storage.records.batch import CorruptRecordError, RecordBatch
from kraftsman.storage.records.compression import CompressionError, decompress

BATCH_SEEDS = corpus("batch") + corpus("compression")
SEGMENT_SEEDS = corpus("segment") + real_files("*.log", limit=12)


def parse_batch(data: bytes):
    """Parse one batch fully both ways; check the fast path against the general parser."""
    batch = RecordBatch(data, 100)
    batch.is_valid()
    _ = (batch.last_offset, batch.compression_name, batch.timestamp_type, batch.last_sequence,
         batch.delete_horizon_ms)   # every header property parses (raises on a bad batch)
    try:
        general = [(r.offset, r.value) for r in batch.records()]
    except CorruptRecordError:
        with pytest.raises(CorruptRecordError):
            list(batch.raft_values())
        return None
    assert list(batch.raft_values()) == general
    return general


def read_segment(path, data: bytes, **options):
    """Write `data` to `path` and read every batch and record with a BatchReader."""
    path.write_bytes(data)
    reader = BatchReader(path, **options)
    for batch in reader:
        check(parse_batch, batch.buffer, (CorruptRecordError,))
    assert 0 <= reader.valid_bytes <= reader.file_size
    return reader


def test_corpus_is_present():
    assert len(BATCH_SEEDS) >= 8 and corpus("segment")


@pytest.mark.parametrize("seed", range(len(BATCH_SEEDS)))
def test_single_byte_mutations_of_each_batch(seed):
    for data in single_mutations(BATCH_SEEDS[seed]):
        check(parse_batch, data, (CorruptRecordError,))


@fuzz_settings(300)
@given(fuzz_inputs(BATCH_SEEDS, max_size=120))
def test_record_batch_reader(data):
    check(parse_batch, data, (CorruptRecordError,))


@fuzz_settings(150)
@given(st.integers(0, 4), fuzz_inputs([b[61:] for b in corpus("compression")] + [b""], max_size=64))
def test_decompress_raises_only_compression_error(codec_id, payload):
    check(lambda d: decompress(codec_id, d), payload, (CompressionError,))


@fuzz_settings(150)
@given(data=fuzz_inputs(SEGMENT_SEEDS, max_size=300))
def test_segment_readers(tmp_path_factory, data):
    path = tmp_path_factory.getbasetemp() / "fuzz-00000000000000000000.log"
    check(lambda d: read_segment(path, d, strict=True), data, (CorruptRecordError,))
    lenient = check(lambda d: read_segment(path, d, strict=False), data, ())
    dump = DumpBatchReader(path)
    check(lambda d: [b.records_count for b in dump], data, ())
    assert lenient.valid_bytes <= len(data) and dump.valid_bytes <= len(data)
    found = check(lambda d: find_next_batch(path, 0), data, ())
    assert found is None or 0 <= found < len(data)


@pytest.mark.parametrize("name,data", [pytest.param(n, d, id=n) for n, d in regressions("batch")])
def test_batch_regressions(name, data):
    check(parse_batch, data, (CorruptRecordError,))


def _header(length: int = 49, count: int = 1, attributes: int = 0) -> bytes:
    return struct.pack(">qiibIhiqqqhii", 0, length, 0, 2, 0, attributes, 0, 0, 0, -1, -1, -1, count)


@pytest.mark.parametrize("tail", [b"", b"\xfe\xff\xff\xff\x0f", b"\x00" * 8, b"\x02\x00\x00\x00\xff\xff\xff\xff\x0f"])
def test_huge_record_counts_and_lengths_allocate_little(tail):
    data = _header(49 + len(tail), count=2 ** 31 - 1) + tail
    assert peak_bytes(lambda: check(parse_batch, data, (CorruptRecordError,))) < SMALL_ALLOCATION


def test_huge_batch_length_in_a_small_file_is_not_read(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    data = _header(2 ** 31 - 1) + b"\x00" * 64
    assert peak_bytes(lambda: check(lambda d: read_segment(path, d), data, (CorruptRecordError,))) < SMALL_ALLOCATION
    reader = read_segment(path, data, strict=False)
    assert (reader.valid_bytes, reader.trailing_bytes) == (0, len(data))


@pytest.mark.parametrize("codec_id,payload", [
    (2, b"\xff\xff\xff\xff\x0f\x00a"),  # raw snappy declaring 4 GiB uncompressed
    (2, b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, 2 ** 31 - 1) + b"x"),  # xerial block claiming 2 GiB
    (3, b"\x04\x22\x4d\x18\x68\x40" + struct.pack("<Q", 2 ** 40) + b"\x00"),  # lz4 frame content size 1 TiB
    (4, b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", 2 ** 40) + b"\x01\x00\x00"),  # zstd frame content size 1 TiB
])
def test_huge_declared_decompressed_sizes_are_refused(codec_id, payload):
    with pytest.raises(CompressionError):
        decompress(codec_id, payload)

