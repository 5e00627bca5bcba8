"""Every machine-readable output validates against its JSON Schema in cli/schemas/ (shipped as package data).

Each tool's commands run in-process (the fake servers and helpers of the tools' own tests) over their
success, refusal and error cases; every JSON document printed is validated, its "status" is the exit
status, and every shape (each branch of the schema's top-level oneOf) is seen at least once.
"""
from __future__ import annotations

import copy
import json
from importlib import resources

import jsonschema
import pytest

from kraftsman.cli.docs import pages as docs
from kraftsman.shell.commands import COMMANDS as SHELL_COMMANDS

from ..controller.server.sync_fakes import FakeServer, body
from .cluster.test_tool import RANGES as CLUSTER_RANGES
from .cluster.test_tool import describe_handler, kc, unregister_handler
from .features.test_tool import features_server, kf, update_server
from .quorum.test_tool import DIR, VOTER_RANGES, controller_config, mq, voter_handler  # noqa: F401 (fixture)
from .quorum.test_tool import RANGES as QUORUM_RANGES
from .quorum.test_tool import handler as quorum_handler
from .shell.test_cli import shell
from .storage.test_tool import CID, config, storage

SCHEMAS = {"storage", "cluster", "metadata-quorum", "metadata-shell", "dump-log-jsonl", "features", "topics", "configs",
           "acls",
           "broker-api-versions", "leader-election", "reassign-partitions"}


def schema(name: str) -> dict:
    return json.loads(resources.files("kraftsman.cli").joinpath(f"schemas/{name}.schema.json").read_text())


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(name))


def branch(name: str, doc) -> str:
    """Return the $defs name of the single top-level oneOf branch `doc` matches."""
    whole = schema(name)
    found = []
    for ref in (b["$ref"] for b in whole["oneOf"]):
        part = {k: v for k, v in whole.items() if k != "oneOf"} | {"$ref": ref}
        if jsonschema.Draft202012Validator(part).is_valid(doc):
            found.append(ref.rsplit("/", 1)[1])
    assert len(found) == 1, (doc, found)
    return found[0]


