"""kafka-storage, run in-process: golden text of the reference scenarios, errors, json, real folders."""
import io
import json
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.storage import tool as storage_tool
from kraftsman.storage.log import meta_properties as mp
from kraftsman.storage.log.snapshot import read_snapshot_records

REPO = Path(__file__).resolve().parents[3]
REAL = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
CID = "MkU3OEVBNTcwNTJENDM2Qg"
DIR_ID = "JEXY6aqzQY-32P5TStzaFg"


def storage(*argv):
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={})
    status = run_command(storage_tool.run, list(argv), env, prog="kafka-storage")
    return status, env.stdout.getvalue(), env.stderr.getvalue()


def config(tmp_path, **props):
    base = {"process.roles": "broker,controller", "node.id": "1", "controller.listener.names": "CONTROLLER",
            "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093", "controller.quorum.voters": "1@localhost:9093",
            "log.dirs": str(tmp_path / "data")}
    base.update({k.replace("_", "."): v for k, v in props.items() if v is not None})
    for k in [k for k, v in props.items() if v is None]:
        base.pop(k.replace("_", "."), None)
    path = tmp_path / "server.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in base.items()))
    return str(path)


def test_fresh_single_dir_then_info(tmp_path):
    cfg = config(tmp_path)
    assert storage("format", "-c", cfg, "-t", CID) == (
        0, f"Formatting metadata directory {tmp_path}/data with metadata.version 3.9-IV0.\n", "")
    dir_id = mp.read(tmp_path / "data").directory_id
    assert storage("info", "-c", cfg) == (0, f"Found log directory:\n  {tmp_path}/data\n\n"
                                          f"Found metadata: {{cluster.id={CID}, directory.id={dir_id}, node.id=1, "
                                          "version=1}\n\n", "")


def test_multiple_dirs_and_metadata_log_dir(tmp_path):
    cfg = config(tmp_path, log_dirs=f"{tmp_path}/b,{tmp_path}/a", metadata_log_dir=str(tmp_path / "m"))
    status, out, err = storage("format", "--config", cfg, "--cluster-id", CID, "--release-version", "3.8")
    assert (status, err) == (0, "")
    assert out == (f"Formatting data directory {tmp_path}/a with metadata.version 3.8-IV0.\n"
                   f"Formatting data directory {tmp_path}/b with metadata.version 3.8-IV0.\n"
                   f"Formatting metadata directory {tmp_path}/m with metadata.version 3.8-IV0.\n")
    status, out, _ = storage("info", "-c", cfg)
    assert status == 0 and out.startswith(f"Found log directories:\n  {tmp_path}/a\n  {tmp_path}/b\n  {tmp_path}/m\n\n")


def test_already_formatted_with_and_without_g(tmp_path):
    cfg = config(tmp_path)
    storage("format", "-c", cfg, "-t", CID)
    assert storage("format", "-c", cfg, "-t", CID) == (
        1, "", f"Log directory {tmp_path}/data is already formatted. Use --ignore-formatted to ignore this "
               "directory and format the others.\n")
    assert storage("format", "-c", cfg, "-t", CID, "-g") == (0, "All of the log directories are already formatted.\n", "")
    cfg2 = config(tmp_path, log_dirs=f"{tmp_path}/data,{tmp_path}/more")
    assert storage("format", "-c", cfg2, "-t", CID, "-g") == (
        0, f"Formatting data directory {tmp_path}/more with metadata.version 3.9-IV0.\n", "")


LEGACY = dict(process_roles=None, zookeeper_connect="localhost:2181", listeners="PLAINTEXT://:9092",
              controller_listener_names=None)
# KafkaConfig's refusals (Kafka 3.9), which StorageTool meets before any command: Kafka prints them in a stack
# trace and exits 1; kraftsman prints the message alone and exits 1.
NO_ZK = "Missing required configuration `zookeeper.connect` which has no default value."
NO_NODE_ID = ("Missing configuration `node.id` which is required when `process.roles` is defined (i.e. when running "
              "in KRaft mode).")
