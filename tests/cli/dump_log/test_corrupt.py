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

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.crc import crc32c

REPO = Path(__file__).resolve().parents[3]
KRAFT_REAL = REPO.parent / "shared" / "fixtures" / "kraft-real"
SEGMENT = KRAFT_REAL / "data" / "otus_kafka" / "data" / "__cluster_metadata-0" / "00000000000000000000.log"
EXPECTED = KRAFT_REAL / "expected-kafka-3.9" / "otus_kafka" / "data" / "__cluster_metadata-0" / \
    "dump-log.cluster-metadata-decoder.txt"
NAME = "00000000000000000000.log"


def summary(position: int, invalid_bytes: int | None = None) -> str:
    """Return the line a corrupt run ends with (kraftsman, after Kafka's output): one failed batch of NAME."""
    where = f"at position {position}"
    if invalid_bytes is not None:
        where = f"({invalid_bytes} invalid bytes {where})"
    return f"kafka-dump-log: 1 batch failed: {NAME} {where}\n"


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
    assert (status, out, err) == (2, lines, summary(91))


def test_flipped_byte_in_a_record_value_is_still_printed_with_isvalid_false(case):
    tmp_path, data, lines = case
    at = bytes(data).index(b"Bootstrap records")
    data[at] = ord("b")
    status, out, err = dump(tmp_path, data)
    assert status == 2 and err == summary(91)
    assert out[4].endswith("isvalid: false")
    assert out[5].endswith('payload: {"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"bootstrap records"}}')
    assert out[6:] == lines[6:]


def test_truncated_batch_reports_invalid_bytes(case):
    tmp_path, data, lines = case
    status, out, err = dump(tmp_path, data[:-10])
    assert (status, err) == (2, summary(91, 145 - 10))
    assert out == lines[:4] + [f"Found {145 - 10} invalid bytes at the end of {NAME}"]


def test_huge_batch_length_reports_invalid_bytes(case):
    tmp_path, data, lines = case
    struct.pack_into(">i", data, 91 + 8, 2 ** 31 - 1)
    status, out, err = dump(tmp_path, data)
    assert (status, err) == (2, summary(91, 145))
    assert out == lines[:4] + [f"Found 145 invalid bytes at the end of {NAME}"]


@pytest.mark.parametrize("tail", [1, 12, 17])
def test_short_zero_tail_reports_invalid_bytes(case, tail):
    tmp_path, data, lines = case
    status, out, err = dump(tmp_path, data + bytes(tail))
    assert (status, out, err) == (2, lines + [f"Found {tail} invalid bytes at the end of {NAME}"], summary(236, tail))


@pytest.mark.parametrize("tail", [18, 4096])
def test_long_zero_tail_gives_kafkas_exception_text_as_one_line(case, tail):
    tmp_path, data, lines = case
    status, out, err = dump(tmp_path, data + bytes(tail))
    assert (status, out) == (2, lines)  # Kafka's stdout; Kafka then throws CorruptRecordException
    assert err == (f"kafka-dump-log: Found record size 0 smaller than minimum record overhead (14) in file "
                   f"{tmp_path / NAME}.\n" + summary(236))


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
    assert err.endswith(summary(91))


def test_metadata_parse_errors_use_kafkas_payload_text(case):
    tmp_path, data, lines = case
    at = 91 + 61 + 6  # first value of the second batch: frame version byte
    assert data[at] == 1
    data[at] = 0
    status, out, err = dump(tmp_path, data)
    assert status == 2 and err == summary(91)
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


# ---------------------------------------------------------------- a zeroed record inside a batch
# Kafka 3.9's DumpLogSegments prints the batch line (CRC over the zeroed bytes: isvalid: false), then reads the
# records with DefaultRecord.readFrom. A record whose bytes are all zero has length 0 but its fields (attributes,
# timestampDelta, offsetDelta, key length, value length, header count) take 6 bytes: InvalidRecordException
# "Invalid record size: expected to read 0 bytes in record payload, but instead read 6", which DumpLogSegments
# does not catch (Kafka's stack trace, exit 1). kraftsman prints the records before it, that message on stderr,
# and exit 2. Only a record that still parses (an empty or null value) reaches the metadata decoder, whose
# MetadataRecordSerde fails with "Error while reading frame version", printed as the payload.

SECOND_BATCH_RECORDS = 91 + 61     # the 4 records of the second batch: 31, 30, 12 and 11 bytes


def test_a_zeroed_record_stops_its_batch_with_kafkas_invalid_record_text(case):
    tmp_path, data, lines = case
    at = SECOND_BATCH_RECORDS + 31            # the FEATURE_LEVEL_RECORD at offset 2
    data[at:at + 30] = bytes(30)
    status, out, err = dump(tmp_path, data)
    assert status == 2
    assert out == lines[:4] + [lines[4].replace("isvalid: true", "isvalid: false"), lines[5]]
    assert err == (f"kafka-dump-log: {NAME}: records of the batch at position 91 (offset 1) cannot be read: position "
                   f"{at}: Invalid record size: expected to read 0 bytes in record payload, but instead read 6\n"
                   + summary(91))
    status, out, err = plain(tmp_path, data, "--deep-iteration")        # the same reading without decoding
    assert status == 2 and "Invalid record size: expected to read 0 bytes" in err
    assert len(out) == 6 and out[5] == ("| offset: 1 CreateTime: 1738908227638 keySize: -1 valueSize: 24 sequence: -1 "
                                        "headerKeys: []")


