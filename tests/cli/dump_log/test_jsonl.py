"""`kafka-dump-log --output jsonl`: every line validates against the shipped JSON Schema, and the objects
round-trip: rebuilding every batch from its batch and record objects (metadata records re-encoded from
their `data`, control records from theirs) gives back the file's exact bytes.
"""
from __future__ import annotations

import base64
import io
import json
from importlib import resources
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.schema import json_name, load, snake_name
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records import control
from kraftsman.storage.records.batch import assemble_batch, build_batch, encode_record
from kraftsman.storage.records.metadata import METADATA_RECORD_TYPES, ApiMessageAndVersion, write_metadata_record

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
LOGS = sorted(p for p in DATA.rglob("*") if p.suffix in (".log", ".checkpoint")) if DATA.is_dir() else []


def schema():
    return json.loads(resources.files("kraftsman.cli").joinpath("schemas/dump-log-jsonl.schema.json").read_text())


def jsonl(argv, cwd) -> tuple[int, list[dict], str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, ["--output", "jsonl", *argv], Environment(stdout=out, stderr=err, cwd=str(cwd)))
    return status, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


# ---------------------------------------------------------------- JSON -> message (Kafka's JSON, read back)


def _value(spec, top, f_type: str, raw, version: int):
    if raw is None:
        return None
    if f_type.startswith("[]"):
        return [_value(spec, top, f_type[2:], e, version) for e in raw]
    if f_type == "uuid":
        return Uuid.from_string(raw)
    if f_type in ("bytes", "records"):
        return base64.b64decode(raw)
    if f_type in ("string", "bool", "float64") or f_type.startswith(("int", "uint")):
        return raw
    return _struct(spec, getattr(top, f_type), spec.struct(f_type).fields, version, raw, top)


def _struct(spec, cls, fields, version: int, obj: dict, top=None):
    kwargs = {snake_name(f.name): _value(spec, top or cls, f.type, obj[json_name(f.name)], version)
              for f in fields if version in f.versions and json_name(f.name) in obj}
    return cls(**kwargs)


def message_from_json(name: str, version: int, obj: dict):
    spec = load(name)
    return _struct(spec, codec.message_class(name), spec.fields, version, obj)


def value_of(record: dict) -> bytes | None:
    if record["data"] is None:
        return None if record["value"] is None else base64.b64decode(record["value"])
    if record["control"]:
        kind = record["control_type"]
        if kind in (control.ABORT, control.COMMIT):
            return record["data"]["version"].to_bytes(2, "big") + record["data"]["coordinatorEpoch"].to_bytes(4, "big")
        return codec.encode(control.SCHEMAS[kind], 0, message_from_json(control.SCHEMAS[kind], 0, record["data"]))
    name = METADATA_RECORD_TYPES[record["api_key"]]
    message = message_from_json(name, record["version"], record["data"])
    return write_metadata_record(ApiMessageAndVersion(message, record["version"], record["api_key"]))


def rebuild(batch: dict, records: list[dict]) -> bytes:
    body = b"".join(encode_record(
        r["offset"] - batch["base_offset"], None if r["key"] is None else base64.b64decode(r["key"]), value_of(r),
        [(h["key"], None if h["value"] is None else base64.b64decode(h["value"])) for h in r["headers"]],
        r["timestamp"] - batch["base_timestamp"]) for r in records)
    assert batch["compression"] == "none"
    return assemble_batch(body, batch["base_offset"], batch["last_offset"] - batch["base_offset"], batch["count"],
                          batch["attributes"], batch["base_timestamp"], batch["max_timestamp"],
                          batch["partition_leader_epoch"], batch["producer_id"], batch["producer_epoch"],
                          batch["base_sequence"])


def _rel(p: Path) -> str:
    return str(p.relative_to(DATA))


@pytest.mark.parametrize("log", LOGS or [None], ids=[_rel(p) for p in LOGS] or ["no-fixtures"])
def test_jsonl_validates_and_round_trips(log):
    if log is None:
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    status, objects, err = jsonl(["--cluster-metadata-decoder", "--files", _rel(log)], DATA)
    assert (status, err) == (0, "")
    assert objects[0]["kind"] == "file" and objects[-1]["kind"] == "file_end"
    assert objects[-1] == {"kind": "file_end", "schema": 1, "file": _rel(log), "valid_bytes": log.stat().st_size,
                           "trailing_bytes": 0, "corrupt": False}
    seen = set()
    for i, obj in enumerate(objects):  # every object kind and record type, plus a sample of the rest
        key = (obj["kind"], obj.get("type"), obj.get("version"))
        if key not in seen or i % 97 == 0:
            seen.add(key)
            validator.validate(obj)
    data = log.read_bytes()
    batches = [o for o in objects if o["kind"] == "batch"]
    records = {}
    for o in objects:
        if o["kind"] == "record":
            records.setdefault(o["batch_position"], []).append(o)
    assert sum(len(v) for v in records.values()) == sum(b["count"] for b in batches)
    for b in batches:
        assert rebuild(b, records[b["position"]]) == data[b["position"]:b["position"] + b["size"]]


def test_every_object_kind_validates(tmp_path):
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    value = write_metadata_record(ApiMessageAndVersion(codec.message_class("NoOpRecord")(), 0))
    good = build_batch([(None, value)], 0, timestamp=5)
    unknown = build_batch([(None, b"\x01\x63\x00abc")], 1, timestamp=6)
    (tmp_path / "00000000000000000000.log").write_bytes(good + unknown + b"\x00" * 30 + good)
    (tmp_path / "00000000000000000000.index").write_bytes(b"")
    status, objects, _ = jsonl(["--cluster-metadata-decoder", "--files",
                                "00000000000000000000.log,00000000000000000000.index"], tmp_path)
    assert status == 2
    kinds = [o["kind"] for o in objects]
    assert kinds == ["file", "batch", "record", "batch", "record", "error", "batch", "record", "file_end",
                     "skipped"]
    for o in objects:
        validator.validate(o)
    assert objects[4]["type"] == "UNKNOWN" and objects[4]["api_key"] == 99
    assert base64.b64decode(objects[4]["value"]) == b"\x01\x63\x00abc"
    assert objects[5]["position"] == len(good + unknown)
    assert objects[6]["position"] == len(good + unknown) + 30  # resumed at the next valid batch
    assert objects[8]["corrupt"] is True
