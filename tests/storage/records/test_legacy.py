"""Legacy (magic v0/v1) entries: layout, CRC-32, deep iteration and Kafka's DeepRecordsIterator errors."""
from __future__ import annotations

import binascii
import gzip
import struct

import pytest

from kraftsman.storage.records.batch import CorruptRecordError
from kraftsman.storage.records.legacy import LegacyBatch, build_entry, parse_entry


def test_build_entry_v1_layout_by_hand():
    raw = build_entry(7, 1, None, b"ab", attributes=0x08, timestamp=258)
    body = bytes.fromhex("01" "08" "0000000000000102" "ffffffff" "00000002") + b"ab"
    assert raw == struct.pack(">qiI", 7, 4 + len(body), binascii.crc32(body)) + body


def test_batch_fields_v0_and_v1():
    v0 = LegacyBatch(build_entry(3, 0, b"k", b"v"), 100)
    assert (v0.last_offset, v0.magic, v0.timestamp_type, v0.max_timestamp, v0.position) == \
        (3, 0, "NoTimestampType", -1, 100)
    assert v0.size_in_bytes == 12 + 4 + 2 + 5 + 5 and v0.is_valid()
    v1 = LegacyBatch(build_entry(4, 1, None, b"v", attributes=0x08, timestamp=9), 0)
    assert (v1.timestamp_type, v1.max_timestamp) == ("LogAppendTime", 9)
    [record] = v1.records()
    assert (record.offset, record.timestamp, record.key, record.value, record.key_size, record.value_size) == \
        (4, 9, None, b"v", -1, 1)


def test_crc_mismatch_is_invalid():
    raw = bytearray(build_entry(0, 0, None, b"v"))
    raw[-1] ^= 0xFF
    batch = LegacyBatch(bytes(raw), 0)
    assert not batch.is_valid() and not next(batch.records()).valid


def test_deep_v1_relative_offsets_and_zero_wrapper_offset():
    inner = build_entry(0, 1, None, b"a", timestamp=1) + build_entry(1, 1, None, b"b", timestamp=2)
    wrapped = LegacyBatch(build_entry(20, 1, None, gzip.compress(inner, mtime=0), attributes=1, timestamp=5), 0)
    assert [(r.offset, r.timestamp) for r in wrapped.records()] == [(19, 1), (20, 2)]
    librdkafka = LegacyBatch(build_entry(0, 1, None, gzip.compress(inner, mtime=0), attributes=1, timestamp=5), 0)
    assert [r.offset for r in librdkafka.records()] == [0, 1]


@pytest.mark.parametrize("attributes, value, message", [
    (4, b"x", "Invalid wrapper compressionType found in legacy deep record iterator 1"),
    (1, None, "Found invalid compressed record set with null value (magic = 1)"),
    (1, gzip.compress(b"", mtime=0), "Found invalid compressed record set with no inner records"),
    (1, gzip.compress(build_entry(0, 1, None, b"x", attributes=1, timestamp=0), mtime=0), "Inner messages must not be compressed"),
])
def test_deep_iteration_errors(attributes, value, message):
    batch = LegacyBatch(build_entry(0, 1, None, value, attributes=attributes, timestamp=0), 0)
    with pytest.raises(CorruptRecordError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(batch.records())


def test_inner_size_below_overhead():
    inner = struct.pack(">qi", 0, 3) + b"abc"
    batch = LegacyBatch(build_entry(0, 1, None, gzip.compress(inner, mtime=0), attributes=1, timestamp=0), 0)
    with pytest.raises(CorruptRecordError, match="less than the minimum record overhead"):
        list(batch.records())


def test_parse_entry_strict_raises_and_lenient_keeps_header():
    raw = bytearray(build_entry(0, 1, b"k", b"v", timestamp=6))
    struct.pack_into(">i", raw, 12 + 14, 99)
    with pytest.raises(CorruptRecordError):
        parse_entry(bytes(raw))
    entry = parse_entry(bytes(raw), lenient=True)
    assert entry.timestamp == 6 and entry.error and entry.key is None
