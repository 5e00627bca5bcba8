"""The pipeline's pure per-file decoder, without Spark: for every real fixture its batches and records are
exactly what `kafka-dump-log --cluster-metadata-decoder --output jsonl` prints (run in-process), the typed
columns agree with storage's own message decoding, and bad files become `errors` rows.
"""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run
from kraftsman.cli.pipeline import tables
from kraftsman.cli.pipeline.decode import decode_file, file_type_of, identity
from kraftsman.cli.pipeline.typed import typed_from_json
from kraftsman.storage.log.segment import read_batches
from kraftsman.storage.protocol.uuids import uuid_str
from kraftsman.storage.records.metadata import METADATA_RECORD_TYPES, read_metadata_record

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
LOGS = sorted(p for p in DATA.rglob("*") if p.suffix in (".log", ".checkpoint")) if DATA.is_dir() else []
JSONL_RECORD = ["batch_position", "offset", "timestamp", "key_size", "value_size", "sequence", "headers", "key",
                "control", "control_type", "type", "api_key", "version", "data", "value", "error"]


def dump_jsonl(path: Path) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["--output", "jsonl", "--cluster-metadata-decoder", "--files", str(path)]
    run_command(run, argv, Environment(stdout=out, stderr=err, cwd=str(path.parent)))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def rows(path: Path, **kw) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"batches": [], "records": [], "errors": []}
    for table, row in decode_file(path, **kw):
        cols = tables.names(tables.BASE_TABLES[table])
        assert len(row) == len(cols)
        out[table].append(dict(zip(cols, row)))
    return out


def as_jsonl_record(row: dict) -> dict:
    obj = {k: row[k] for k in JSONL_RECORD}
    obj["headers"] = [{"key": k, "value": v} for k, v in obj["headers"]]
    obj["data"] = None if obj["data"] is None else json.loads(obj["data"])
    return obj


def assert_same_as_jsonl(path: Path) -> dict[str, list[dict]]:
    objects = dump_jsonl(path)
    got = rows(path)
    want_batches = [{k: v for k, v in o.items() if k not in ("kind", "schema", "file")}
                    for o in objects if o["kind"] == "batch"]
    batch_cols = [c for c in tables.names(tables.BATCHES) if c not in tables.names(tables.ORIGIN)]
    assert [{k: b[k] for k in batch_cols} for b in got["batches"]] == want_batches
    want_records = [{k: o[k] for k in JSONL_RECORD} for o in objects if o["kind"] == "record"]
    assert [as_jsonl_record(r) for r in got["records"]] == want_records
    jsonl_errors = {o["position"] for o in objects if o["kind"] == "error"}
    assert jsonl_errors <= {e["position"] for e in got["errors"]}
    return got


@pytest.mark.parametrize("log", LOGS or [None], ids=[str(p.relative_to(DATA)) for p in LOGS] or ["no-fixtures"])
def test_rows_equal_dump_log_jsonl(log):
    if log is None:
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")
    got = assert_same_as_jsonl(log)
    assert got["records"] and got["errors"] == []
    assert {r["file_type"] for r in got["records"]} == {file_type_of(log.name)}
    assert sum(b["count"] for b in got["batches"]) == len(got["records"])
    assert_typed_columns(log, got["records"])


def _values(path: Path) -> dict[int, bytes]:
    return {r.offset: r.value for b in read_batches(path) if not b.is_control for r in b.records()}


TYPED_CHECKED = ("PARTITION_RECORD", "TOPIC_RECORD", "CONFIG_RECORD", "REGISTER_BROKER_RECORD",
                 "BROKER_REGISTRATION_CHANGE_RECORD", "PARTITION_CHANGE_RECORD")


def assert_typed_columns(log: Path, records: list[dict]) -> None:
    """Typed columns (read from the decoded message) equal the data JSON read back, and storage's own
    message decoding, an independent source."""
    values = _values(log)
    typed_names = tables.names(tables.TYPED)
    for r in records:
        if r["data"] is not None and r["api_key"] in METADATA_RECORD_TYPES:
            assert tuple(r[c] for c in typed_names) == typed_from_json(METADATA_RECORD_TYPES[r["api_key"]],
                                                                      r["data"]), r
        if r["type"] not in TYPED_CHECKED:
            continue
        m = read_metadata_record(values[r["offset"]]).message
        if r["type"] == "PARTITION_RECORD":
            assert (r["partition_id"], r["leader"], r["leader_epoch"], r["isr"], r["replicas"]) == (
                m.partition_id, m.leader, m.leader_epoch, list(m.isr), list(m.replicas))
            assert r["topic_id"] == uuid_str(m.topic_id)
        elif r["type"] == "TOPIC_RECORD":
            assert (r["topic_name"], r["topic_id"]) == (m.name, uuid_str(m.topic_id))
        elif r["type"] == "CONFIG_RECORD":
            assert (r["config_resource_type"], r["config_resource_name"], r["config_name"]) == (
                m.resource_type, m.resource_name, m.name)
        elif r["type"] == "PARTITION_CHANGE_RECORD":
            # tagged fields at their default (leader -2 = unchanged, isr null) are absent from data
            assert (r["partition_id"], r["leader"]) == (m.partition_id, None if m.leader == -2 else m.leader)
            assert r["isr"] == (None if m.isr is None else list(m.isr))
            assert r["adding_replicas"] == (None if m.adding_replicas is None else list(m.adding_replicas))
        else:
            assert (r["broker_id"], r["broker_epoch"]) == (m.broker_id, m.broker_epoch)


