"""Golden: with KRAFTSMAN_KAFKA_VERSION=4.2, kafka-dump-log and `kafka-metadata-shell tree /` print what Kafka 4.2.0
printed for the real fixture files (../shared/fixtures/kafka-4.2/dump-log-and-shell/), the 4.0/4.1/4.2 ones included.

dump-log: byte for byte (LeaderChange control records decoded, as 4.1+ does). The shell: everything but /local's
version and commitId (kraftsman's own), as the 3.9 goldens; `*.RACE-EMPTY-IMAGE-*` files are not expectations.
"""
from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run as dump_log
from kraftsman.cli.shell.tool import run as shell

REPO = Path(__file__).resolve().parents[2]
EXPECTED = REPO.parent / "shared" / "fixtures" / "kafka-4.2" / "dump-log-and-shell"
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
DUMPS = sorted(EXPECTED.rglob("dump-log.cluster-metadata-decoder.txt*")) if EXPECTED.is_dir() else []
TREES = sorted(p for p in EXPECTED.rglob("*.metadata-shell-tree.txt") if "RACE" not in p.name) \
    if EXPECTED.is_dir() else []
ENV = {"KRAFTSMAN_KAFKA_VERSION": "4.2"}
FOUR_X = ("yacht-tracker", "Systems@f962029", "local-test-rig")


def _text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")


def _run(tool, argv, prog: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(tool, argv, Environment(stdout=out, stderr=err, cwd=str(DATA), env=dict(ENV)), prog=prog)
    return status, out.getvalue(), err.getvalue()


def _id(path: Path) -> str:
    return str(path.relative_to(EXPECTED))


@pytest.mark.skipif(not DUMPS, reason=f"Kafka 4.2 dump-log recordings not found under {EXPECTED} (../shared absent)")
@pytest.mark.parametrize("golden", DUMPS, ids=[_id(p) for p in DUMPS])
def test_dump_log_matches_kafka_4_2(golden: Path):
    expected = _text(golden)
    files = ",".join(line[len("Dumping "):] for line in expected.splitlines() if line.startswith("Dumping "))
    assert _run(dump_log, ["--cluster-metadata-decoder", "--files", files], "kafka-dump-log") == (0, expected, "")


def _mask_local(text: str) -> str:
    return re.sub(r"(?m)^(local:\n  commitId:\n    ).*\n(  version:\n    ).*$", r"\1X\n\2X", text)


@pytest.mark.skipif(not TREES, reason=f"Kafka 4.2 shell recordings not found under {EXPECTED} (../shared absent)")
@pytest.mark.parametrize("golden", TREES, ids=[_id(p) for p in TREES])
def test_tree_matches_kafka_4_2(golden: Path):
    snapshot = DATA / _id(golden).replace(".metadata-shell-tree.txt", "")
    status, out, err = _run(shell, ["--snapshot", str(snapshot), "tree", "/"], "kafka-metadata-shell")
    assert (status, err) == (0, "")
    assert _mask_local(out) == _mask_local(golden.read_text())


def test_the_4x_fixtures_are_covered_with_their_4x_fields():
    if not DUMPS:
        pytest.skip(f"Kafka 4.2 recordings not found under {EXPECTED}")
    four_x = [p for p in DUMPS + TREES if _id(p).startswith(FOUR_X)]
    assert four_x, "no 4.x fixture among the recordings"
    texts = "".join(_text(p) for p in four_x)
    for field in ("LeaderChange: {", '"name":"eligible.leader.replicas.version"', "Optional[4.", "finalized_"):
        assert field in texts, field


FOUR_X_LOGS = [("yacht-tracker/kafka-data", "4.0-IV3", False), ("Systems@f962029/kafka/data", "4.1-IV1", True),
               ("local-test-rig/kafka-data", "4.2-IV1", True)]


@pytest.mark.parametrize("folder,version,elr", FOUR_X_LOGS, ids=[f[1] for f in FOUR_X_LOGS])
def test_dump_log_and_tree_read_every_4x_fixture(folder: str, version: str, elr: bool):
    """The 4.0, 4.1 and 4.2 nodes' logs and newest snapshots: no error, and the 4.x fields shown (v2 partition
    records with their ELR fields, LeaderChange decoded, 4.x features, the metadata.version as an Optional)."""
    partition = DATA / folder / "__cluster_metadata-0"
    if not partition.is_dir():
        pytest.skip(f"{partition} not found (../shared absent)")
    logs = sorted(str(p.relative_to(DATA)) for p in partition.glob("*.log"))
    status, out, err = _run(dump_log, ["--cluster-metadata-decoder", "--files", ",".join(logs)], "kafka-dump-log")
    assert (status, err) == (0, "") and "Error" not in out
    assert '"type":"PARTITION_RECORD","version":2,"data":{' in out
    assert ('"eligibleLeaderReplicas":[' in out) is elr          # ELR is on by default from 4.1
    assert "LeaderChange: {" in out and "controlType: LEADER_CHANGE" not in out
    assert '"name":"transaction.version","featureLevel":2' in out
    newest = max(list(partition.glob("*.checkpoint")) or list(partition.glob("*.log")))
    status, out, err = _run(shell, ["--snapshot", str(newest), "tree", "/"], "kafka-metadata-shell")
    assert (status, err) == (0, "")
    assert f"metadataVersion:\n      Optional[{version}]" in out and "zkMigrationState" not in out
    assert "finalized_transaction.version:\n      2" in out and "acls:\n    byId:" in out
    assert "elr=[" in out and "lastKnownElr=[" in out