def test_a_zeroed_record_body_keeps_its_length_and_fails_the_same_way(case):
    tmp_path, data, lines = case
    at = SECOND_BATCH_RECORDS + 31
    data[at + 1:at + 30] = bytes(29)
    status, out, err = dump(tmp_path, data)
    assert (status, out[4:]) == (2, [lines[4].replace("isvalid: true", "isvalid: false"), lines[5]])
    assert err.endswith("Invalid record size: expected to read 29 bytes in record payload, but instead read 6\n"
                        + summary(91))


def plain(tmp_path: Path, data: bytes, *flags) -> tuple[int, list[str], str]:
    """Dump without the metadata decoder."""
    (tmp_path / NAME).write_bytes(bytes(data))
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, [*flags, "--files", NAME], Environment(stdout=out, stderr=err, cwd=str(tmp_path)),
                         prog="kafka-dump-log")
    return status, out.getvalue().splitlines(), err.getvalue()


def test_a_zeroed_batch_without_deep_iteration_prints_only_isvalid_false(case):
    tmp_path, data, lines = case
    at = SECOND_BATCH_RECORDS + 31
    data[at:at + 30] = bytes(30)
    status, out, err = plain(tmp_path, data)     # Kafka reads no record here: no exception, only the batch lines
    assert (status, err, len(out)) == (2, summary(91), 4)
    assert out[3].endswith("crc: 3716655373 isvalid: false")


def test_empty_and_null_values_fail_in_the_frame_version_as_in_kafka(tmp_path):
    # an all-zero record that still parses (6 zero bytes after its length 6): key b"", value b"", offset delta 0
    batch = bytearray(build_batch([(None, b"\x01\x0c\x00\x00"), (b"", b""), (None, None)], 7, timestamp=5))
    zero = bytes(batch).index(b"\x0c\x00\x00\x02\x00\x00\x00")   # length 6, then the fields, offset delta 1
    batch[zero + 3] = 0                                              # offset delta 0: all six field bytes zero
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    status, out, err = dump(tmp_path, batch)
    assert status == 2       # the zero offset delta repeats offset 7: DumpLogSegments' non-consecutive pairs
    assert err.startswith("Non-consecutive offsets in ") and {"  7 is followed by 7", "  7 is followed by 9"} <= \
        set(err.splitlines())
    assert out[3:] == [
        "| offset: 7 CreateTime: 5 keySize: -1 valueSize: 4 sequence: -1 headerKeys: [] payload: Error at 7, "
        "skipping. Failed to deserialize record with type 12",
        "| offset: 7 CreateTime: 5 keySize: 0 valueSize: 0 sequence: -1 headerKeys: [] payload: Error at 7, "
        "skipping. Error while reading frame version",
        "| offset: 9 CreateTime: 5 keySize: -1 valueSize: -1 sequence: -1 headerKeys: [] payload: Error at 9, "
        "skipping. Error while reading frame version"]


@pytest.mark.parametrize("value,message", [
    (b"\x80", "Error while reading frame version"), (b"\x01", "Error while reading type"),
    (b"\x01\x0c", "Error while reading version"), (b"\x01\x80\x80\x02\x00", "Value for type was too large."),
    (b"\x02\x00\x00", "Could not deserialize metadata record due to unknown frame version 2(only frame version 1 "
                      "is supported)")])
def test_a_cut_frame_header_gives_kafkas_entity_text(tmp_path, value, message):
    status, out, _ = dump(tmp_path, build_batch([(None, value)], 0, timestamp=5))
    assert status == 2 and out[-1].endswith(f"payload: Error at 0, skipping. {message}")


def test_a_corrupt_run_ends_with_one_summary_line_naming_every_failed_batch(case):
    tmp_path, data, lines = case
    first = bytearray(data)
    first[17] ^= 0x01                               # first batch's stored CRC
    (tmp_path / "00000000000000000100.log").write_bytes(bytes(first) + bytes(5))
    data[91 + 17] ^= 0x01                           # second batch's stored CRC
    (tmp_path / NAME).write_bytes(bytes(data))
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, ["--files", f"00000000000000000100.log,{NAME}"],
                         Environment(stdout=out, stderr=err, cwd=str(tmp_path)), prog="kafka-dump-log")
    assert status == 2 and out.getvalue().count("isvalid: false") == 2
    assert err.getvalue() == ("kafka-dump-log: 3 batches failed: 00000000000000000100.log at position 0 (5 invalid "
                              f"bytes at position 236); {NAME} at position 91\n")


def test_the_summary_lists_five_positions_then_counts_the_rest(case):
    from kraftsman.cli.dump_log.session import summary

    line = summary({"a.log": [(p, None) for p in range(0, 700, 100)]})
    assert line == "kafka-dump-log: 7 batches failed: a.log at positions 0, 100, 200, 300, 400 and 2 more"
