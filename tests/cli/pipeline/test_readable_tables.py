"""Every table the pipeline writes opens in pandas and pyarrow as they are usually called (pd.read_parquet(dir),
pq.read_table(dir)), with and without a meta.properties beside the segments, through both write paths (the
workers' own Parquet writer, Spark's writers); empty tables keep their columns.
"""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")
pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install -e '.[spark]')")
pd = pytest.importorskip("pandas", reason="pandas is not installed (pip install -e '.[spark]')")

import pyarrow.parquet as pq  # noqa: E402

from kraftsman.cli.pipeline import inputs, spark_job  # noqa: E402
from kraftsman.cli.pipeline.derived import DERIVED  # noqa: E402
from kraftsman.cli.pipeline.tables import BASE_TABLES, UNKNOWN_CLUSTER, names  # noqa: E402

from .test_spark_job import write_scenario  # noqa: E402

TABLES = [*BASE_TABLES, *DERIVED]
CLUSTER = "ClusterAAAAAAAAAAAAAAAA"


@pytest.fixture(scope="module")
def spark():
    session = spark_job.start_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


def _export(spark, folder: Path, out: Path, direct: bool) -> Path:
    files, remote = inputs.expand([str(folder)])
    spark_job.run_job(spark, inputs.plan(files), remote, str(out), direct=direct)
    return out


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Path:
    """A folder holding the scenario's segment and nothing else (no meta.properties anywhere near it)."""
    folder = tmp_path_factory.mktemp("bare") / "__cluster_metadata-0"
    folder.mkdir()
    write_scenario(folder)
    return folder


@pytest.fixture(scope="module")
def identified(tmp_path_factory) -> Path:
    """The scenario's segment below a log directory whose meta.properties names cluster CLUSTER, node 3."""
    root = tmp_path_factory.mktemp("identified")
    (root / "meta.properties").write_text(f"version=1\ncluster.id={CLUSTER}\nnode.id=3\n")
    folder = root / "__cluster_metadata-0"
    folder.mkdir()
    write_scenario(folder)
    return folder


@pytest.mark.parametrize("direct", [True, False], ids=["workers-write", "spark-writes"])
@pytest.mark.parametrize("which, cluster", [("bare", UNKNOWN_CLUSTER), ("identified", CLUSTER)])
def test_pandas_and_pyarrow_open_every_table(spark, request, tmp_path, which, cluster, direct):
    out = _export(spark, request.getfixturevalue(which), tmp_path / "out", direct)
    for table in TABLES:
        expected = spark_job.read_table(spark, str(out), table, "parquet").count()
        arrow = pq.read_table(str(out / table))
        frame = pd.read_parquet(out / table)
        assert arrow.num_rows == len(frame) == expected, table
        kind = arrow.schema.field("cluster_id").type   # pyarrow reads a partition column as dictionary<string>
        assert pa.types.is_string(getattr(kind, "value_type", kind)), table
        if expected:
            assert set(frame["cluster_id"]) == {cluster}, table
        if table in BASE_TABLES:
            assert sorted(frame.columns) == sorted(names(BASE_TABLES[table])), table


def test_an_empty_table_keeps_its_columns_and_spark_still_reads_it(spark, tmp_path):
    folder = tmp_path / "__cluster_metadata-0"
    folder.mkdir()
    (folder / "00000000000000000000.log").write_bytes(b"")   # no batches: every table is empty
    out = _export(spark, folder, tmp_path / "out", direct=True)
    for table in TABLES:
        frame = pd.read_parquet(out / table)
        assert len(frame) == 0 and {"cluster_id", "source", "file_type"} <= set(frame.columns), table
        assert spark_job.read_table(spark, str(out), table, "parquet").count() == 0, table
    events = pq.read_table(str(out / "broker_events")).schema
    assert events.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert events.field("broker_id").type == pa.int32()


def test_appending_to_an_empty_table_keeps_it_readable(spark, tmp_path, identified):
    empty = tmp_path / "empty" / "__cluster_metadata-0"
    empty.mkdir(parents=True)
    (empty / "00000000000000000000.log").write_bytes(b"")
    out = _export(spark, empty, tmp_path / "out", direct=True)
    files, remote = inputs.expand([str(identified)])
    spark_job.run_job(spark, inputs.plan(files), remote, str(out), mode="append")
    records = pd.read_parquet(out / "records")
    assert len(records) == spark_job.read_table(spark, str(out), "records", "parquet").count() > 0
    assert set(records["cluster_id"]) == {CLUSTER}
