"""kafka-configs live on the fixture cluster (kraftsman controllers 1-3, simulated Kafka 3.9 brokers 4 and 5): topic,
broker, default-broker, user (SCRAM) and client-quota configs through --bootstrap-server and --bootstrap-controller;
"changed" and "already so" in json/yaml mode; bad input in Kafka's words; every JSON document valid against
cli/schemas/configs.schema.json, every shape seen; Tab completion from the live cluster."""
from __future__ import annotations

import io
import json

import pytest
import yaml

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.configs.tool import run

from ...admin_cluster import BOOTSTRAP_CONTROLLER, BOOTSTRAP_SERVER, FIXTURES, AdminCluster
from ...admin_cluster_ops import ClusterOps
from ..test_json_schemas import Checker

B, C = ("--bootstrap-server", BOOTSTRAP_SERVER), ("--bootstrap-controller", BOOTSTRAP_CONTROLLER)
J = ("--output", "json")

if not FIXTURES.parent.is_dir():
    pytest.skip("the shared fixtures are absent (the fixture cluster takes its settings from them)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with AdminCluster(tmp_path_factory.mktemp("configs-live")) as started:
        ClusterOps(started).create_topic("live-cfg", 2, 2)
        yield started


def kc(*argv: str, stdin: str = "", cwd: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, stdin=io.StringIO(stdin), env={}, **({"cwd": cwd} if cwd else {}))
    status = run_command(run, list(argv), env, prog="kafka-configs")
    return status, out.getvalue(), err.getvalue()


def dynamic(cluster, *entity: str, flag=B) -> dict[str, str]:
    """Return the name=value pairs a --describe prints (synonyms left out)."""
    status, out, err = kc(*flag, "--describe", *entity)
    assert (status, err) == (0, ""), err
    return dict(line.split()[0].split("=", 1) for line in out.splitlines()[1:])


def test_topic_configs_added_described_and_deleted(cluster):
    assert kc(*B, "--alter", "--entity-type", "topics", "--entity-name", "live-cfg", "--add-config",
              "retention.ms=3600000,cleanup.policy=[compact,delete]") == \
        (0, "Completed updating config for topic live-cfg.\n", "")
    cluster.sync()
    assert dynamic(cluster, "--topic", "live-cfg") == {"cleanup.policy": "compact,delete", "retention.ms": "3600000"}
    assert dynamic(cluster, "--entity-type", "topics", "--entity-name", "live-cfg", flag=C) == \
        {"cleanup.policy": "compact,delete", "retention.ms": "3600000"}
    assert kc(*C, "--alter", "--topic", "live-cfg", "--delete-config", "cleanup.policy")[0] == 0
    cluster.sync()
    assert dynamic(cluster, "--topic", "live-cfg") == {"retention.ms": "3600000"}
    status, out, _ = kc(*B, "--describe", "--entity-type", "topics", "--all", "--entity-name", "live-cfg")
    assert status == 0 and out.startswith("All configs for topic live-cfg are:\n")
    assert "  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:log.segment.bytes=1073741824}" in out
    status, out, _ = kc(*B, "--describe", "--entity-type", "topics")       # every topic
    assert status == 0 and "Dynamic configs for topic live-cfg are:\n  retention.ms=3600000" in out


def test_broker_and_cluster_default_configs(cluster):
    assert kc(*B, "--alter", "--broker", "5", "--add-config", "log.cleaner.threads=3") == \
        (0, "Completed updating config for broker 5.\n", "")
    cluster.sync()
    assert dynamic(cluster, "--entity-type", "brokers", "--entity-name", "5") == {"log.cleaner.threads": "3"}
    assert kc(*C, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
              "log.retention.ms=7200000") == (0, "Completed updating default config for brokers in the cluster.\n", "")
    cluster.sync()
    assert dynamic(cluster, "--broker-defaults", flag=C) == {"log.retention.ms": "7200000"}
    status, out, _ = kc(*B, "--describe", "--entity-type", "brokers")      # each broker, then the default
    headers = [line for line in out.splitlines() if not line.startswith("  ")]
    assert status == 0 and headers == ["Dynamic configs for broker 4 are:", "Dynamic configs for broker 5 are:",
                                       "Default configs for brokers in the cluster are:"]
    status, out, _ = kc(*B, "--describe", "--broker", "4", "--all")
    assert status == 0 and "  node.id=4 sensitive=false synonyms={STATIC_BROKER_CONFIG:node.id=4, DEFAULT_CONFIG:node.id=-1}" in out
    assert kc(*B, "--alter", "--broker", "5", "--delete-config", "log.cleaner.threads")[0] == 0
    assert kc(*B, "--alter", "--broker-defaults", "--delete-config", "log.retention.ms")[0] == 0
    cluster.sync()
    assert dynamic(cluster, "--broker", "5") == {} and dynamic(cluster, "--broker-defaults") == {}


def test_scram_credentials_and_quotas(cluster):
    assert kc(*B, "--alter", "--user", "carol", "--add-config", "SCRAM-SHA-512=[password=secret]") == \
        (0, "Completed updating config for user carol.\n", "")
    assert kc(*C, "--alter", "--user", "dave", "--add-config", "SCRAM-SHA-256=[iterations=4096,password=x]")[0] == 0
    assert kc(*B, "--alter", "--entity-type", "users", "--entity-name", "carol", "--entity-type", "clients",
              "--entity-default", "--add-config", "consumer_byte_rate=1e6") == \
        (0, "Completed updating config for user carol.\n", "")
    cluster.sync()
    status, out, _ = kc(*B, "--describe", "--entity-type", "users", "--entity-name", "carol")
    assert (status, out) == (0, "SCRAM credential configs for user-principal 'carol' are SCRAM-SHA-512=iterations=4096\n")
    status, out, _ = kc(*B, "--describe", "--user", "carol", "--client-defaults")
    assert out == "Quota configs for user-principal 'carol', the default client-id are consumer_byte_rate=1000000.0\n"
    # the SCRAM describe through the controllers is a kraftsman addition (Kafka 3.9's client refuses the endpoint)
    status, out, err = kc(*C, "--describe", "--user", "dave")
    assert (status, out) == (1, "") and "UnsupportedEndpointTypeException: This Admin API is not yet supported" in err
    assert kc(*B, "--alter", "--user", "carol", "--delete-config", "SCRAM-SHA-512")[0] == 0
    assert kc(*C, "--alter", "--user", "dave", "--delete-config", "SCRAM-SHA-256")[0] == 0
    assert kc(*B, "--alter", "--user", "carol", "--client-defaults", "--delete-config", "consumer_byte_rate")[0] == 0
    cluster.sync()
    assert kc(*B, "--describe", "--entity-type", "users") == (0, "", "")


def test_add_config_file_is_read_from_the_working_directory(cluster, tmp_path):
    (tmp_path / "quota.properties").write_text("producer_byte_rate=2048\n")
    assert kc(*B, "--alter", "--client", "app", "--add-config-file", "quota.properties", cwd=str(tmp_path))[0] == 0
    cluster.sync()
    assert kc(*B, "--describe", "--client", "app")[1] == "Quota configs for client-id 'app' are producer_byte_rate=2048.0\n"
    status, out, err = kc(*B, "--alter", "--client", "app", "--add-config-file", "nope.properties", cwd=str(tmp_path))
    assert (status, out) == (1, "") and err.startswith("Error while executing config command with args '--bootstrap-")
    assert f"\njava.nio.file.NoSuchFileException: {tmp_path / 'nope.properties'}\n\tat " in err


def test_changed_and_already_so_in_json_and_yaml(cluster):
    alter = (*B, "--alter", "--topic", "live-cfg", "--add-config", "min.insync.replicas=2")
    status, out, _ = kc(*alter, *J)
    assert (status, json.loads(out)) == (0, {"command": "alter", "status": 0, "changed": True,
                                             "entity_types": ["topics"], "entity_names": ["live-cfg"]})
    cluster.sync()
    status, out, _ = kc(*alter, "--output", "yaml")
    assert (status, yaml.safe_load(out)["changed"]) == (6, False)
    assert kc(*alter) == (0, "Completed updating config for topic live-cfg.\n", "")      # text mode: Kafka's 0


def test_bad_input_in_kafkas_words(cluster):
    assert kc(*B, "--describe") == (1, "", "At least one entity type must be specified\n")
    assert kc(*B, "--alter", "--topic", "live-cfg", "--add-config", "nope=1")[2].splitlines()[1] == \
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidConfigurationException: " \
        "Unknown topic config name: nope"
    status, out, err = kc(*B, "--alter", "--topic", "live-cfg", "--add-config", "retention.ms=soon")
    assert (status, out) == (1, "") and "Invalid value soon for configuration retention.ms: Not a number of type LONG" \
        in err
    assert kc(*B, "--alter", "--topic", "live-cfg", "--delete-config", "flush.ms") == \
        (1, "", "Invalid config(s): flush.ms\n")
    assert kc(*B, "--alter", "--client", "c", "--add-config", "producer_byte_rate=fast") == \
        (1, "", "Cannot parse quota configuration value for producer_byte_rate: fast\n")
    assert kc(*B, "--alter", "--user", "u", "--add-config", "SCRAM-SHA-256=[iterations=1,password=p]") == \
        (1, "", "Iterations 1 is less than the minimum 4096 required for SCRAM-SHA-256\n")
    status, out, err = kc(*B, "--alter", "--topic", "live-cfg")
    assert err == "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter\n"
    status, out, err = kc(*B, "--describe", "--alter", "--topic", "t")
    assert status == 1 and err.startswith("Command must include exactly one action: --describe, --alter\nOption  ")
    assert kc(*B, "--describe", "--bogus") == (1, "", "bogus is not a recognized option\n")
    status, out, err = kc("--bootstrap-server", "127.0.0.1:31999", "--describe", "--topic", "t")
    assert status == 69 and err.startswith("Error while executing config command with args '--bootstrap-server ")
    assert "\norg.apache.kafka.common.errors.TimeoutException: " in err and "Traceback" not in err
    status, out, _ = kc("--bootstrap-server", "127.0.0.1:31999", "--describe", "--topic", "t", *J)
    assert status == 69 and json.loads(out)["status"] == 69
    assert kc(*B, "--zookeeper", "z:2181", "--describe", "--user", "u")[2] == \
        "Only one of --bootstrap-server, --boostrap-controller, and --zookeeper can be specified\n"


def test_json_outputs_follow_the_schema(cluster):
    check = Checker("configs", one_line=True)
    doc = check(kc(*B, "--describe", "--topic", "live-cfg", *J), 0, "describe")
    assert doc["entities"][0]["entity_name"] == "live-cfg"
    check(kc(*B, "--alter", "--client", "json", "--add-config", "request_percentage=10", *J), 0, "altered")
    cluster.sync()
    check(kc(*B, "--alter", "--client", "json", "--add-config", "request_percentage=10", *J), 6, "unchanged")
    check(kc(*B, "--alter", "--user", "json", "--add-config", "SCRAM-SHA-256=[password=p]", *J), 0, "altered")
    cluster.sync()
    doc = check(kc(*B, "--describe", "--entity-type", "users", "--entity-type", "clients", *J), 0, "describe")
    doc = check(kc(*B, "--describe", "--user", "json", *J), 0, "describe")
    assert doc["entities"] == [{"user": "json", "scram": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096}]}]
    doc = check(kc(*B, "--describe", "--client", "json", *J), 0, "describe")
    assert doc["entities"] == [{"entity": [{"type": "client-id", "name": "json"}], "quotas": {"request_percentage": 10.0}}]
    check(kc(*B, "--describe", "--topic", "nope", *J), 1, "error")
    check.all_seen()


def test_tab_completes_config_keys_and_live_entity_names(cluster):
    from ..completion.test_complete import candidates

    assert "log.cleaner.threads=" in candidates("kafka-configs --alter --entity-type brokers --add-config log.cl")
    assert candidates("kafka-configs --alter --user u --delete-config SCRAM") == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert "live-cfg" in candidates(f"kafka-configs --bootstrap-server {BOOTSTRAP_SERVER} --describe --entity-type "
                                    "topics --entity-name live-")
    assert candidates(f"kafka-configs --bootstrap-server {BOOTSTRAP_SERVER} --describe --entity-type brokers "
                      "--entity-name ") == ["4", "5"]
    assert candidates("kafka-configs --describe --entity-type bro") == ["brokers", "broker-loggers"]
    assert candidates("kafka-configs --bootstrap-server 127.0.0.1:31999 --describe --topic ") == []   # silent
