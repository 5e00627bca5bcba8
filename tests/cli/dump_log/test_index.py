"""kafka-dump-log on .index / .timeindex / producer .snapshot / .txnindex files.

Expected text is derived from the reference (section 4.3 and 3.3): index entries are read with struct
and checked against the batch lines Kafka 3.9 printed for the same segment (position -> lastOffset,
maxTimestamp), so a mismatch report would have to agree with Kafka's own reading of the log.
"""
from __future__ import annotations

import gzip
import io
import re
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
DATA = KRAFT_REAL / "data"
INDEXES = sorted(p for p in DATA.rglob("*.index") if p.with_suffix(".log").is_file()) if DATA.is_dir() else []
_BATCH = re.compile(r"^baseOffset: \d+ lastOffset: (\d+) .* position: (\d+) CreateTime: (\d+) ")


def dump(argv, cwd) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, argv, Environment(stdout=out, stderr=err, cwd=str(cwd)), prog="kafka-dump-log")
    return status, out.getvalue(), err.getvalue()


def kafka_batches(index: Path) -> dict[int, tuple[int, int]]:
    """position -> (lastOffset, maxTimestamp) from Kafka's own dump of the segment."""
    folder = index.parent.relative_to(DATA)
    expected = KRAFT_REAL / "expected-kafka-3.9" / folder / "dump-log.cluster-metadata-decoder.txt"
    gz = expected.with_name(expected.name + ".gz")
    text = gzip.decompress(gz.read_bytes()).decode() if gz.is_file() else expected.read_text()
    section = text.split(f"Dumping ./{folder}/{index.stem}.log\n")[1].split("\nDumping ")[0]
    return {int(m[2]): (int(m[1]), int(m[3])) for m in map(_BATCH.match, section.splitlines()) if m}


def entries(path: Path, fmt: str) -> list[tuple]:
    data = path.read_bytes()
    size = struct.calcsize(fmt)
    out = [struct.unpack_from(fmt, data, i) for i in range(0, len(data) - size + 1, size)]
    return out


@pytest.mark.parametrize("index", INDEXES or [None], ids=[str(p.relative_to(DATA)) for p in INDEXES] or ["none"])
def test_index_and_time_index_match_kafkas_reading_of_the_log(index):
    if index is None:
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")
    rel = str(index.relative_to(DATA))
    batches = kafka_batches(index)
    offsets = [(rel_offset, pos) for rel_offset, pos in entries(index, ">ii")]
    offsets = [e for i, e in enumerate(offsets) if i == 0 or e[0] != 0]
    status, out, err = dump(["--files", rel], DATA)
    expected = [f"Dumping {rel}"] + ([f"{rel} is empty."] if not offsets else
                                     [f"offset: {o} position: {p}" for o, p in offsets])
    assert (status, err, out) == (0, "", "\n".join(expected) + "\n")
    assert all(batches[p][0] == o for o, p in offsets)  # so Kafka would report no mismatch either
    times = [e for i, e in enumerate(entries(index.with_suffix(".timeindex"), ">qi")) if i == 0 or e[1] != 0]
    trel = rel[:-len(".index")] + ".timeindex"
    status, out, err = dump(["--files", trel], DATA)
    by_offset = {last: ts for last, ts in batches.values()}
    assert all(by_offset[o] == ts for ts, o in times)
    assert (status, err) == (0, "")
    assert out == "\n".join([f"Dumping {trel}"] + [f"timestamp: {t} offset: {o}" for t, o in times]) + "\n"
    for flag in ("--verify-index-only", "--index-sanity-check"):
        for name in (rel, trel):
            status, out, err = dump([flag, "--files", name], DATA)
            done = "" if flag == "--verify-index-only" else f"{name} passed sanity check.\n"
            if name == rel and not entries(index, ">ii"):
                done = f"{name} is empty.\n"  # checked before either flag, as Kafka does
            assert (status, err, out) == (0, "", f"Dumping {name}\n{done}")


def _segment(tmp_path: Path) -> Path:
    log = tmp_path / "00000000000000000100.log"
    batches = [build_batch([(None, b"v%d" % i)], 100 + 2 * i, timestamp=1000 + i) for i in range(3)]
    log.write_bytes(b"".join(batches))
    return log