def documents(text: str) -> tuple[list, list[str]]:
    """Split stdout into the JSON documents printed one after the other and the other (text) lines."""
    decoder, docs_, other, i = json.JSONDecoder(), [], [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        try:
            obj, i = decoder.raw_decode(text, i)
            docs_.append(obj)
        except json.JSONDecodeError:
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            other.append(text[i:end])
            i = end
    return docs_, other


class Checker:
    """Validate one-object outputs of a tool and remember which shapes were seen."""

    def __init__(self, name: str, one_line: bool):
        self.name, self.one_line, self.validator, self.seen = name, one_line, validator(name), set()

    def __call__(self, result, status: int, shape: str | None = None) -> dict:
        code, out, err = result
        assert code == status, result
        (doc,), other = documents(out)
        assert other == [], out
        errors = [e.message for e in self.validator.iter_errors(doc)]
        assert not errors, (doc, errors)
        assert doc["status"] == code
        if self.one_line:
            assert out.count("\n") == 1 and out.endswith("\n") and err == "", result
        found = branch(self.name, doc)
        assert shape is None or found == shape, (doc, found)
        self.seen.add(found)
        return doc

    def all_seen(self) -> None:
        assert self.seen == {b["$ref"].rsplit("/", 1)[1] for b in schema(self.name)["oneOf"]}


# ---------------------------------------------------------------- kafka-storage


def test_storage_info_and_format(tmp_path):
    check = Checker("storage", one_line=True)
    data = tmp_path / "data"
    cfg = config(tmp_path)
    doc = check(storage("info", "-c", cfg, "--output", "json"), 1, "info")            # missing dir
    assert doc["directories"][0]["state"] == "missing"
    doc = check(storage("format", "-c", cfg, "-t", CID, "--output", "json"), 0, "format")
    assert doc["directories"][0]["state"] == "formatted_now" and doc["messages"]
    check(storage("info", "-c", cfg, "--output", "json"), 0, "info")
    doc = check(storage("format", "-c", cfg, "-t", CID, "--output", "json"), 1, "format")   # already, no -g
    assert doc["directories"][0]["state"] == "already_formatted" and doc["metadata_version"] is None
    check(storage("format", "-c", cfg, "-t", CID, "-g", "--output", "json"), 0, "format")
    check(storage("format", "-c", cfg, "-t", "other", "-g", "--output", "json"), 3, "format")   # foreign cluster
    # info: missing, a file, an empty folder, directories of two clusters (Kafka's 1), a node.id other than the
    # config's (3), an unreadable meta.properties
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    check(storage("info", "-c", config(tmp_path, log_dirs=f"{tmp_path}/missing,{tmp_path}/file,{tmp_path}/empty"),
                  "--output", "json"), 1)
    storage("format", "-c", config(tmp_path, log_dirs=str(tmp_path / "b")), "-t", "other")
    check(storage("info", "-c", config(tmp_path, log_dirs=f"{data},{tmp_path}/b"), "--output", "json"), 1)
    check(storage("info", "-c", config(tmp_path, node_id="2"), "--output", "json"), 3, "info")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "meta.properties").write_text("version=7\n")
    doc = check(storage("info", "-c", config(tmp_path, log_dirs=str(tmp_path / "bad")), "--output", "json"), 1)
    assert doc["directories"][0]["state"] == "error"
    doc = check(storage("format", "-c", config(tmp_path, log_dirs=f"{tmp_path}/bad,{tmp_path}/file"), "-t", CID,
                        "--output", "json"), 1)
    assert {d["state"] for d in doc["directories"]} == {"unreadable"}
    # format errors found before planning: legacy config, bad release version, no quorum voters
    for props, args in (({"process_roles": None, "zookeeper_connect": "zk:2181", "listeners": "PLAINTEXT://:9092",
                          "controller_listener_names": None}, ()), ({}, ("-r", "9.9-IV9")),
                        ({"controller_quorum_voters": None}, ())):
        doc = check(storage("format", "-c", config(tmp_path, log_dirs=str(tmp_path / "new"), **props), "-t", CID,
                            *args, "--output", "json"), 1, "format")
        assert doc["problems"] and doc["metadata_version"] is None
    check.all_seen()


def test_storage_errors_before_the_command_print_no_json(tmp_path):
    # documented in the schema: a missing --config file is one line on stderr, exit 1, no JSON; a bad command
    # line with --output json is Kafka's 1 as without it (common.boundary.usage_exit), usage on stderr, no JSON
    status, out, err = storage("info", "-c", str(tmp_path / "nope.properties"), "--output", "json")
    assert (status, out) == (1, "") and err.count("\n") == 1
    status, out, err = storage("format", "-c", config(tmp_path), "--output", "json")      # -t missing
    assert (status, out) == (1, "") and "usage:" in err
    for props in ({"node_id": "x"}, {"process_roles": None}, {"node_id": None}):           # KafkaConfig refuses
        for command in (("info",), ("format", "-t", CID)):
            status, out, err = storage(*command, "-c", config(tmp_path, **props), "--output", "json")
            assert (status, out) == (1, "") and err.count("\n") == 1


# ---------------------------------------------------------------- kafka-cluster