KAFKA_CONFIG_ERRORS = [
    # no process.roles: the CONTROLLER listener has no protocol, and Kafka parses the listeners (its
    # earlyStartListeners field) before validateValues asks for zookeeper.connect
    (dict(process_roles=None), "Error creating broker listeners from 'PLAINTEXT://:9092,CONTROLLER://:9093': No "
                               "security protocol defined for listener CONTROLLER"),
    (dict(process_roles=None, listeners="PLAINTEXT://:9092", controller_listener_names=None), NO_ZK),
    (dict(node_id=None), NO_NODE_ID),
    (dict(node_id=None, broker_id="-1"), NO_NODE_ID),
    (dict(node_id="x"), "Invalid value x for configuration node.id: Not a number of type INT"),
    (dict(broker_id="2"), "You must set `node.id` to the same value as `broker.id`."),
    (dict(process_roles="broker,observer"),
     "Unknown process role 'observer' (only 'broker' and 'controller' are allowed roles)"),
    (dict(listeners="PLAINTEXT://:9092,CONTROLLER://:9093,INTERNAL://:9094"),
     "Error creating broker listeners from 'PLAINTEXT://:9092,CONTROLLER://:9093,INTERNAL://:9094': No security "
     "protocol defined for listener INTERNAL"),
    # an explicit map turns off the implicit CONTROLLER:PLAINTEXT, and so does an SSL listener
    (dict(listener_security_protocol_map="PLAINTEXT:PLAINTEXT"),
     "Error creating broker listeners from 'PLAINTEXT://:9092,CONTROLLER://:9093': No security protocol defined "
     "for listener CONTROLLER"),
    (dict(listeners="SSL://:9092,CONTROLLER://:9093"),
     "Error creating broker listeners from 'SSL://:9092,CONTROLLER://:9093': No security protocol defined for "
     "listener CONTROLLER"),
    (dict(advertised_listeners="OUTSIDE://h:9092"),
     "Error creating broker listeners from 'OUTSIDE://h:9092': No security protocol defined for listener OUTSIDE"),
    (dict(listeners="PLAINTEXT://:x"), "Unable to parse a listener name from PLAINTEXT://:x"),   # the implicit map
    (dict(listeners="PLAINTEXT://:x", listener_security_protocol_map="PLAINTEXT:PLAINTEXT"),
     "Error creating broker listeners from 'PLAINTEXT://:x': Unable to parse PLAINTEXT://:x to a broker endpoint"),
    (dict(listener_security_protocol_map="CONTROLLER:TLS"),
     "Invalid security protocol `TLS` defined in listener.security.protocol.map"),
]