def test_index_mismatches_and_time_index_errors_go_to_stderr_after_all_files(tmp_path):
    log = _segment(tmp_path)
    size = len(log.read_bytes()) // 3
    (tmp_path / "00000000000000000100.index").write_bytes(struct.pack(">iiii", 0, 0, 3, size))
    (tmp_path / "00000000000000000100.timeindex").write_bytes(struct.pack(">qiqiqi", 1000, 0, 999, 2, 1005, 9))
    status, out, err = dump(["--files", "00000000000000000100.index,00000000000000000100.timeindex"], tmp_path)
    assert status == 2
    assert out.splitlines() == ["Dumping 00000000000000000100.index", "offset: 100 position: 0",
                                f"offset: 103 position: {size}", "Dumping 00000000000000000100.timeindex",
                                "timestamp: 1000 offset: 100", "timestamp: 999 offset: 102",
                                "timestamp: 1005 offset: 109"]
    index_path = tmp_path / "00000000000000000100.index"
    time_path = tmp_path / "00000000000000000100.timeindex"
    assert err.splitlines() == [
        f"Mismatches in :{index_path}", "  Index offset: 103, log offset: 102",
        f"Found timestamp mismatch in :{time_path}", "  Index timestamp: 999, log timestamp: 1001",
        f"Found out of order timestamp in :{time_path}", "  Index timestamp: 999, Previously indexed timestamp: 1000",
        "The following indexed offsets are not found in the log.", "Indexed offset: 109, found log offset: -1",
        "kafka-dump-log: 4 problems: 00000000000000000100.index (index offset 103 is log offset 102); "
        "00000000000000000100.timeindex (timestamp 999 of offset 102 is not the log's, timestamp 999 out of order, "
        "time index offset 109 not in the log)"]


def test_sanity_check_failure_is_reported_in_kafkas_words(tmp_path):
    _segment(tmp_path)
    (tmp_path / "00000000000000000100.index").write_bytes(struct.pack(">ii", 0, 0) + b"\0\0\0")
    status, out, err = dump(["--index-sanity-check", "--files", "00000000000000000100.index"], tmp_path)
    assert status == 2 and out == "Dumping 00000000000000000100.index\n"
    assert err == (f"kafka-dump-log: Index file {tmp_path / '00000000000000000100.index'} is corrupt, found 11 "
                   "bytes which is neither positive nor a multiple of 8\n"
                   "kafka-dump-log: 1 problem: 00000000000000000100.index (index sanity check failed)\n")


def test_index_without_its_log_fails_like_kafka_without_a_traceback(tmp_path):
    (tmp_path / "00000000000000000000.index").write_bytes(b"")
    status, out, err = dump(["--files", "00000000000000000000.index"], tmp_path)
    assert status == 1 and out == "Dumping 00000000000000000000.index\n"
    assert err == f"kafka-dump-log: {tmp_path / '00000000000000000000.log'} (No such file or directory)\n"


def test_producer_snapshot_and_txn_index(tmp_path):
    entry = struct.pack(">qhiqiqiq", 7, 1, 5, 42, 3, 1234, 2, -1)
    body = struct.pack(">i", 1) + entry
    (tmp_path / "00000000000000000050.snapshot").write_bytes(struct.pack(">hI", 1, crc32c(body)) + body)
    (tmp_path / "00000000000000000050.txnindex").write_bytes(struct.pack(">hqqqq", 0, 7, 10, 20, 15))
    (tmp_path / "bad.snapshot").write_bytes(struct.pack(">hI", 1, 0) + body)
    status, out, err = dump(["--files", "00000000000000000050.snapshot,00000000000000000050.txnindex,bad.snapshot"],
                            tmp_path)
    assert out.splitlines() == [
        "Dumping 00000000000000000050.snapshot",
        "producerId: 7 producerEpoch: 1 coordinatorEpoch: 2 currentTxnFirstOffset: OptionalLong.empty "
        "lastTimestamp: 1234 firstSequence: 2 lastSequence: 5 lastOffset: 42 offsetDelta: 3 timestamp: 1234",
        "Dumping 00000000000000000050.txnindex",
        "version: 0 producerId: 7 firstOffset: 10 lastOffset: 20 lastStableOffset: 15",
        "Dumping bad.snapshot"]
    assert err == (f"Snapshot is corrupt (CRC is no longer valid). Stored crc: 0. Computed crc: {crc32c(body)}\n"
                   "kafka-dump-log: 1 problem: bad.snapshot (unreadable producer snapshot)\n")
    assert status == 2


def test_real_producer_snapshots_are_empty(tmp_path):
    if not DATA.is_dir():
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")
    snaps = sorted(DATA.rglob("*.snapshot"))
    status, out, err = dump(["--files", ",".join(str(p.relative_to(DATA)) for p in snaps)], DATA)
    assert (status, err) == (0, "")
    assert out == "".join(f"Dumping {p.relative_to(DATA)}\n" for p in snaps)
