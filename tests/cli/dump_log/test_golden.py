"""Golden tests: kafka-dump-log prints exactly what Kafka 3.9 printed for the real fixture files.

Every `expected-kafka-3.9/**/dump-log.cluster-metadata-decoder.txt[.gz]` names its files in its
`Dumping ./...` lines (relative to `data/`); the same command is run in-process from `data/` and must
match byte for byte. The other modes are derived from the same reference text by DumpLogSegments'
rules (reference section 4.3): `--deep-iteration` drops the ` payload: ...` part, the shallow default
drops record lines, `--skip-record-metadata` keeps ` payload: ...` only (an empty line per control
record), and `--max-bytes N` keeps the batches that end within N bytes and drops the trailing-bytes line.
"""
from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run

REPO = Path(__file__).resolve().parents[3]
KRAFT_REAL = REPO.parent / "shared" / "fixtures" / "kraft-real"
EXPECTED = KRAFT_REAL / "expected-kafka-3.9"
DATA = KRAFT_REAL / "data"
GOLDEN = sorted(EXPECTED.rglob("dump-log.cluster-metadata-decoder.txt*")) if EXPECTED.is_dir() else []


def _need_fixtures():
    if not DATA.is_dir() or not GOLDEN:
        pytest.skip(f"real Kafka fixtures not found at {KRAFT_REAL} (../shared is absent)")


def read_expected(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")


def files_of(expected: str) -> list[str]:
    return [line[len("Dumping "):] for line in expected.splitlines() if line.startswith("Dumping ")]


def dump(argv: list[str], cwd: Path = DATA) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, argv, Environment(stdout=out, stderr=err, cwd=str(cwd)), prog="kafka-dump-log")
    return status, out.getvalue(), err.getvalue()


def _ids(paths):
    return [str(p.relative_to(EXPECTED)).replace("/dump-log.cluster-metadata-decoder.txt", "") for p in paths]


@pytest.fixture(params=GOLDEN or [None], ids=_ids(GOLDEN) or ["no-fixtures"])
def golden(request):
    _need_fixtures()
    expected = read_expected(request.param)
    return expected, ",".join(files_of(expected))


def test_cluster_metadata_decoder_matches_kafka(golden):
    expected, files = golden
    status, out, err = dump(["--cluster-metadata-decoder", "--files", files])
    assert err == ""
    assert status == 0
    assert out == expected  # byte for byte


def _record_lines(expected: str, keep):
    out = []
    for line in expected.splitlines():
        if line.startswith("| "):
            line = keep(line)
            if line is None:
                continue
        out.append(line)
    return "\n".join(out) + "\n"


def derive(expected: str, mode: str) -> str:
    if mode == "deep":
        return _record_lines(expected, lambda line: line.split(" payload: ", 1)[0])
    if mode == "shallow":
        return _record_lines(expected, lambda line: None)
    if mode == "skip":
        return _record_lines(expected, lambda line: " payload: " + line.split(" payload: ", 1)[1]
                             if " payload: " in line else "")
    if mode == "skip-deep":
        return _record_lines(expected, lambda line: "")
    raise AssertionError(mode)


MODES = {"deep": ["--deep-iteration"], "shallow": [], "skip": ["--cluster-metadata-decoder", "--skip-record-metadata"],
         "skip-deep": ["--deep-iteration", "--skip-record-metadata"]}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_derived_modes_match_kafka_rules(golden, mode):
    expected, files = golden
    status, out, err = dump(MODES[mode] + ["--files", files])
    assert (status, err) == (0, "")
    assert out == derive(expected, mode)


_BATCH = re.compile(r"^baseOffset: .* position: (\d+) .* size: (\d+) ")


def test_max_bytes_stops_at_the_limit_without_trailing_report(golden):
    expected, files = golden
    first = files.split(",")[0]
    section = expected.split("Dumping ")[1]
    ends = [int(m.group(1)) + int(m.group(2)) for m in map(_BATCH.match, section.splitlines()) if m]
    limit = ends[len(ends) // 2] + 1  # one byte into the next batch: that batch is not printed
    status, out, err = dump(["--max-bytes", str(limit), "--files", first])
    keep = [line for line in ("Dumping " + section).splitlines() if not line.startswith("| ")
            and (not (m := _BATCH.match(line)) or int(m.group(1)) + int(m.group(2)) <= limit)]
    assert (status, err) == (0, "")
    assert out == "\n".join(keep) + "\n"