@pytest.mark.parametrize("props,args,message", [
    (LEGACY, [], "The kafka configuration file appears to be for a legacy cluster. Formatting is "
                 "only supported for clusters in KRaft mode."),
    ({}, ["-r", "9.9"], "Version 9.9 is not a valid version"),
    ({}, ["-r", "2.8"], "metadata.version 2.8-IV1 is too old to be supported."),
    ({}, ["-r", "4.0"], "metadata.version 4.0-IV3 is not yet stable."),
    (dict(inter_broker_protocol_version="3.0-IV0"), [], "metadata.version 3.0-IV0 is too old to be supported."),
    ({}, ["-f", "foo"], "Can't parse feature=level string foo: equals sign not found."),
    ({}, ["-f", "foo=bar"], "Can't parse feature=level string foo=bar: unable to parse bar as a short."),
    ({}, ["-f", "foo=1"], "Unsupported feature: foo. Supported features are: group.version, kraft.version, "
                          "transaction.version"),
    ({}, ["-r", "3.9", "-f", "metadata.version=21"],
     "Use --release-version instead of --feature metadata.version=X to avoid ambiguity."),
    ({}, ["-I", "1@host"], "No colon following hostname could be found."),
    ({}, ["-I", "1@[::1]:9093:" + DIR_ID + ",1@h:1:" + DIR_ID], "Node id 1 was specified more than once."),
    (dict(process_roles="broker"), ["-s"], "You can only use --standalone on a controller."),
    (dict(listeners="PLAINTEXT://:9092"), ["-s"], "No controller listeners found."),
    (dict(controller_quorum_voters=None), [], storage_tool.MISSING_VOTERS),
    ({}, ["-f", "kraft.version=1"], "Cannot set kraft.version to 1 unless KIP-853 configuration is present. "
                                    "Try removing the --feature flag for kraft.version."),
    ({}, ["-s", "-f", "kraft.version=0"], "Cannot set kraft.version to 0 if KIP-853 configuration is present. "
                                          "Try removing the --feature flag for kraft.version."),
    ({}, ["-r", "3.4", "-S", "SCRAM-SHA-256=[name=a,password=b]"],
     "SCRAM is only supported in metadata.version 3.5-IV2 or later."),
    ({}, ["-S", "SCRAM-SHA-256=[name=a]"], "You must supply one of 'password' or 'saltedpassword' to add-scram"),
    (dict(controller_listener_names=None), [], "Error creating broker listeners from 'PLAINTEXT://:9092,CONTROLLER:"
                                               "//:9093': No security protocol defined for listener CONTROLLER"),
] + [(props, [], message) for props, message in KAFKA_CONFIG_ERRORS])
def test_format_errors_are_one_clean_line(tmp_path, props, args, message):
    status, out, err = storage("format", "-c", config(tmp_path, **props), "-t", CID, *args)
    assert (status, out, err) == (1, "", message + "\n")
    assert not (tmp_path / "data").exists()


def test_foreign_cluster_text_and_json(tmp_path):
    cfg = config(tmp_path)
    storage("format", "-c", cfg, "-t", CID)
    status, out, err = storage("format", "-c", cfg, "-t", "other", "-g")
    assert (status, out) == (1, "")
    assert err == f"Invalid cluster.id in: {tmp_path}/data/meta.properties. Expected other, but read {CID}\n"
    status, out, err = storage("format", "-c", cfg, "-t", CID, "-g", "--output", "json")
    assert status == 0 and json.loads(out)["directories"][0]["state"] == "already_formatted"
    status, out, _ = storage("format", "-c", cfg, "-t", "other", "-g", "--output", "json")
    doc = json.loads(out)
    assert status == 3 == doc["status"]
    assert doc["directories"][0]["cluster_id"] == CID and doc["problems"][0].startswith("Invalid cluster.id")


@pytest.mark.parametrize("props,message", KAFKA_CONFIG_ERRORS[:1] + KAFKA_CONFIG_ERRORS[2:])
def test_kafka_config_refusals_come_before_info_and_before_format_checks_its_flags(tmp_path, props, message):
    cfg = config(tmp_path, **props)
    assert storage("info", "-c", cfg) == (1, "", message + "\n")
    assert storage("format", "-c", cfg, "-t", CID, "-r", "9.9", "-I", "bad") == (1, "", message + "\n")
    assert not (tmp_path / "data").exists()


def test_kafka_config_accepts_its_defaults_and_mapped_listeners(tmp_path):
    for props in (dict(listeners=None, controller_listener_names=None, process_roles="broker"),   # PLAINTEXT://:9092
                  dict(listener_security_protocol_map="PLAINTEXT:PLAINTEXT,CONTROLLER:SSL"),
                  dict(broker_id="1"), dict(node_id=None, broker_id="1"),
                  dict(listeners="PLAINTEXT://[::1]:9092 , CONTROLLER://:9093")):
        status, _, err = storage("info", "-c", config(tmp_path, **props))
        assert (status, err) == (1, ""), props      # 1: the directory is not formatted, as Kafka says


