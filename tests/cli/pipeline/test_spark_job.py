"""The pipeline on a real local SparkSession (one for the whole module): the `records` table of every real
fixture equals `kafka-dump-log --output jsonl`, the derived tables match a hand-built scenario, a corrupt
file lands in `errors` while the rest is processed, and the command runs end to end.
"""
from __future__ import annotations

import io
import json
import random
from collections import Counter
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")
pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install -e '.[spark]')")
pytest.importorskip("pandas", reason="pandas is not installed (pip install -e '.[spark]')")

from kraftsman.cli.common.boundary import run_command  # noqa: E402
from kraftsman.cli.common.environment import Environment  # noqa: E402
from kraftsman.cli.dump_log.tool import run as dump_log  # noqa: E402
from kraftsman.cli.pipeline import inputs, spark_job  # noqa: E402
from kraftsman.cli.pipeline.command import run as pipeline  # noqa: E402
from kraftsman.cli.pipeline.tables import BASE_TABLES  # noqa: E402
from kraftsman.storage.log.segment import read_batches  # noqa: E402
from kraftsman.storage.protocol import codec  # noqa: E402
from kraftsman.storage.protocol.uuids import Uuid  # noqa: E402
from kraftsman.storage.records.batch import build_batch  # noqa: E402
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
T0 = 1_700_000_000_000
ORDERS, DOOMED, ACL = (Uuid(bytes([n]) * 16) for n in (1, 2, 3))


@pytest.fixture(scope="module")
def spark():
    session = spark_job.start_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


# ---------------------------------------------------------------- the scenario, built with kraftsman's writers


def rec(record_type: str, version: int = 0, **fields) -> tuple:
    message = codec.message_class(record_type)(**fields)
    return None, write_metadata_record(ApiMessageAndVersion(message, version))


def scenario_batches() -> list[list[tuple]]:
    """One list per batch: brokers register and unfence, two topics, broker 2 fenced and unfenced,
    orders-0 reassigned from [1, 2] to [1, 3], a partition added to orders, doomed deleted."""
    change = "BrokerRegistrationChangeRecord"
    return [
        [rec("FeatureLevelRecord", name="metadata.version", feature_level=20)],
        [rec("RegisterBrokerRecord", 3, broker_id=b, broker_epoch=10 + b, fenced=True,
             incarnation_id=Uuid(bytes([9 + b]) * 16)) for b in (1, 2, 3)],
        [rec(change, 1, broker_id=b, broker_epoch=10 + b, fenced=-1) for b in (1, 2, 3)],
        [rec("TopicRecord", name="orders", topic_id=ORDERS),
         rec("PartitionRecord", 1, partition_id=0, topic_id=ORDERS, replicas=[1, 2], isr=[1, 2], leader=1),
         rec("PartitionRecord", 1, partition_id=1, topic_id=ORDERS, replicas=[2, 3], isr=[2, 3], leader=2)],
        [rec("TopicRecord", name="doomed", topic_id=DOOMED),
         rec("PartitionRecord", 1, partition_id=0, topic_id=DOOMED, replicas=[3], isr=[3], leader=3)],
        [rec(change, 1, broker_id=2, broker_epoch=12, fenced=1),
         rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, isr=[1]),
         rec("PartitionChangeRecord", partition_id=1, topic_id=ORDERS, isr=[3], leader=3)],
        [rec(change, 1, broker_id=2, broker_epoch=12, fenced=-1)],
        [rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, replicas=[1, 3, 2], isr=[1, 3],
             adding_replicas=[3], removing_replicas=[2])],
        [rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, replicas=[1, 3], adding_replicas=[],
             removing_replicas=[])],
        [rec("PartitionRecord", 1, partition_id=2, topic_id=ORDERS, replicas=[3, 1], isr=[3, 1], leader=3)],
        [rec("ConfigRecord", resource_type=2, resource_name="orders", name="retention.ms", value="1000"),
         rec("ConfigRecord", resource_type=2, resource_name="orders", name="retention.ms", value=None)],
        [rec("AccessControlEntryRecord", id=ACL, resource_type=2, resource_name="orders", pattern_type=3,
             principal="User:alice", host="*", operation=3, permission_type=3)],
        [rec("RemoveAccessControlEntryRecord", id=ACL)],
        [rec("RemoveTopicRecord", topic_id=DOOMED)],
        [rec(change, 1, broker_id=3, broker_epoch=13, in_controlled_shutdown=1)],
        [rec("UnregisterBrokerRecord", broker_id=3, broker_epoch=13)],
        [rec("FeatureLevelRecord", name="metadata.version", feature_level=21)],
    ]


