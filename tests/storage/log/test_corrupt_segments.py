"""Corrupt copies of a segment give one typed error carrying the file and the byte position."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from kraftsman.storage.log.segment import BatchReader, read_batches
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.batch import CorruptRecordError, build_batch
from kraftsman.storage.records.metadata import (
    ApiMessageAndVersion,
    MetadataParseError,
    read_metadata_record,
    write_metadata_record,
)

REAL = (Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kraft-real" / "data"
        / "kafka-raft" / "data" / "kafka1" / "__cluster_metadata-0" / "00000000000000000000.log")


def _topic_batch(base_offset: int, name: str) -> bytes:
    topic = codec.message_class("TopicRecord")(name=name, topic_id=Uuid(bytes(range(16))))
    parts = [codec.message_class("PartitionRecord")(partition_id=i, topic_id=topic.topic_id, replicas=[1, 2, 3],
                                                     isr=[1, 2], leader=1) for i in range(3)]
    values = [write_metadata_record(ApiMessageAndVersion(topic, 0))]
    values += [write_metadata_record(ApiMessageAndVersion(p, 0)) for p in parts]
    return build_batch([(None, v) for v in values], base_offset, timestamp=1_700_000_000_000,
                       partition_leader_epoch=3)


@pytest.fixture
def segment(tmp_path) -> tuple[Path, list[int]]:
    """Write a 5-batch segment and return it with each batch's start position."""
    data, positions = b"", []
    for i in range(5):
        positions.append(len(data))
        data += _topic_batch(i * 4, f"topic-{i}")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return path, positions


def _decode_all(path) -> int:
    count = 0
    for batch in read_batches(path):
        for record in batch.records():
            if not batch.is_control:
                read_metadata_record(record.value)
            count += 1
    return count


def test_clean_segment_decodes(segment):
    path, _ = segment
    assert _decode_all(path) == 20


def test_flipped_byte_reports_crc_at_batch_position(segment):
    path, positions = segment
    data = bytearray(path.read_bytes())
    data[positions[2] + 70] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError) as info:
        _decode_all(path)
    assert info.value.position == positions[2]
    assert info.value.path == str(path)
    assert "Record is corrupt" in str(info.value) and "\n" not in str(info.value)


def test_truncation_mid_batch_reports_that_batch(segment):
    path, positions = segment
    path.write_bytes(path.read_bytes()[: positions[3] + 30])
    with pytest.raises(CorruptRecordError) as info:
        _decode_all(path)
    assert info.value.position == positions[3]
    assert "truncated" in info.value.message


def test_huge_batch_length_reports_its_position(segment):
    path, positions = segment
    data = bytearray(path.read_bytes())
    data[positions[1] + 8: positions[1] + 12] = (0x7FFFFFF0).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError) as info:
        _decode_all(path)
    assert info.value.position == positions[1]


def test_zero_filled_tail_reports_where_zeros_start(segment):
    path, _ = segment
    clean = path.read_bytes()
    path.write_bytes(clean + b"\0" * 4096)
    with pytest.raises(CorruptRecordError) as info:
        _decode_all(path)
    assert info.value.position == len(clean)
    assert "smaller than minimum record overhead" in info.value.message


def test_lenient_reader_keeps_good_batches_and_counts_trailing_bytes(segment):
    path, positions = segment
    clean = path.read_bytes()
    path.write_bytes(clean[: positions[4] + 10])
    reader = BatchReader(path, strict=False)
    assert [b.position for b in reader] == positions[:4]
    assert reader.trailing_bytes == 10


def test_random_single_byte_corruption_only_raises_typed_errors(segment):
    path, _ = segment
    clean = path.read_bytes()
    rng = random.Random(1234)
    for _ in range(300):
        data = bytearray(clean)
        data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            _decode_all(path)
        except (CorruptRecordError, MetadataParseError):
            pass


def test_real_segment_corruptions(tmp_path, kraft_real):
    if not REAL.is_file():
        pytest.skip(f"{REAL} not present")
    clean = REAL.read_bytes()
    positions = [b.position for b in read_batches(REAL)]
    target = positions[len(positions) // 2]
    cases = {
        "flip": clean[: target + 40] + bytes([clean[target + 40] ^ 1]) + clean[target + 41:],
        "truncate": clean[: target + 20],
        "zero-tail": clean[:target] + b"\0" * 100,
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.log"
        path.write_bytes(data)
        with pytest.raises(CorruptRecordError) as info:
            _decode_all(path)
        assert info.value.position == target, name
