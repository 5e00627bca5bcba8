"""Corrupt batches while loading: a flipped byte inside a record of a real Kafka log (copied to tmp first).

The batch is reported on stderr in one line (file, position, stored and computed CRC) and skipped; one-shot and
batch modes then exit 2; --strict stops the load (exit 2); every good batch is still shown.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .shell_fixtures import shell

REPO = Path(__file__).resolve().parents[3]
LOGDIR = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data" / "kafka-temp" / "data" / "kafka1"
SEGMENT = "__cluster_metadata-0/00000000000000000000.log"
TOPIC = b"payment-create-request"
LINE = re.compile(r"kafka-metadata-shell: warning: (?P<file>\S+): batch at position (?P<pos>\d+) \(offsets \d+-\d+\) "
                  r"is corrupt: stored crc (?P<stored>\d+), computed crc (?P<computed>\d+); skipped\n")


def _flip(path: Path) -> None:
    """Turn the first letter of the first TopicRecord name TOPIC in `path` into 'X'."""
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[data.index(TOPIC)] = ord("X")
    path.write_bytes(bytes(data))


@pytest.fixture
def corrupted(tmp_path) -> Path:
    """Copy the fixture's log directory; flip a byte in the segment's TopicRecord and in the newest snapshot's."""
    if not (LOGDIR / SEGMENT).is_file():
        pytest.skip(f"real Kafka fixtures not found at {LOGDIR}")
    copy = tmp_path / "kafka1"
    shutil.copytree(LOGDIR, copy)
    _flip(copy / SEGMENT)
    _flip(sorted((copy / SEGMENT).parent.glob("*.checkpoint"))[-1])
    return copy


def _reported(err: str, path: Path) -> re.Match:
    """Check that the first stderr line reports the bad batch and that the rest only follow from it."""
    first, _, rest = err.partition("\n")
    match = LINE.fullmatch(first + "\n")
    assert match, err
    assert match["file"] == str(path) and match["stored"] != match["computed"]
    assert all("Error loading metadata log record from offset" in line for line in rest.splitlines()), rest
    return match


def test_the_batch_is_reported_skipped_and_one_shot_exits_2(corrupted):
    segment = corrupted / SEGMENT
    status, out, err = shell("--snapshot", str(segment), "ls", "/image/topics/byName")
    assert status == 2
    assert _reported(err, segment)["pos"] == "391690"
    assert "Xayment-create-request" not in out and "payment-create-request" not in out.split()
    _, clean, _ = shell("--snapshot", str(LOGDIR / SEGMENT), "ls", "/image/topics/byName")
    assert set(out.split()) == set(clean.split()) - {"payment-create-request"}   # every good batch is there


def test_strict_stops_the_load(corrupted):
    status, out, err = shell("--snapshot", str(corrupted / SEGMENT), "--strict", "ls", "/image/topics/byName")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and err.endswith("; stopped loading (--strict)\n") and "is corrupt" in err


def test_directory_and_batch_modes_check_too(corrupted):
    snapshot = sorted((corrupted / SEGMENT).parent.glob("*.checkpoint"))[-1]
    status, out, err = shell("--directory", str(corrupted), stdin="ls /image/cluster\n")
    assert (status, out) == (2, "brokers\ncontrollers\n")
    _reported(err, snapshot)


def test_a_clean_log_has_no_warning():
    if not (LOGDIR / SEGMENT).is_file():
        pytest.skip(f"real Kafka fixtures not found at {LOGDIR}")
    status, _, err = shell("--snapshot", str(LOGDIR / SEGMENT), "ls", "/image")
    assert (status, err) == (0, "")
