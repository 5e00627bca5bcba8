"""Structured output: `cat/tree/ls/find --output json|yaml` from the typed records, validated against the schema.

On every real Kafka snapshot in the fixtures (Kafka 3.3 - 4.2), a broker, a partition and a topic printed with
`cat --output json` validate against their definitions in cli/schemas/metadata-shell.schema.json.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.shell.runner import run_line
from kraftsman.shell.state import ShellState
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .shell_fixtures import shell

DATA = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "kraft-real" / "data"
SNAPSHOTS = sorted(p for p in DATA.rglob("*.checkpoint") if p.name != "bootstrap.checkpoint") if DATA.is_dir() else []
SCHEMA = json.loads(resources.files("kraftsman.cli").joinpath("schemas/metadata-shell.schema.json").read_text())


def check(doc, definition: str | None = None) -> None:
    """Validate `doc` against the whole schema and, when given, against one of its $defs."""
    whole = jsonschema.Draft202012Validator(SCHEMA)
    assert not [e.message for e in whole.iter_errors(doc)], doc
    if definition:
        part = jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{definition}"})
        assert not [e.message for e in part.iter_errors(doc)], (definition, doc)


def _first(snapshot: Path, directory: str) -> str | None:
    status, out, _ = shell("--snapshot", str(snapshot), "ls", directory)
    names = out.split()
    return names[0] if status == 0 and names else None


@pytest.mark.skipif(not SNAPSHOTS, reason=f"real Kafka fixtures not found at {DATA}")
@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=[str(p.relative_to(DATA)) for p in SNAPSHOTS])
def test_broker_partition_and_topic_validate_on_real_snapshots(snapshot):
    broker, topic = _first(snapshot, "/image/cluster/brokers"), _first(snapshot, "/image/topics/byName")
    checked = 0
    if broker is not None:
        status, out, err = shell("--snapshot", str(snapshot), "cat", "--output", "json", f"/image/cluster/brokers/{broker}")
        doc = json.loads(out)
        check(doc, "broker")
        assert (status, err, doc["id"]) == (0, "", int(broker))
        checked += 1
    if topic is not None:
        path = f"/image/topics/byName/{topic}"
        status, out, _ = shell("--snapshot", str(snapshot), "cat", "-o", "json", path, path + "/0")
        topic_doc, partition_doc = _split(out)
        check(topic_doc, "topic")
        check(partition_doc, "partition")
        assert topic_doc["name"] == topic and topic_doc["partitions"]["0"] == partition_doc
        checked += 2
    status, out, _ = shell("--snapshot", str(snapshot), "-o", "json", "tree", "/image")
    check(json.loads(out))
    assert checked or status == 0


def _split(text: str) -> list:
    """Return the JSON documents printed one after the other."""
    decoder, docs, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        doc, i = decoder.raw_decode(text, i)
        docs.append(doc)
    return docs


def test_the_split_helper():
    assert _split('{\n  "a": 1\n}\n{\n  "b": 2\n}\n') == [{"a": 1}, {"b": 2}]


def _image():
    """An image with a broker, a topic, an ACL, a SCRAM credential and a delegation token."""
    delta = MetadataDelta()
    cls = codec.message_class
    topic_id = Uuid(b"\x01" * 16)
    records = [
        (cls("TopicRecord")(name="orders", topic_id=topic_id), 0),
        (cls("PartitionRecord")(partition_id=0, topic_id=topic_id, replicas=[1, 2], isr=[1], leader=1,
                                leader_epoch=3, partition_epoch=5), 0),
        (cls("AccessControlEntryRecord")(id=Uuid(b"\x02" * 16), resource_type=2, resource_name="orders",
                                         pattern_type=3, principal="User:alice", host="*", operation=3,
                                         permission_type=3), 0),
        (cls("UserScramCredentialRecord")(name="alice", mechanism=1, salt=b"salty", stored_key=b"k1",
                                          server_key=b"k2", iterations=4096), 0),
        (cls("DelegationTokenRecord")(owner="User:alice", requester="User:alice", renewers=["User:bob"],
                                      issue_timestamp=1, max_timestamp=3, expiration_timestamp=2, token_id="tok"), 0),
    ]
    for message, version in records:
        delta.replay(ApiMessageAndVersion(message, version))
    return delta.apply()


def _run(line: str) -> str:
    out = []
    assert run_line(ShellState(_image()), line, out.append) == 0, out
    return "".join(out)


TYPED = [
    ("cat -o json /image/topics/byName/orders/0", "partition",
     {"partition_id": 0, "replicas": [1, 2], "isr": [1], "leader": 1, "leader_epoch": 3, "partition_epoch": 5}),
    ("cat -o json /image/acls/AgICAgICAgICAgICAgICAg", "acl",
     {"resource_type": "TOPIC", "pattern_type": "LITERAL", "operation": "READ", "permission_type": "ALLOW"}),
    ("cat -o json /image/scram/SCRAM-SHA-256/alice", "scram",
     {"user": "alice", "mechanism": "SCRAM-SHA-256", "iterations": 4096}),
    ("cat -o json /image/delegationToken/tok", "delegation_token", {"owner": "User:alice", "renewers": ["User:bob"]}),
    ("cat -o json /image/provenance", "provenance", {}),
    ("ls -o json /image/topics", "ls_entry", {"path": "/image/topics", "children": ["byId", "byName"]}),
    ("find -o json /image/topics/byName", "find_paths", {}),
]


@pytest.mark.parametrize("line, definition, expected", TYPED, ids=[t[1] for t in TYPED])
def test_typed_shapes(line, definition, expected):
    doc = json.loads(_run(line))
    check(doc, definition)
    if isinstance(doc, dict):
        assert {k: doc[k] for k in expected} == expected


def test_no_secrets():
    text = _run("tree -o json /image")
    assert "salt" not in text and "stored_key" not in text and "hmac" not in text.lower()
    assert "73616c7479" not in text          # the salt's hex


def test_yaml_is_the_same_data():
    for line in ("cat -o json /image/topics/byName/orders", "tree -o json /image", "find -o json /image/acls"):
        assert list(yaml.safe_load_all(_run(line.replace("json", "yaml")))) == [json.loads(_run(line))]


REAL_LOG = DATA / "kafka-temp" / "data" / "kafka1" / "__cluster_metadata-0"


@pytest.mark.skipif(not REAL_LOG.is_dir(), reason=f"real Kafka fixtures not found at {REAL_LOG}")
@pytest.mark.parametrize("output", ["json", "yaml"])
def test_diff_validates_on_a_real_log_directory(output):
    import yaml

    status, out, err = shell("--directory", str(REAL_LOG), "diff", "--output", output, "21000", "--path", "/image")
    doc = json.loads(out) if output == "json" else yaml.safe_load(out)
    check(doc, "diff")
    kinds = {change["change"] for change in doc["changes"]}
    assert (status, err) == (0, "") and doc["from"]["provenance"]["offset"] == 21000 and "changed" in kinds
    broker_fields = [f["name"] for c in doc["changes"] if c["path"] == "/image/cluster/brokers/1"
                     for f in c.get("fields", [])]
    assert "epoch" in broker_fields, doc["changes"][:3]
