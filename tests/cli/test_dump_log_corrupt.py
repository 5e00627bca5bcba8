"""Corrupt inputs: Kafka's text where Kafka has one, never a traceback, exit code 2 when anything was corrupt.

The base case is a real two-batch log (otus_kafka: a LeaderChange control batch of 91 bytes, then a
145-byte batch of 4 metadata records) whose Kafka 3.9 output is in the fixtures; each case edits a copy
and derives what Kafka prints from DumpLogSegments' rules (FileLogInputStream stops quietly when a
batch runs past the end of the file -> `Found N invalid bytes`; a size below 14 throws).
"""
from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest

from kraftsman.cli.common import Environment, run_command
from kraftsman.cli.dump_log import run
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.crc import crc32c

REPO = Path(__file__).resolve().parents[2]
KRAFT_REAL = REPO.parent / "shared" / "fixtures" / "kraft-real"
SEGMENT = KRAFT_REAL / "data" / "otus_kafka" / "data" / "__cluster_metadata-0" / "00000000000000000000.log"
EXPECTED = KRAFT_REAL / "expected-kafka-3.9" / "otus_kafka" / "data" / "__cluster_metadata-0" / \
    "dump-log.cluster-metadata-decoder.txt"
NAME = "00000000000000000000.log"


@pytest.fixture
def case(tmp_path):
    if not SEGMENT.is_file() or not EXPECTED.is_file():
        pytest.skip(f"real Kafka fixtures not found at {KRAFT_REAL} (../shared is absent)")
    lines = EXPECTED.read_text().splitlines()
    lines[0] = f"Dumping {NAME}"
    return tmp_path, bytearray(SEGMENT.read_bytes()), lines


def dump(tmp_path: Path, data: bytes, *flags) -> tuple[int, list[str], str]:
    (tmp_path / NAME).write_bytes(bytes(data))
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, ["--cluster-metadata-decoder", *flags, "--files", NAME],
                         Environment(stdout=out, stderr=err, cwd=str(tmp_path)), prog="kafka-dump-log")
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue().splitlines(), err.getvalue()


def test_intact_copy_is_kafkas_text(case):
    tmp_path, data, lines = case
    assert dump(tmp_path, data) == (0, lines, "")


def test_flipped_crc_byte_prints_isvalid_false(case):
    tmp_path, data, lines = case
    data[91 + 17] ^= 0x01  # second batch's stored CRC
    status, out, err = dump(tmp_path, data)
    crc = struct.unpack_from(">I", data, 91 + 17)[0]
    lines[4] = lines[4].replace("crc: 3716655373 isvalid: true", f"crc: {crc} isvalid: false")
    assert (status, out, err) == (2, lines, "")


def test_flipped_byte_in_a_record_value_is_still_printed_with_isvalid_false(case):
    tmp_path, data, lines = case
    at = bytes(data).index(b"Bootstrap records")
    data[at] = ord("b")
    status, out, err = dump(tmp_path, data)
    assert status == 2 and err == ""
    assert out[4].endswith("isvalid: false")
    assert out[5].endswith('payload: {"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"bootstrap records"}}')
    assert out[6:] == lines[6:]


def test_truncated_batch_reports_invalid_bytes(case):
    tmp_path, data, lines = case
    status, out, err = dump(tmp_path, data[:-10])
    assert (status, err) == (2, "")
    assert out == lines[:4] + [f"Found {145 - 10} invalid bytes at the end of {NAME}"]


def test_huge_batch_length_reports_invalid_bytes(case):
    tmp_path, data, lines = case
    struct.pack_into(">i", data, 91 + 8, 2 ** 31 - 1)
    status, out, err = dump(tmp_path, data)
    assert (status, err) == (2, "")
    assert out == lines[:4] + [f"Found 145 invalid bytes at the end of {NAME}"]


@pytest.mark.parametrize("tail", [1, 12, 17])
def test_short_zero_tail_reports_invalid_bytes(case, tail):
    tmp_path, data, lines = case
    status, out, err = dump(tmp_path, data + bytes(tail))
    assert (status, out, err) == (2, lines + [f"Found {tail} invalid bytes at the end of {NAME}"], "")


@pytest.mark.parametrize("tail", [18, 4096])
def test_long_zero_tail_gives_kafkas_exception_text_as_one_line(case, tail):
    tmp_path, data, lines = case
    status, out, err = dump(tmp_path, data + bytes(tail))
    assert (status, out) == (2, lines)  # Kafka's stdout; Kafka then throws CorruptRecordException
    assert err == (f"kafka-dump-log: Found record size 0 smaller than minimum record overhead (14) in file "
                   f"{tmp_path / NAME}.\n")


def test_malformed_records_are_reported_and_the_dump_goes_on(case):
    tmp_path, data, lines = case
    bad = bytearray(build_batch([(None, b"\x01\x0c\x00"), (None, b"x")], 5, timestamp=1))
    bad[61] = 0x7E  # first record claims 63 bytes: runs past the batch
    status, out, err = dump(tmp_path, data[:91] + bad + data[91:])
    assert status == 2
    lines[4] = lines[4].replace("position: 91 ", f"position: {91 + len(bad)} ")
    assert out[:4] == lines[:4] and out[-5:] == lines[-5:]
    assert out[4].startswith("baseOffset: 5 lastOffset: 6 count: 2 ")
    assert err.startswith(f"kafka-dump-log: {NAME}: records of the batch at position 91 (offset 5) cannot be read")


def test_metadata_parse_errors_use_kafkas_payload_text(case):
    tmp_path, data, lines = case
    at = 91 + 61 + 6  # first value of the second batch: frame version byte
    assert data[at] == 1
    data[at] = 0
    status, out, err = dump(tmp_path, data)
    assert status == 2 and err == ""
    assert out[5].endswith(" payload: Error at 1, skipping. Could not deserialize metadata record with frame "
                           "version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer "
                           "versions are not supported.")


def test_unknown_record_type_is_printed_generically(case):
    tmp_path, data, lines = case
    at = 91 + 61 + 6
    data[at + 1] = 99  # api key 99: newer than the schemas (CRC recomputed: only the type is unknown)
    struct.pack_into(">I", data, 91 + 17, crc32c(bytes(data[91 + 21:])))
    status, out, err = dump(tmp_path, data)
    assert (status, err) == (0, "")
    assert '"type":"UNKNOWN_METADATA_RECORD","apiKey":99,"version":0,"raw":"' in out[5]


def test_non_consecutive_offsets_are_reported_after_all_files(tmp_path):
    log = tmp_path / NAME
    log.write_bytes(build_batch([(None, b"a"), (None, b"b")], 0) + build_batch([(None, b"c")], 5))
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, ["--deep-iteration", "--files", NAME],
                         Environment(stdout=out, stderr=err, cwd=str(tmp_path)))
    assert status == 0
    assert err.getvalue() == f"Non-consecutive offsets in {tmp_path / NAME}\n  1 is followed by 5\n"
