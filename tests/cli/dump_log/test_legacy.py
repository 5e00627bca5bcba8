"""Legacy message formats (magic v0 and v1) in kafka-dump-log: shallow and deep lines as DumpLogSegments prints them.

The expected text is derived from DumpLogSegments 3.9: for magic < 2 the batch line is
`offset: <lastOffset> position: <p> <TimestampType>: <maxTimestamp> size: <12 + size> magic: <m>
compresscodec: <codec> crc: <crc> isvalid: <b>` (TimestampType `NoTimestampType` for v0), and each deep
record is `| offset: <o> <batch TimestampType>: <record timestamp> keySize: <k> valueSize: <v>` then, because
legacy records are AbstractLegacyRecordBatch instances, ` isValid: <b> crc: <crc>}` (the closing brace is
in Kafka's format string), then ` key: ..` / ` payload: ..`. The entries are laid out by hand here
(offset, size, CRC-32 of magic..end, magic, attributes, [timestamp], key, value).
"""
from __future__ import annotations

import binascii
import gzip
import io
import struct

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run
from kraftsman.storage.records.batch import build_batch

NAME = "00000000000000000000.log"


def entry(offset: int, magic: int, key: bytes | None, value: bytes | None, attributes: int = 0,
          timestamp: int | None = None, crc_xor: int = 0) -> tuple[bytes, int]:
    """Return (log entry bytes, stored crc) of one legacy record, laid out by hand."""
    body = bytes([magic, attributes]) + (struct.pack(">q", timestamp) if magic == 1 else b"")
    for part in (key, value):
        body += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    crc = binascii.crc32(body) ^ crc_xor
    return struct.pack(">qiI", offset, 4 + len(body), crc) + body, crc


def dump(tmp_path, data: bytes, *flags) -> tuple[int, list[str], str]:
    (tmp_path / NAME).write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, [*flags, "--files", NAME], Environment(stdout=out, stderr=err, cwd=str(tmp_path)),
                         prog="kafka-dump-log")
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue().splitlines(), err.getvalue()


def test_v0_entry_hand_bytes(tmp_path):
    raw, crc = entry(0, 0, b"k", b"v")
    # offset 0, size 16 (crc 4 + magic 1 + attributes 1 + key 4+1 + value 4+1), crc, 00 00, key, value
    assert raw == (bytes.fromhex("0000000000000000" "00000010") + struct.pack(">I", crc)
                   + bytes.fromhex("0000" "00000001") + b"k" + bytes.fromhex("00000001") + b"v")
    status, out, err = dump(tmp_path, raw, "--print-data-log")
    assert (status, err) == (0, "")
    assert out == [f"Dumping {NAME}", "Log starting offset: 0",
                   f"offset: 0 position: 0 NoTimestampType: -1 size: 28 magic: 0 compresscodec: none crc: {crc} "
                   "isvalid: true",
                   f"| offset: 0 NoTimestampType: -1 keySize: 1 valueSize: 1 isValid: true crc: {crc}}} key: k "
                   "payload: v"]


def test_v1_create_time_shallow_and_deep(tmp_path):
    a, crc_a = entry(5, 1, None, b"hello", timestamp=1700000000000)
    b, crc_b = entry(6, 1, b"key", None, timestamp=1700000000001)
    _, shallow, _ = dump(tmp_path, a + b)
    assert shallow[2:] == [
        f"offset: 5 position: 0 CreateTime: 1700000000000 size: {len(a)} magic: 1 compresscodec: none crc: {crc_a} "
        "isvalid: true",
        f"offset: 6 position: {len(a)} CreateTime: 1700000000001 size: {len(b)} magic: 1 compresscodec: none "
        f"crc: {crc_b} isvalid: true"]
    _, deep, _ = dump(tmp_path, a + b, "--deep-iteration")
    assert deep[3] == f"| offset: 5 CreateTime: 1700000000000 keySize: -1 valueSize: 5 isValid: true crc: {crc_a}}}"
    _, printed, _ = dump(tmp_path, a + b, "--print-data-log", "--skip-record-metadata")
    assert (printed[3], printed[5]) == (" payload: hello", "| key: key")