def test_cluster_outputs(monkeypatch):
    from kraftsman.cli.cluster import health as cluster_health

    check = Checker("cluster", one_line=True)
    j = ("--output", "json")
    with FakeServer(describe_handler(brokers=((5, "b5", 9095, "r1"), (4, "b4", 9094, None))),
                    ranges=CLUSTER_RANGES) as server:
        for flag in ("-b", "-C"):
            check(kc("cluster-id", flag, server.address, *j), 0, "cluster_id")
            doc = check(kc("list-endpoints", flag, server.address, *j), 0, "endpoints")
            assert [e["id"] for e in doc["endpoints"]] == [4, 5]
        check(kc("list-endpoints", "-b", server.address, "--include-fenced-brokers", *j), 0, "endpoints_unsupported")
        check(kc("list-endpoints", "-C", server.address, "--include-fenced-brokers", *j), 1, "error")
        check(kc("cluster-id", "-b", server.address, "--timeout", "0", *j), 1, "error")
        doc = check(kc("describe-brokers", "-b", server.address, *j), 0, "describe_brokers")
        assert [(b["id"], b["start_time_ms"], b["epoch"]) for b in doc["brokers"]] == [(4, -1, None), (5, -1, None)]
        assert check(kc("wait", "--id", "4", "--state", "unfenced", "-b", server.address, *j), 0, "wait")["reached"]
        check(kc("wait", "--id", "9", "--state", "unfenced", "-b", server.address, "--timeout", "1", *j), 75, "error")
        check(kc("health", "-b", server.address, *j), 1, "error")
        monkeypatch.setattr(cluster_health, "check", lambda args, ctx, deadline: cluster_health.Report(
            reasons=["no quorum leader: an election is going on"]))
        assert check(kc("health", "-C", server.address, *j), 5, "health")["healthy"] is False
    with FakeServer(lambda header, request: body("MetadataResponse", cluster_id=None, controller_id=-1),
                    ranges={18: (0, 4), 3: (0, 12)}) as server:
        assert check(kc("cluster-id", "-b", server.address, *j), 0, "cluster_id")["cluster_id"] is None
    with FakeServer(unregister_handler(0, 102, 102), ranges=CLUSTER_RANGES) as server:
        check(kc("unregister", "--id", "7", "-b", server.address, *j), 0, "unregistered")
        check(kc("unregister", "--id", "9", "-b", server.address, *j), 1, "error")
        doc = check(kc("unregister", "--id", "9", "-b", server.address, "--missing-ok", *j), 0, "unregistered")
        assert doc["result"] == "not_registered"
        assert check(kc("unregister", "--id", "4", "-b", server.address, "--dry-run", *j), 0, "dry_run")["active"]
        check(kc("unregister", "--id", "4", "-b", server.address, "--require-fenced", *j), 4, "error")
    with FakeServer(unregister_handler(), ranges={18: (0, 4), 60: (0, 1)}) as server:
        assert check(kc("unregister", "--id", "4", "-b", server.address, *j), 0)["result"] == "unsupported"
    with FakeServer(ranges={18: (0, 4)}) as server:
        check(kc("list-endpoints", "-b", server.address, *j), 0, "endpoints_unsupported")
        check(kc("cluster-id", "-C", server.address, *j), 1, "error")
    with FakeServer() as server:
        closed = server.address
    check(kc("cluster-id", "-b", closed, "--timeout", "3", *j), 69, "error")
    check(kc("unregister", "--id", "1", "-b", closed, "--timeout", "3", *j), 69, "error")
    check(kc("cluster-id", "-b", "a:1", "-c", "/nonexistent/admin.properties", *j), 1, "error")
    check.all_seen()


def test_cluster_bad_flags_print_no_json():
    status, out, err = kc("unregister", "--id", "x", "-b", "a:1", "--output", "json")
    assert (status, out) == (1, "") and "invalid int value" in err


# ---------------------------------------------------------------- kafka-metadata-quorum