def write_scenario(folder: Path) -> Path:
    path, offset, parts = folder / "00000000000000000000.log", 0, []
    for i, values in enumerate(scenario_batches()):
        parts.append(build_batch(values, offset, timestamp=T0 + i, partition_leader_epoch=1))
        offset += len(values)
    path.write_bytes(b"".join(parts))
    return path


@pytest.fixture(scope="module")
def scenario(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("scenario")
    log = write_scenario(folder)
    corrupt_dir = folder / "corrupt"
    corrupt_dir.mkdir()
    data = bytearray(log.read_bytes())
    topic_batch = list(read_batches(log))[3].position
    data[topic_batch + 8:topic_batch + 12] = b"\x7f\xff\xff\xff"  # a batch length past the end of the file
    corrupt = corrupt_dir / log.name
    corrupt.write_bytes(bytes(data))
    junk = corrupt_dir / "00000000000000000100.log"
    junk.write_bytes(random.Random(7).randbytes(300))
    out = str(folder / "out")
    files, remote = inputs.expand([str(folder)])
    spark_job.run_job(spark, inputs.plan(files), remote, out)
    return {"log": log, "corrupt": corrupt, "junk": junk, "out": out}


def table(spark, out: str, name: str, source=None) -> list[dict]:
    df = spark_job.read_table(spark, out, name, "parquet", BASE_TABLES.get(name))
    rows = [r.asDict(recursive=True) for r in df.collect()]
    rows = [r for r in rows if source is None or r["source"] == str(source)]
    return sorted(rows, key=lambda r: (r["source"], r.get("offset") or 0))


# ---------------------------------------------------------------- the derived tables, hand-checked


def test_broker_events(spark, scenario):
    got = [(r["broker_id"], r["event"], r["fenced"], r["broker_epoch"])
           for r in table(spark, scenario["out"], "broker_events", scenario["log"])]
    assert got == [(1, "register", True, 11), (2, "register", True, 12), (3, "register", True, 13),
                   (1, "unfence", False, 11), (2, "unfence", False, 12), (3, "unfence", False, 13),
                   (2, "fence", True, 12), (2, "unfence", False, 12), (3, "controlled_shutdown", None, 13),
                   (3, "unregister", None, 13)]


def test_partition_history(spark, scenario):
    rows = table(spark, scenario["out"], "partition_history", scenario["log"])
    orders0 = [(r["change"], r["leader"], r["isr"], r["replicas"], r["adding_replicas"], r["removing_replicas"])
               for r in rows if r["topic_name"] == "orders" and r["partition_id"] == 0]
    assert orders0 == [("create", 1, [1, 2], [1, 2], [], []),
                       ("change", 1, [1], [1, 2], None, None),
                       ("change", 1, [1, 3], [1, 3, 2], [3], [2]),
                       ("change", 1, [1, 3], [1, 3], [], [])]
    orders1 = [(r["change"], r["leader"], r["isr"]) for r in rows if r["topic_name"] == "orders"
               and r["partition_id"] == 1]
    assert orders1 == [("create", 2, [2, 3]), ("change", 3, [3])]
    assert {(r["topic_name"], r["partition_id"]) for r in rows} == {("orders", 0), ("orders", 1), ("orders", 2),
                                                                   ("doomed", 0)}


def test_topic_lifecycle(spark, scenario):
    got = [(r["event"], r["topic_name"], r["partitions"], r["partition_ids"])
           for r in table(spark, scenario["out"], "topic_lifecycle", scenario["log"])]
    assert got == [("create", "orders", 2, [0, 1]), ("create", "doomed", 1, [0]),
                   ("partitions_added", "orders", 1, [2]), ("delete", "doomed", None, None)]


def test_config_acl_and_feature_changes(spark, scenario):
    out, log = scenario["out"], scenario["log"]
    assert [(r["resource_type_name"], r["resource_name"], r["name"], r["value"], r["action"])
            for r in table(spark, out, "config_changes", log)] == [
        ("TOPIC", "orders", "retention.ms", "1000", "set"), ("TOPIC", "orders", "retention.ms", None, "delete")]
    acls = [(r["action"], r["resource_type"], r["pattern_type"], r["operation"], r["permission_type"], r["principal"])
            for r in table(spark, out, "acl_changes", log)]
    assert acls == [("create", "TOPIC", "LITERAL", "READ", "ALLOW", "User:alice")] * 1 + [
        ("delete", "TOPIC", "LITERAL", "READ", "ALLOW", "User:alice")]
    assert [(r["feature"], r["level"], r["previous_level"]) for r in table(spark, out, "feature_changes", log)] == [
        ("metadata.version", 20, None), ("metadata.version", 21, 20)]


def test_corrupt_files_land_in_errors_and_the_rest_is_processed(spark, scenario):
    out = scenario["out"]
    errors = table(spark, out, "errors")
    assert {e["source"] for e in errors} == {str(scenario["corrupt"]), str(scenario["junk"])}
    records = Counter(r["source"] for r in table(spark, out, "records"))
    total = sum(len(b) for b in scenario_batches())
    assert records[str(scenario["log"])] == total
    assert 0 < records[str(scenario["corrupt"])] < total  # the batches after the damage are still read


def test_workers_writing_parquet_equal_sparks_writers(spark, scenario, tmp_path):
    """The local one-pass path (workers write the base tables with pyarrow) and Spark's own writers
    (the path of clusters, URIs and JSON Lines) give the same rows, types and errors."""
    files, remote = inputs.expand([str(scenario["log"].parent)])
    outs = {}
    for direct in (True, False):
        outs[direct] = str(tmp_path / f"direct-{direct}")
        spark_job.run_job(spark, inputs.plan(files), remote, outs[direct], derived=False, direct=direct)
    assert (tmp_path / "direct-True" / "records" / "_SUCCESS").exists()
    for name in ("records", "batches", "errors"):
        frames = {d: spark_job.read_table(spark, out, name, "parquet") for d, out in outs.items()}
        assert frames[True].schema == frames[False].schema, name
        rows = {d: sorted(map(repr, f.collect())) for d, f in frames.items()}
        assert rows[True] == rows[False] and rows[True], name


def test_an_output_folder_that_cannot_be_written_is_one_line_and_exit_1(spark, scenario, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out, err = io.StringIO(), io.StringIO()
    argv = [str(scenario["log"]), "-o", str(blocker / "tables")]
    status = run_command(pipeline, argv, Environment(stdout=out, stderr=err), prog="kafka-metadata-export")
    assert status == 1
    assert err.getvalue().splitlines()[-1] == (
        f"kafka-metadata-export: cannot write the tables to {blocker / 'tables'}: Not a directory")


def test_a_second_run_replaces_the_tables(spark, scenario, tmp_path):
    """Idempotent output: running again over other files leaves only the new run's rows."""
    out = str(tmp_path / "out")
    spark_job.run_job(spark, inputs.plan([str(scenario["corrupt"])]), [], out, derived=False)
    spark_job.run_job(spark, inputs.plan([str(scenario["log"])]), [], out, derived=False)
    records = Counter(r["source"] for r in table(spark, out, "records"))
    assert records == {str(scenario["log"]): sum(len(b) for b in scenario_batches())}
    assert table(spark, out, "errors") == []
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["batches", "errors", "records"]


# ---------------------------------------------------------------- the real fixtures against kafka-dump-log


def jsonl_records(path: Path) -> list[dict]:
    out = io.StringIO()
    argv = ["--output", "jsonl", "--cluster-metadata-decoder", "--files", str(path)]
    run_command(dump_log, argv, Environment(stdout=out, stderr=io.StringIO()))
    return [o for o in map(json.loads, out.getvalue().splitlines()) if o["kind"] == "record"]


def millis(ts) -> int:
    """Return Kafka's milliseconds for a TIMESTAMP read back (a naive local datetime; null is -1)."""
    return -1 if ts is None else round(ts.timestamp() * 1000)


def test_records_table_equals_dump_log_jsonl_on_every_fixture(spark, tmp_path, kraft_real):
    out = str(tmp_path / "out")
    files, remote = inputs.expand([str(DATA)])
    counts = spark_job.run_job(spark, inputs.plan(files), remote, out, derived=False)
    records = spark_job.read_table(spark, out, "records", "parquet")
    by_type = {(r["source"], r["type"]): r["count"] for r in records.groupBy("source", "type").count().collect()}
    sample = sorted(files, key=len)[::9]
    for path in files:
        want = jsonl_records(Path(path))
        assert {k: n for (s, k), n in by_type.items() if s == path} == Counter(o["type"] for o in want), path
        if path in sample:
            got = [r.asDict(recursive=True) for r in records.where(records.source == path).orderBy("offset").collect()]
            assert [(r["offset"], r["type"], r["version"], millis(r["timestamp"]), r["value"], r["error"],
                     None if r["data"] is None else json.loads(r["data"])) for r in got] == [
                (o["offset"], o["type"], o["version"], o["timestamp"], o["value"], o["error"], o["data"])
                for o in want]
    assert counts["errors"] == 0 and counts["records"] == sum(by_type.values())


def test_command_end_to_end_writes_json_lines(spark, scenario, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    argv = [str(scenario["log"]), "-o", str(tmp_path / "tables"), "--format", "jsonl",
            "--conf", "spark.sql.shuffle.partitions=2"]
    status = run_command(pipeline, argv, Environment(stdout=out, stderr=err), prog="kafka-metadata-export")
    assert status == 0, err.getvalue()
    total = sum(len(b) for b in scenario_batches())
    assert f"records={total} " in out.getvalue()
    lines = (tmp_path / "tables" / "records").glob("cluster_id=*/part-*.json")
    rows = [json.loads(line) for f in lines for line in f.read_text().splitlines()]
    assert sorted(r["offset"] for r in rows) == list(range(total))
    assert (tmp_path / "tables" / "broker_events").is_dir()


def test_uris_are_read_by_spark_and_decoded_alike(spark, scenario):
    """The URI path (Spark's binaryFile source, then the same decoder) gives the records of the local path."""
    uri = "file://" + str(scenario["log"].parent)
    files, missing = spark_job.list_uris(spark, [uri, uri + "/gone"])
    assert len(files) == 3 and missing == [uri + "/gone"]
    frames = spark_job.inputs_frame(spark, [], files)
    rows = spark_job._decoded(frames, spark_job.RECORDS_ONLY, spark_job.RECORDS).collect()
    good = sorted(r["offset"] for r in rows if r["source"].endswith("/00000000000000000000.log")
                  and "/corrupt/" not in r["source"])
    assert good == list(range(sum(len(b) for b in scenario_batches())))


def test_a_missing_file_is_an_error_row_not_a_failed_job(spark, scenario, tmp_path):
    """A path that is gone by the time a worker reads it lands in `errors`; the other files are decoded."""
    gone = str(tmp_path / "gone" / "00000000000000000000.log")
    out = str(tmp_path / "out")
    spark_job.run_job(spark, inputs.plan([str(scenario["log"]), gone]), [], out)
    errors = table(spark, out, "errors")
    assert [(e["source"], e["reason"]) for e in errors] == [(gone, "cannot read the file: No such file or directory")]
    records = Counter(r["source"] for r in table(spark, out, "records"))
    assert records == {str(scenario["log"]): sum(len(b) for b in scenario_batches())}


# ---------------------------------------------------------------- tables people query


def test_timestamps_are_timestamp_columns_in_utc(spark, scenario):
    """broker_events (and every table with a time) read back has a TIMESTAMP column holding Kafka's time."""
    from pyspark.sql.types import TimestampType

    events = spark_job.read_table(spark, scenario["out"], "broker_events", "parquet")
    assert isinstance(events.schema["timestamp"].dataType, TimestampType)
    batches = spark_job.read_table(spark, scenario["out"], "batches", "parquet", BASE_TABLES["batches"])
    assert isinstance(batches.schema["max_timestamp"].dataType, TimestampType)
    utc = events.selectExpr("date_format(timestamp, 'yyyy-MM-dd HH:mm:ss.SSS') AS t").where(
        f"source = '{scenario['log']}'").orderBy("t").first()["t"]
    assert utc == "2023-11-14 22:13:20.001"  # T0 + 1 ms: the brokers' batch, in UTC (the session's zone)


def write_identified(folder: Path, cluster_id: str) -> Path:
    """Write the scenario log below folder/__cluster_metadata-0 with a meta.properties one level up."""
    log_dir = folder / "__cluster_metadata-0"
    log_dir.mkdir(parents=True)
    (folder / "meta.properties").write_text(f"version=1\ncluster.id={cluster_id}\nnode.id=1\n")
    return write_scenario(log_dir)


def test_tables_are_partitioned_by_cluster_id(spark, scenario, tmp_path):
    write_identified(tmp_path / "a", "ClusterAAAAAAAAAAAAAAAA")
    write_identified(tmp_path / "b", "ClusterBBBBBBBBBBBBBBBB")
    out = tmp_path / "out"
    files, remote = inputs.expand([str(tmp_path / "a"), str(tmp_path / "b"), str(scenario["junk"])])
    spark_job.run_job(spark, inputs.plan(files), remote, str(out))
    for name in ("records", "batches", "errors", "broker_events", "partition_history", "topic_lifecycle"):
        folders = {p.name for p in (out / name).iterdir() if p.is_dir()}
        want = {"cluster_id=ClusterAAAAAAAAAAAAAAAA", "cluster_id=ClusterBBBBBBBBBBBBBBBB"}
        assert folders == ({"cluster_id=unknown"} if name == "errors" else want), name  # the junk has no identity
    errors = table(spark, str(out), "errors")
    assert [(e["source"], e["cluster_id"], e["position"]) for e in errors][:1] == [
        (str(scenario["junk"]), "unknown", 0)]
    assert all(e["reason"] for e in errors)
    events = spark_job.read_table(spark, str(out), "broker_events", "parquet")
    by_cluster = {r["cluster_id"]: r["count"] for r in events.groupBy("cluster_id").count().collect()}
    assert by_cluster == {"ClusterAAAAAAAAAAAAAAAA": 10, "ClusterBBBBBBBBBBBBBBBB": 10}


def counts(spark, out: str, fmt: str = "parquet") -> dict[str, int]:
    names = list(BASE_TABLES) + ["broker_events", "partition_history", "topic_lifecycle", "config_changes"]
    return {n: spark_job.read_table(spark, out, n, fmt, BASE_TABLES.get(n)).count() for n in names}


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])  # the workers' writers, then Spark's
def test_append_is_idempotent_by_source_file(spark, scenario, tmp_path, fmt):
    """An append re-run over the same files adds nothing; a new file adds its rows and nothing else."""
    out = str(tmp_path / "out")
    first = [str(scenario["log"]), str(scenario["corrupt"])]
    spark_job.run_job(spark, inputs.plan(first), [], out, fmt, mode="append")
    once = counts(spark, out, fmt)
    added = spark_job.run_job(spark, inputs.plan(first), [], out, fmt, mode="append")
    assert counts(spark, out, fmt) == once and set(added.values()) == {0}
    spark_job.run_job(spark, inputs.plan(first + [str(scenario["junk"])]), [], out, fmt, mode="append")
    after = counts(spark, out, fmt)
    assert after["errors"] > once["errors"] and after["records"] == once["records"]
    assert after["broker_events"] == once["broker_events"] > 0