def test_v1_gzip_wrapper_log_append_time_relative_offsets(tmp_path):
    inner0, crc0 = entry(0, 1, None, b"x", timestamp=1)
    inner1, crc1 = entry(1, 1, b"y", b"z", timestamp=2)
    wrapper, crc_w = entry(11, 1, None, gzip.compress(inner0 + inner1, mtime=0), attributes=0x01 | 0x08, timestamp=999)
    status, out, err = dump(tmp_path, wrapper, "--print-data-log")
    assert (status, err) == (0, "")
    # inner v1 offsets are relative: base = 11 - last inner offset (1) = 10; LogAppendTime takes the wrapper's
    assert out[2:] == [
        f"offset: 11 position: 0 LogAppendTime: 999 size: {len(wrapper)} magic: 1 compresscodec: gzip crc: {crc_w} "
        "isvalid: true",
        f"| offset: 10 LogAppendTime: 999 keySize: -1 valueSize: 1 isValid: true crc: {crc0}}} payload: x",
        f"| offset: 11 LogAppendTime: 999 keySize: 1 valueSize: 1 isValid: true crc: {crc1}}} key: y payload: z"]


def test_v0_gzip_wrapper_keeps_absolute_inner_offsets(tmp_path):
    inner0, crc0 = entry(3, 0, None, b"a")
    inner1, _ = entry(4, 0, None, b"b")
    wrapper, _ = entry(4, 0, None, gzip.compress(inner0 + inner1, mtime=0), attributes=0x01)
    _, out, _ = dump(tmp_path, wrapper, "--deep-iteration")
    assert out[3] == f"| offset: 3 NoTimestampType: -1 keySize: -1 valueSize: 1 isValid: true crc: {crc0}}}"
    assert out[4].startswith("| offset: 4 NoTimestampType: -1 ")


def test_flipped_crc_is_invalid_and_exit_2(tmp_path):
    raw, crc = entry(0, 0, None, b"v", crc_xor=1)
    status, out, _ = dump(tmp_path, raw, "--deep-iteration")
    assert status == 2
    assert out[2].endswith(f"crc: {crc} isvalid: false")
    assert out[3].endswith(f"isValid: false crc: {crc}}}")


def test_v1_wrapper_offset_below_last_inner_offset(tmp_path):
    inner, _ = entry(0, 1, None, b"x", timestamp=1)
    inner2, _ = entry(5, 1, None, b"x", timestamp=1)
    wrapper, _ = entry(2, 1, None, gzip.compress(inner + inner2, mtime=0), attributes=0x01, timestamp=1)
    status, out, err = dump(tmp_path, wrapper, "--deep-iteration")
    assert status == 2 and len(out) == 3
    assert ("Found invalid wrapper offset in compressed v1 message set, wrapper offset '2' is less than the last "
            "inner message offset '5' and it is not zero.") in err


def test_mixed_formats_and_non_consecutive_offsets(tmp_path):
    v0, _ = entry(0, 0, None, b"a")
    v1, _ = entry(1, 1, None, b"b", timestamp=7)
    v2 = build_batch([(None, b"c")], 5, timestamp=8)
    status, out, err = dump(tmp_path, v0 + v1 + v2, "--deep-iteration")
    assert status == 0
    assert out[6].startswith("baseOffset: 5 lastOffset: 5 count: 1 ")
    assert f" position: {len(v0) + len(v1)} CreateTime: 8 " in out[6]
    assert err == f"Non-consecutive offsets in {tmp_path / NAME}\n  1 is followed by 5\n"


def test_truncated_key_prints_the_shallow_line_then_reports(tmp_path):
    raw, crc = entry(0, 1, b"kk", b"v", timestamp=1)
    bad = bytearray(raw)
    struct.pack_into(">i", bad, 12 + 14, 1000)  # key length past the end of the record
    status, out, err = dump(tmp_path, bytes(bad), "--deep-iteration")
    assert status == 2
    assert out[2].startswith("offset: 0 position: 0 CreateTime: 1 ")
    assert err.count("\n") == 2 and "runs past the end of the record" in err
    assert err.splitlines()[-1] == f"kafka-dump-log: 1 batch failed: {NAME} at position 0"


def test_index_and_time_index_over_a_v1_segment(tmp_path):
    a, _ = entry(0, 1, None, b"a", timestamp=100)
    b, _ = entry(1, 1, None, b"b", timestamp=200)
    (tmp_path / NAME).write_bytes(a + b)
    (tmp_path / "00000000000000000000.index").write_bytes(struct.pack(">ii", 1, len(a)))
    (tmp_path / "00000000000000000000.timeindex").write_bytes(struct.pack(">qi", 200, 1))
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, ["--files", "00000000000000000000.index,00000000000000000000.timeindex"],
                         Environment(stdout=out, stderr=err, cwd=str(tmp_path)), prog="kafka-dump-log")
    assert (status, err.getvalue()) == (0, "")
    assert out.getvalue().splitlines() == ["Dumping 00000000000000000000.index", f"offset: 1 position: {len(a)}",
                                           "Dumping 00000000000000000000.timeindex", "timestamp: 200 offset: 1"]