def test_quorum_describe_outputs():
    check = Checker("metadata-quorum", one_line=True)
    with FakeServer(quorum_handler(), ranges=QUORUM_RANGES) as server:
        for argv, shape in ((("--output", "json", "describe", "--status"), "status"),
                            (("describe", "--status", "--output=json"), "status"),
                            (("--output", "json", "describe", "--replication"), "replication"),
                            (("--output", "json", "describe", "--replication", "--human-readable"), "replication")):
            check(mq("--bootstrap-controller", server.address, *argv), 0, shape)
        for argv in (("describe",), ("describe", "--status", "--replication"), ("describe", "--status",
                                                                                 "--human-readable")):
            check(mq("--bootstrap-controller", server.address, "--output", "json", *argv), 1, "error")
    with FakeServer(quorum_handler(directory=False), ranges=QUORUM_RANGES) as server:
        doc = check(mq("--bootstrap-server", server.address, "--output", "json", "describe", "--status"), 0, "status")
        assert doc["current_voters"][0]["directory_id"] is None
        doc = check(mq("--bootstrap-server", server.address, "--output", "json", "describe", "--replication"), 0)
        assert doc["replicas"][-1]["last_fetch_timestamp"] is None
    with FakeServer(quorum_handler(part_error=127), ranges=QUORUM_RANGES) as server:
        check(mq("--bootstrap-controller", server.address, "--output", "json", "describe", "--status"), 1, "error")
    with FakeServer() as server:
        closed = server.address
    check(mq("--bootstrap-controller", closed, "--timeout", "2", "--output", "json", "describe", "--status"), 69)
    check(mq("--bootstrap-controller", "a:1", "--command-config", "/nonexistent", "--output", "json", "describe",
             "--status"), 1, "error")


def test_quorum_voter_change_outputs(controller_config):  # noqa: F811 (the imported fixture)
    check = Checker("metadata-quorum", one_line=True)
    cfg = ("--command-config", str(controller_config))
    with FakeServer(voter_handler(0, 0, 127), ranges=VOTER_RANGES) as server:
        c = ("--bootstrap-controller", server.address, "--output", "json")
        assert check(mq(*c, *cfg, "add-controller"), 0, "add_controller")["dry_run"] is False
        assert check(mq(*c, *cfg, "add-controller", "--dry-run"), 0, "add_controller")["dry_run"] is True
        check(mq(*c, "remove-controller", "-i", "3", "-d", DIR[3]), 0, "remove_controller")
        check(mq(*c, "remove-controller", "-i", "3", "-d", DIR[3], "--dry-run"), 0, "remove_controller")
        check(mq(*c, "remove-controller", "-i", "3", "-d", DIR[3]), 1, "error")         # VOTER_NOT_FOUND
        check(mq(*c, "remove-controller", "-i", "-1", "-d", DIR[3]), 1, "error")
        check(mq(*c, "remove-controller", "-i", "1", "-d", "bad"), 1, "error")
        check(mq(*c, "add-controller"), 1, "error")                                    # no --command-config
    with FakeServer(voter_handler(*[6] * 1000), ranges=VOTER_RANGES) as server:
        check(mq("--bootstrap-controller", server.address, "--timeout", "1", "--output", "json", "remove-controller",
                 "-i", "3", "-d", DIR[3]), 69, "error")
    controller_config.write_text(controller_config.read_text().replace("node.id=4\n", ""))
    check(mq("--bootstrap-controller", "127.0.0.1:1", *cfg, "--output", "json", "add-controller", "--dry-run"), 1)


def test_quorum_shapes_are_all_exercised(controller_config):  # noqa: F811
    # one run per shape, so that a new branch in the schema without a real output fails here
    check = Checker("metadata-quorum", one_line=True)
    with FakeServer(quorum_handler(), ranges=VOTER_RANGES) as server:
        c = ("--bootstrap-controller", server.address, "--output", "json")
        check(mq(*c, "describe", "--status"), 0)
        check(mq(*c, "describe", "--replication"), 0)
        check(mq(*c, "describe"), 1)
        check(mq(*c, "--command-config", str(controller_config), "add-controller", "--dry-run"), 0)
        check(mq(*c, "remove-controller", "-i", "3", "-d", DIR[3], "--dry-run"), 0)
    check.all_seen()


def test_quorum_bad_flags_print_no_json():
    status, out, err = mq("--bootstrap-controller", "a:1", "--output", "json", "remove-controller", "-i", "x",
                          "-d", DIR[3])
    assert (status, out) == (1, "") and "invalid int value" in err