def test_format_json_fresh(tmp_path):
    status, out, err = storage("format", "-c", config(tmp_path), "-t", CID, "--output", "json")
    doc = json.loads(out)
    assert (status, err) == (0, "")
    assert doc["metadata_version"] == "3.9-IV0" and doc["problems"] == []
    (entry,) = doc["directories"]
    assert entry["state"] == "formatted_now" and entry["cluster_id"] == CID and entry["node_id"] == 1
    assert entry["directory_id"] == str(mp.read(tmp_path / "data").directory_id)
    assert doc["messages"] == [f"Formatting metadata directory {tmp_path}/data with metadata.version 3.9-IV0."]


def test_standalone_and_initial_controllers(tmp_path):
    cfg = config(tmp_path, controller_quorum_voters=None, advertised_listeners="CONTROLLER://ctl.example:19093")
    status, out, _ = storage("format", "-c", cfg, "-t", CID, "--standalone")
    assert status == 0 and out == (f"Formatting dynamic metadata voter directory {tmp_path}/data with "
                                   "metadata.version 3.9-IV0.\n")
    assert (tmp_path / "data" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint").is_file()
    cfg = config(tmp_path, controller_quorum_voters=None, log_dirs=str(tmp_path / "d2"))
    status, out, _ = storage("format", "-c", cfg, "-t", CID, "-I", f"1@[::1]:9093:{DIR_ID}")
    assert status == 0 and str(mp.read(tmp_path / "d2").directory_id) == DIR_ID
    cfg = config(tmp_path, controller_quorum_voters=None, log_dirs=str(tmp_path / "d3"))
    assert storage("format", "-c", cfg, "-t", CID, "-N")[0] == 0
    assert not (tmp_path / "d3" / "__cluster_metadata-0").exists()


def test_scram_and_feature(tmp_path):
    cfg = config(tmp_path, unstable_feature_versions_enable="true")
    status, out, err = storage("format", "-c", cfg, "-t", CID, "-r", "4.0-IV0", "-f", "group.version=1",
                               "-S", "SCRAM-SHA-256=[name=alice,password=alice-secret]")
    assert (status, err) == (0, "")
    records = read_snapshot_records(tmp_path / "data" / "bootstrap.checkpoint")
    assert [(r.message.api_key, r.message.name) for r in records] == [
        (12, "metadata.version"), (12, "group.version"), (11, "alice")]


def test_info_problems(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    cfg = config(tmp_path, log_dirs=f"{tmp_path}/missing,{tmp_path}/file,{tmp_path}/empty")
    assert storage("info", "-c", cfg) == (1, f"Found log directory:\n  {tmp_path}/empty\n\nFound problems:\n"
                                             f"  {tmp_path}/empty is not formatted.\n  {tmp_path}/file is not a directory\n"
                                             f"  {tmp_path}/missing does not exist\n\n", "")


def test_info_mismatch_and_legacy(tmp_path):
    for name, cid in (("a", CID), ("b", "other")):
        storage("format", "-c", config(tmp_path, log_dirs=str(tmp_path / name)), "-t", cid)
    cfg = config(tmp_path, log_dirs=f"{tmp_path}/a,{tmp_path}/b")
    status, out, _ = storage("info", "-c", cfg)
    assert status == 1 and out.endswith("Found problem:\n  Mismatched cluster IDs between storage directories.\n\n")
    status, out, _ = storage("info", "-c", cfg, "--output", "json")      # Kafka's 1 in text and json alike
    assert status == 1 and json.loads(out)["directories"][1]["cluster_id"] == "other"
    legacy = config(tmp_path, log_dirs=str(tmp_path / "a"), **LEGACY)
    status, out, _ = storage("info", "-c", legacy)
    assert status == 1 and "appears to be for a legacy cluster, but the directories are formatted for a cluster in " \
                           "KRaft mode." in out


def test_lookups(tmp_path):
    assert storage("version-mapping") == (0, "metadata.version=21 (3.9-IV0)\nkraft.version=1\n"
                                             "transaction.version=0\ngroup.version=0\n", "")
    assert storage("version-mapping", "-r", "3.7")[1].startswith("metadata.version=19 (3.7)\nkraft.version=0\n")
    assert storage("version-mapping", "-r", "x") == (
        1, "", "Unknown release version 'x'. Supported versions are: 3.3-IV0 to 3.9-IV0\n")
    assert storage("feature-dependencies", "-f", "kraft.version=1", "-f", "metadata.version=21",
                   "-f", "group.version=0") == (
        0, "kraft.version=1 requires:\n    metadata.version=21 (3.9-IV0)\nmetadata.version=21 (3.9-IV0) has no "
           "dependencies.\ngroup.version=0 has no dependencies.\n", "")
    assert storage("feature-dependencies", "-f", "x=1")[2] == "Unknown feature: x\n"
    assert storage("feature-dependencies", "-f", "kraft.version=a")[2] == "Invalid version format: a for feature kraft.version\n"
    assert storage("feature-dependencies", "-f", "metadata.version=99")[2] == "Unknown metadata.version 99\n"
    assert storage("feature-dependencies", "-f", "group.version=7")[2] == \
        "Feature level 7 is not supported for feature group.version\n"


def test_random_uuid_and_usage(tmp_path):
    status, out, _ = storage("random-uuid", "--count", "3")
    assert status == 0 and len(out.split()) == 3 and all(len(u) == 22 and not u.startswith("-") for u in out.split())
    status, _, err = storage("format", "-c", "x")
    assert status == 1 and "kafka-storage format: error:" in err
    argfile = tmp_path / "args"
    argfile.write_text("random-uuid\n")
    assert storage(f"@{argfile}")[0] == 0


def real_folders():
    if not REAL.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{REAL} is absent"))]
    return sorted({p.parent for p in REAL.glob("**/meta.properties")})


@pytest.mark.parametrize("folder", real_folders(), ids=lambda p: str(p.relative_to(REAL)) if p else "absent")
def test_info_on_real_folders(tmp_path, folder):
    meta = mp.read(folder)
    kind = {"node_id": str(meta.node_id)} if meta.version == 1 else LEGACY     # the node's own config
    status, out, err = storage("info", "-c", config(tmp_path, log_dirs=str(folder), **kind))
    props = meta.to_properties()
    assert (status, err) == (0, "")
    assert out == (f"Found log directory:\n  {folder}\n\nFound metadata: {{"
                   + ", ".join(f"{k}={props[k]}" for k in sorted(props)) + "}\n\n")


# ---------------------------------------------------------------- kraftsman's additions (issue 19)

def test_info_names_a_node_id_other_than_the_configs_with_one_code_in_text_json_and_yaml(tmp_path):
    import yaml

    storage("format", "-c", config(tmp_path), "-t", CID)
    other = config(tmp_path, node_id="2")
    problem = f"{tmp_path}/data/meta.properties has node.id 1, but the configuration has node.id 2."
    status, out, err = storage("info", "-c", other)
    assert (status, err) == (3, "") and out.endswith(f"Found problem:\n  {problem}\n\n")
    assert [line for line in out.splitlines() if "node.id 1" in line and "node.id 2" in line] == [f"  {problem}"]
    status, out, _ = storage("info", "-c", other, "--output", "json")
    doc = json.loads(out)
    assert status == doc["status"] == 3 and doc["problems"] == [problem]
    status, out, _ = storage("info", "-c", other, "--output", "yaml")
    assert status == 3 and yaml.safe_load(out) == doc
    assert storage("info", "-c", config(tmp_path))[0] == 0      # its own config: no problem


def test_info_compares_the_cluster_id_when_the_config_sets_one(tmp_path):
    storage("format", "-c", config(tmp_path), "-t", CID)
    status, out, _ = storage("info", "-c", config(tmp_path, cluster_id="AAAAAAAAAAAAAAAAAAAAAQ"))
    assert status == 3 and out.endswith(f"  {tmp_path}/data/meta.properties has cluster.id {CID}, but the "
                                        "configuration has cluster.id AAAAAAAAAAAAAAAAAAAAAQ.\n\n")
    assert storage("info", "-c", config(tmp_path, cluster_id=CID))[0] == 0


def test_info_warns_when_kafkas_default_log_dir_is_used(tmp_path):
    status, out, err = storage("info", "-c", config(tmp_path, log_dirs=None))
    assert "/tmp/kafka-logs" in out
    assert err == (f"kafka-storage: warning: neither log.dirs nor log.dir is set in {tmp_path}/server.properties: "
                   "using Kafka's default /tmp/kafka-logs\n")
    assert storage("info", "-c", config(tmp_path, log_dirs=None, log_dir=str(tmp_path / "d")))[2] == ""


def test_format_warns_when_the_cluster_id_is_not_a_kafka_uuid_and_formats_as_kafka_39(tmp_path):
    status, out, err = storage("format", "-c", config(tmp_path), "-t", "my-cluster")
    assert status == 0 and out.startswith("Formatting metadata directory")
    assert err.count("\n") == 1 and err.startswith("kafka-storage: warning: the cluster id 'my-cluster' is not a "
                                                   "Kafka Uuid")
    assert mp.read(tmp_path / "data").cluster_id == "my-cluster"
    status, out, err = storage("format", "-c", config(tmp_path, log_dirs=str(tmp_path / "j")), "-t", "x" * 23,
                               "--output", "json")
    assert status == 0 == json.loads(out)["status"] and "is not a Kafka Uuid" in err
    assert storage("format", "-c", config(tmp_path, log_dirs=str(tmp_path / "p")), "-t", CID + "==")[2] == ""


def test_format_yaml_is_the_json_object(tmp_path):
    import yaml

    cfg = config(tmp_path)
    storage("format", "-c", cfg, "-t", CID)
    as_json = json.loads(storage("format", "-c", cfg, "-t", CID, "-g", "--output", "json")[1])
    status, out, _ = storage("format", "-c", cfg, "-t", CID, "-g", "--output", "yaml")
    assert status == 0 and yaml.safe_load(out) == as_json


def test_quorum_flags_are_mutually_exclusive(tmp_path):
    cfg = config(tmp_path, controller_quorum_voters=None)
    status, out, err = storage("format", "-c", cfg, "-t", CID, "-s", "-N")
    assert (status, out) == (1, "") and err.startswith("usage: kafka-storage format")
    assert err.endswith("kafka-storage format: error: argument --no-initial-controllers/-N: not allowed with "
                        "argument --standalone/-s\n")
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={"KRAFTSMAN_STORAGE_STANDALONE": "1"})
    assert run_command(storage_tool.run, ["format", "-c", cfg, "-t", CID, "-N"], env) == 0, env.stderr.getvalue()
    assert not (tmp_path / "data" / "__cluster_metadata-0").exists()      # -N won: the variable's -s was dropped


def test_usage_errors_keep_kafkas_exit_code(tmp_path):
    for argv in (["--bogus"], ["info"], ["nope"], ["random-uuid", "--count", "x"], ["info", "-c", "x", "--output", "xml"]):
        status, out, err = storage(*argv)
        assert (status, out) == (1, ""), argv
        assert err.startswith("usage: kafka-storage") and err.count("\n") == 2, (argv, err)
    status, out, err = storage("format", "-c", "x", "--output", "json")   # structured output asked: still 1
    assert (status, out) == (1, "") and err.startswith("usage: kafka-storage") and err.count("\n") == 2
    assert storage("@" + str(tmp_path / "absent"))[0] == 1