def test_fixtures_hold_the_typed_record_kinds(kraft_real):
    """The typed-column checks above are not vacuous: the fixtures hold these record types."""
    kinds = {METADATA_RECORD_TYPES[v[1]] for log in LOGS for v in _values(log).values() if v}
    assert {"PartitionRecord", "TopicRecord", "ConfigRecord", "RegisterBrokerRecord",
            "PartitionChangeRecord", "BrokerRegistrationChangeRecord"} <= kinds


def test_identity_comes_from_meta_properties(kraft_real):
    log = next(p for p in LOGS if p.name.endswith(".log") and (p.parent.parent / "meta.properties").is_file())
    text = (log.parent.parent / "meta.properties").read_text("iso-8859-1")
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    assert identity(log) == (props["cluster.id"], int(props.get("node.id", props.get("broker.id"))))
    got = rows(log, cluster_id="c", node_id=7)
    assert {(r["cluster_id"], r["node_id"]) for r in got["records"] + got["batches"]} == {("c", 7)}


def test_a_corrupt_region_is_an_error_row_and_the_rest_is_decoded(kraft_real, tmp_path):
    log = min((p for p in LOGS if p.suffix == ".log" and p.stat().st_size > 100_000), key=lambda p: p.stat().st_size)
    batches = list(read_batches(log))
    middle = batches[len(batches) // 2]
    data = bytearray(log.read_bytes())
    data[middle.position + 8:middle.position + 12] = b"\xff\xff\xff\xf0"  # a negative batch length
    bad = tmp_path / log.name
    bad.write_bytes(bytes(data))
    got = assert_same_as_jsonl(bad)
    assert [e["position"] for e in got["errors"]][:1] == [middle.position]
    after = [b for b in got["batches"] if b["position"] > middle.position]
    assert after and after[-1]["position"] == batches[-1].position


def test_truncated_file_reports_the_tail(kraft_real, tmp_path):
    log = next(p for p in LOGS if p.suffix == ".log")
    bad = tmp_path / log.name
    bad.write_bytes(log.read_bytes()[:-7])
    got = rows(bad)
    last = list(read_batches(log))[-1]
    assert got["errors"] == [{"source": str(bad), "file_type": "log", "cluster_id": None, "node_id": None,
                              "position": last.position, "offset": None,
                              "reason": f"{last.size_in_bytes - 7} bytes at position {last.position} "
                                         "are not a whole record batch"}]


def test_unreadable_and_foreign_files_become_error_rows(tmp_path):
    missing = rows(tmp_path / "00000000000000000000.log", source="gone.log")
    assert [e["source"] for e in missing["errors"]] == ["gone.log"]
    assert "cannot read the file" in missing["errors"][0]["reason"]
    other = tmp_path / "quorum-state"
    other.write_text("{}")
    assert rows(other)["errors"][0]["reason"].startswith("not a metadata log segment")


def test_a_byte_range_holds_the_batches_starting_in_it(kraft_real, tmp_path):
    log = next(p for p in LOGS if p.suffix == ".log" and len(list(read_batches(p))) > 4)
    batches = list(read_batches(log))
    cut = batches[len(batches) // 2].position
    first, second = rows(log, end=cut), rows(log, start=cut)
    assert first["errors"] == second["errors"] == []
    assert [b["position"] for b in first["batches"] + second["batches"]] == [b.position for b in batches]


def test_copy_of_a_fixture_keeps_its_file_type(kraft_real, tmp_path):
    snap = next((p for p in LOGS if p.name.endswith(".checkpoint") and p.name != "bootstrap.checkpoint"), None)
    if snap is None:
        pytest.skip("no snapshot among the fixtures")
    shutil.copy(snap, tmp_path / snap.name)
    assert {r["file_type"] for r in rows(tmp_path / snap.name)["records"]} == {"snapshot"}
