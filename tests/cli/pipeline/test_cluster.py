"""The pipeline on a real Spark standalone cluster: a master and two one-core workers started from the
installed pyspark on 127.0.0.1 (standalone.py), `kafka-metadata-export --master spark://...` run as a
user runs it (a process of its own, the project's Python as PYSPARK_PYTHON) over every shared fixture,
and every table compared row for row with the same command in local mode. The URI path (file://
inputs listed by Spark and read by the executors) is compared the same way.

Local mode writes the base tables with the workers' own Parquet writer in one pass; the cluster uses
Spark's writers in two passes, so the comparison also holds the two write paths together.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")
pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install -e '.[spark]')")

import pyarrow.dataset as ds  # noqa: E402

from kraftsman.cli.pipeline.derived import DERIVED  # noqa: E402
from kraftsman.cli.pipeline.tables import BASE_TABLES  # noqa: E402

from .standalone import standalone_cluster  # noqa: E402

TABLES = [*BASE_TABLES, *DERIVED]
JOB_TIMEOUT_S = 600


def export(argv: list[str]) -> subprocess.CompletedProcess:
    """Run kafka-metadata-export in its own process (bounded in time); return what it did."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    code = "from kraftsman.cli.pipeline.command import main; main()"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
                          timeout=JOB_TIMEOUT_S, stdin=subprocess.DEVNULL)


def exported(argv: list[str]) -> str:
    """Run the export, check it succeeded quietly (only our own lines on stderr); return its stdout."""
    done = export(argv)
    assert done.returncode == 0, done.stderr[-3000:]
    noise = [line for line in done.stderr.splitlines() if not line.startswith("pipeline: ")]
    assert noise == [], "Spark's own lines reached stderr"
    return done.stdout


def rows(out: Path, table: str) -> list[str]:
    """Return a table's rows (partition column included, file:// scheme of sources dropped), sorted."""
    partitioning = ds.HivePartitioning.discover(null_fallback="__HIVE_DEFAULT_PARTITION__")
    data = ds.dataset(str(out / table), format="parquet", partitioning=partitioning,
                      exclude_invalid_files=True).to_table()
    columns = sorted(data.column_names)
    out_rows = []
    for row in data.to_pylist():
        if isinstance(row.get("source"), str) and row["source"].startswith("file:"):
            row["source"] = "/" + row["source"][len("file:"):].lstrip("/")
        out_rows.append(repr([row[c] for c in columns]))
    return sorted(out_rows)


@pytest.fixture(scope="module")
def local_tables(kraft_real, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "tables"
    exported(["--master", "local[2]", "-o", str(out), str(kraft_real / "data")])
    return out


@pytest.fixture(scope="module")
def cluster(kraft_real, tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone"), workers=2) as url:
        yield url


def assert_same_tables(got: Path, want: Path) -> None:
    for table in TABLES:
        mine, reference = rows(got, table), rows(want, table)
        assert len(mine) == len(reference), table
        assert mine == reference, table
    assert len(rows(want, "records")) > 300_000 and len(rows(want, "broker_events")) > 0


def test_a_standalone_cluster_writes_the_tables_of_local_mode(kraft_real, cluster, local_tables, tmp_path):
    out = tmp_path / "tables"
    stdout = exported(["--master", cluster, "--conf", "spark.executor.memory=768m", "-o", str(out),
                       str(kraft_real / "data")])
    assert "errors=0" in stdout
    assert_same_tables(out, local_tables)


def test_uris_read_by_the_executors_give_the_tables_of_local_mode(kraft_real, cluster, local_tables, tmp_path):
    out = tmp_path / "tables"
    exported(["--master", cluster, "--conf", "spark.executor.memory=768m", "-o", str(out),
              "file://" + str(kraft_real / "data")])
    assert_same_tables(out, local_tables)