# ---------------------------------------------------------------- kafka-features


def test_features_outputs():
    check = Checker("features", one_line=True)
    j = ("--output", "json")
    with features_server() as server:
        assert check(kf("--bootstrap-controller", server.address, "describe", *j), 0, "describe")["features"]
    with features_server(epoch=-1) as server:
        doc = check(kf("--bootstrap-server", server.address, *j, "describe"), 0, "describe")
        assert doc["finalized_features_epoch"] is None
    with update_server({"kraft.version": (95, "no")}) as server:
        c = ("--bootstrap-controller", server.address, *j)
        check(kf(*c, "upgrade", "--feature", "group.version=1"), 0, "update")
        doc = check(kf(*c, "upgrade", "--release-version", "3.9-IV0", "--dry-run"), 1, "update")
        assert [r["error"] for r in doc["results"]] == ["no", None]
        assert check(kf(*c, "downgrade", "--metadata", "3.8"), 0, "update")["warnings"] == []   # none in 3.9
        check(kf(*c, "disable", "--feature", "group.version", "--unsafe"), 0, "update")
        check(kf(*c, "disable"), 1, "error")
        check(kf(*c, "upgrade", "--release-version", "1.0"), 1, "error")
    check(kf("--bootstrap-server", "127.0.0.1:1", "version-mapping", *j), 0, "version_mapping")
    check(kf("--bootstrap-server", "127.0.0.1:1", "version-mapping", "--release-version", "3.3", *j), 0)
    check(kf("--bootstrap-server", "127.0.0.1:1", "feature-dependencies", "--feature", "kraft.version=1",
             "--feature", "metadata.version=21", *j), 0, "feature_dependencies")
    check(kf("--bootstrap-server", "127.0.0.1:1", "feature-dependencies", "--feature", "x=1", *j), 1, "error")
    with FakeServer() as server:
        closed = server.address
    check(kf("--bootstrap-controller", closed, "--timeout", "2", "describe", *j), 69, "error")
    check(kf("--bootstrap-server", "a:1", "--command-config", "/nonexistent", "describe", *j), 1, "error")
    check.all_seen()


def test_features_bad_flags_print_no_json():
    status, out, err = kf("--bootstrap-server", "a:1", "--output", "json", "upgrade", "--unsafe")
    assert (status, out) == (1, "") and "unrecognized arguments: --unsafe" in err


# ---------------------------------------------------------------- kafka-metadata-shell cat --output json


def test_shell_cat_json(tmp_path):
    assert storage("format", "-c", config(tmp_path), "-t", CID)[0] == 0
    snapshot = str(tmp_path / "data" / "bootstrap.checkpoint")
    check = validator("metadata-shell")
    status, out, err = shell("--snapshot", snapshot, "cat", "--output", "json", "/image/features", "/image/provenance",
                             "/image", "/image/nope")
    assert (status, err) == (1, "")
    found, other = documents(out)
    assert len(found) == 3 and other == ["cat: /image/nope: No such file or directory."]
    assert isinstance(found[0], dict) and set(found[1]) == {"offset", "epoch", "time_ms", "time"}
    for doc in found:
        assert not [e.message for e in check.iter_errors(doc)], doc
    assert found[2]["features"] == found[0]
    status, out, _ = shell("--snapshot", snapshot, "cat", "-o", "json", "/")
    (doc,), other = documents(out)
    assert status == 0 and other == [] and check.is_valid(doc)


# ---------------------------------------------------------------- the schemas themselves


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_documented_versioned_and_valid(name):
    s = schema(name)
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["$id"].startswith(f"https://kraftsman.invalid/schemas/{name}/") and s["description"]
    assert name == "dump-log-jsonl" or s["version"] == int(s["$id"].rsplit("/", 1)[1])


