"""Record batches in every compression codec: build, read back, CRC valid, attributes and fields kept."""
from __future__ import annotations

import pytest

from kraftsman.storage.records import compression
from kraftsman.storage.records.batch import RecordBatch, build_batch, rebuild_batch

RECORDS = [(b"key-%d" % i, b"value-%d" % i * (i + 1), (("h", b"v"),) if i % 2 else (), 1_000 + i)
           for i in range(50)]


@pytest.mark.parametrize("codec", sorted(compression.NAMES))
def test_build_and_read_back(codec):
    raw = build_batch(RECORDS, 100, timestamp=1_000, partition_leader_epoch=7, compression=codec,
                      producer_id=42, producer_epoch=3, base_sequence=10)
    batch = RecordBatch(raw)
    assert batch.is_valid() and batch.compression == codec
    assert batch.compression_name == compression.NAMES[codec]
    assert (batch.base_offset, batch.last_offset, batch.records_count) == (100, 149, 50)
    assert batch.max_timestamp == 1_049 and batch.last_sequence == 59
    got = list(batch.records())
    assert [(r.key, r.value, r.headers, r.timestamp) for r in got] == [
        (k, v, h, t) for k, v, h, t in RECORDS]
    assert [r.offset for r in got] == list(range(100, 150))
    assert [r.sequence for r in got] == list(range(10, 60))


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_recompressing_uncompressed_batch_keeps_records(codec):
    plain = RecordBatch(build_batch(RECORDS, 0, timestamp=5))
    again = RecordBatch(rebuild_batch(plain, list(plain.records()), compression=codec))
    assert [r.value for r in again.records()] == [r.value for r in plain.records()]
    assert again.compression == codec and again.is_valid()


def test_control_and_transactional_flags():
    batch = RecordBatch(build_batch([(b"\0\0\0\2", b"x")], 5, control=True, transactional=True,
                                    log_append_time=True))
    assert batch.is_control and batch.is_transactional and batch.timestamp_type == "LogAppendTime"


def test_snappy_reads_unframed_blocks_too():
    import cramjam

    data = b"abc" * 1000
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert compression.decompress(2, raw) == data


def test_corrupt_compressed_stream_is_a_typed_error():
    raw = bytearray(build_batch(RECORDS, 0, compression=4))
    raw[70:80] = b"\xff" * 10
    from kraftsman.storage.records.batch import CorruptRecordError

    with pytest.raises(CorruptRecordError):
        list(RecordBatch(bytes(raw)).records())