VALID = {
    "storage": {"directories": [{"path": "/d", "state": "formatted", "cluster_id": CID, "node_id": 1,
                                 "directory_id": DIR[1], "problems": []}], "problems": [], "status": 0},
    "cluster": {"command": "unregister", "status": 0, "broker_id": 7, "result": "unregistered"},
    "metadata-quorum": {"command": "remove-controller", "status": 0, "controller_id": 3, "directory_id": DIR[3],
                        "dry_run": False},
    "features": {"command": "downgrade", "status": 0, "dry_run": True, "warnings": [],
                 "results": [{"feature": "metadata.version", "level": 20, "upgrade_type": "safe_downgrade",
                              "error": None}]},
    "topics": {"command": "create", "status": 0, "changed": True, "topic": "t", "topic_id": "AAAAAAAAAAAAAAAAAAAAAA",
               "partitions": 1, "replication_factor": 1},
    "configs": {"command": "alter", "status": 0, "changed": True, "entity_types": ["topics"], "entity_names": ["t"]},
    "acls": {"command": "remove", "status": 0, "changed": True, "removed": [
        {"resource_type": "TOPIC", "resource_name": "t", "pattern_type": "LITERAL", "principal": "User:a", "host": "*",
         "operation": "READ", "permission_type": "ALLOW"}]},
    "broker-api-versions": {"command": "kafka-broker-api-versions", "status": 0, "endpoint_type": "broker",
                            "nodes": [{"id": 4, "host": "h", "port": 9092, "rack": None, "error": None, "apis": [
                                {"api_key": 18, "name": "ApiVersions", "min_version": 0, "max_version": 4,
                                 "usable_version": 4, "state": "usable"}]}]},
    "leader-election": {"command": "kafka-leader-election", "status": 0, "election_type": "PREFERRED",
                        "elected": ["t-0"], "not_needed": [], "failed": []},
    "reassign-partitions": {"command": "cancel", "status": 0, "cancelled": ["t-1"], "cleared": None},
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_schema_rejects_missing_required_fields_and_extra_fields(name):
    check = validator(name)
    assert check.is_valid(VALID[name])
    for key in VALID[name]:
        broken = {k: v for k, v in VALID[name].items() if k != key}
        assert not check.is_valid(broken), key
    assert not check.is_valid(VALID[name] | {"extra": 1})
    if name == "storage":
        broken = copy.deepcopy(VALID[name])
        del broken["directories"][0]["node_id"]
        assert not check.is_valid(broken)


def test_every_json_output_has_a_schema():
    """Every --output flag with a json/jsonl choice (argparse parsers, the shell's commands) has its schema file."""
    needed = set()
    for command in docs.commands():
        for node in docs.model(command, nested=False).walk():
            for option in node.options:
                if "--output" in option.flags:
                    for fmt in {"json", "jsonl"} & set(option.choices):
                        needed.add(command.name.removeprefix("kafka-") + ("-jsonl" if fmt == "jsonl" else ""))
    for shell_command in SHELL_COMMANDS.values():
        if any("--output" in o.flags and "json" in o.choices for o in shell_command.spec.options):
            needed.add("metadata-shell")
    assert {"storage", "cluster", "metadata-quorum", "dump-log-jsonl", "metadata-shell", "features"} <= needed
    shipped = {p.name.removesuffix(".schema.json")
               for p in resources.files("kraftsman.cli").joinpath("schemas").iterdir() if p.name.endswith(".json")}
    assert needed <= shipped, f"JSON outputs without a schema in cli/schemas/: {sorted(needed - shipped)}"
    assert shipped <= needed | {"dump-log-jsonl"}, f"schemas for no output: {sorted(shipped - needed)}"
    assert SCHEMAS == shipped


def test_schemas_are_package_data():
    """pyproject.toml's package-data ships every schema file in the wheel (found at run time by importlib.resources)."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kraftsman.cli"]
    for path in (root / "cli" / "schemas").glob("*.json"):
        assert any(fnmatch.fnmatch(f"schemas/{path.name}", g) for g in globs), path.name
