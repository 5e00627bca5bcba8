"""kafka-configs' describe and alter flows on a kraftsman controller and a simulated Kafka 3.9 broker: the lines
they print, what they change, and Kafka's refusals once the cluster has answered."""
from __future__ import annotations

import time

import pytest

from kraftsman.cli.common.jopt import KafkaError, stack_trace
from kraftsman.cli.configs.alter import InvalidConfigs, alter
from kraftsman.cli.configs.describe import describe
from kraftsman.cli.configs.entities import Refusal
from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.admin import Admin, ServerError
from kraftsman.storage.protocol.errors import Errors

from ...controller.client.small_cluster import small_cluster
from ...controller.client.test_admin_config_calls import create_topic
from ...controller.server.quorum_fixtures import loop_fixture

loop = loop_fixture()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    with small_cluster(tmp_path_factory.mktemp("configs-flows"), loop) as c:
        create_topic(c, "t-cfg")
        yield c


def admin(cluster, controllers: bool = False) -> Admin:
    address = cluster.controller if controllers else cluster.server
    return Admin(sc.parse_addresses(address), sc.ClientConfig(bootstrap_controllers=controllers),
                     time.monotonic() + 15)


def run_describe(cluster, types, names, describe_all=False, controllers=False):
    lines = []
    found = describe(admin(cluster, controllers), types, names, describe_all, lines.append)
    return lines, found


def test_topic_alter_add_delete_and_describe_as_the_recording(cluster):
    changed = alter(admin(cluster), ["topics"], ["t-cfg"], {"cleanup.policy": "compact", "min.insync.replicas": "2"},
                    [])
    assert changed
    cluster.sync(lambda image: len(image.configs.resources.get((2, "t-cfg"), {})) == 2)
    lines, found = run_describe(cluster, ["topics"], ["t-cfg"])
    assert lines == [  # configs-describe-topic
        "Dynamic configs for topic t-cfg are:",
        "  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, "
        "DEFAULT_CONFIG:log.cleanup.policy=delete}",
        "  min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, "
        "DEFAULT_CONFIG:min.insync.replicas=1}"]
    assert [c["name"] for c in found[0]["configs"]] == ["cleanup.policy", "min.insync.replicas"]
    assert run_describe(cluster, ["topics"], ["t-cfg"], controllers=True)[0] == lines
    assert not alter(admin(cluster), ["topics"], ["t-cfg"], {"cleanup.policy": "compact"}, [])   # already so
    with pytest.raises(InvalidConfigs, match=r"^Invalid config\(s\): retention.ms,nope$"):
        alter(admin(cluster), ["topics"], ["t-cfg"], {}, ["retention.ms", "nope"])
    with pytest.raises(ServerError) as bad:
        alter(admin(cluster), ["topics"], ["t-cfg"], {"retention.ms": "abc"}, [])
    assert bad.value.code == Errors.INVALID_CONFIG
    assert alter(admin(cluster), ["topics"], ["t-cfg"], {}, ["min.insync.replicas"])


def test_describe_of_a_missing_or_invalid_topic_prints_the_header_first(cluster):
    lines = []
    with pytest.raises(ServerError) as missing:
        describe(admin(cluster), ["topics"], ["nope"], False, lines.append)
    assert (lines, missing.value.code, missing.value.message) == (
        ["Dynamic configs for topic nope are:"], Errors.UNKNOWN_TOPIC_OR_PARTITION, "")
    with pytest.raises(KafkaError) as invalid:
        describe(admin(cluster), ["topics"], ["bad name"], False, lines.append)
    assert stack_trace(invalid.value) == ("org.apache.kafka.common.errors.InvalidTopicException: Topic name is "
                                          "invalid: 'bad name' contains one or more characters other than ASCII "
                                          "alphanumerics, '.', '_' and '-'\n")   # an ApiException: no frames


def test_broker_and_default_broker_alters_use_the_legacy_api(cluster):
    assert run_describe(cluster, ["brokers"], ["4"])[0] == ["Dynamic configs for broker 4 are:"]
    assert alter(admin(cluster), ["brokers"], ["4"], {"log.cleaner.threads": "2"}, [])
    cluster.sync(lambda image: image.configs.resources.get((4, "4")))
    lines, _ = run_describe(cluster, ["brokers"], ["4"])
    assert lines[1].startswith("  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
                               "log.cleaner.threads=2, ")
    assert alter(admin(cluster), ["brokers"], ["4"], {}, ["log.cleaner.threads"])
    cluster.sync(lambda image: not image.configs.resources.get((4, "4")))
    assert alter(admin(cluster, controllers=True), ["brokers"], [""], {"log.retention.ms": "604800000"}, [])
    cluster.sync(lambda image: image.configs.resources.get((4, "")))
    assert run_describe(cluster, ["brokers"], [""], controllers=True)[0] == [  # configs-describe-broker-default-...
        "Default configs for brokers in the cluster are:",
        "  log.retention.ms=604800000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms="
        "604800000}"]
    with pytest.raises(InvalidConfigs, match=r"^Invalid config\(s\): log.cleaner.threads$"):
        alter(admin(cluster), ["brokers"], [""], {}, ["log.cleaner.threads"])
    assert alter(admin(cluster), ["brokers"], [""], {}, ["log.retention.ms"])


def test_quotas_and_scram_as_the_recording(cluster):
    assert alter(admin(cluster), ["clients"], ["c1"], {"producer_byte_rate": "1024", "consumer_byte_rate": "2048"}, [])
    assert alter(admin(cluster), ["users"], ["alice"], {"SCRAM-SHA-256": "iterations=8192,password=pw"}, [])
    assert alter(admin(cluster), ["users"], ["alice"], {"request_percentage": "50"}, [])
    assert alter(admin(cluster), ["users"], [""], {"producer_byte_rate": "4096"}, [])
    cluster.sync(lambda image: len(image.client_quotas.entities) == 3 and image.scram.users(1))
    assert run_describe(cluster, ["clients"], [])[0] == [
        "Quota configs for client-id 'c1' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0"]
    assert run_describe(cluster, ["users"], [])[0] == [   # configs-describe-users-all
        "Quota configs for the default user-principal are producer_byte_rate=4096.0",
        "Quota configs for user-principal 'alice' are request_percentage=50.0",
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192"]
    assert run_describe(cluster, ["users"], ["bob"])[0] == []
    assert not alter(admin(cluster), ["users"], [""], {"producer_byte_rate": "4096.0"}, [])
    with pytest.raises(InvalidConfigs, match=r"^Invalid config\(s\): consumer_byte_rate$"):
        alter(admin(cluster), ["users"], [""], {}, ["consumer_byte_rate"])
    with pytest.raises(Refusal, match="^Cannot alter both quota and SCRAM credential configs simultaneously for "
                                      "'users' using --bootstrap-server.$"):
        alter(admin(cluster), ["users"], ["alice"], {"SCRAM-SHA-512": "password=x", "request_percentage": "1"}, [])
    with pytest.raises(Refusal, match=r"^Only quota configs can be added for 'clients' using --bootstrap-server. "
                                      r"Unexpected config names: Set\(SCRAM-SHA-256\)$"):
        alter(admin(cluster), ["users", "clients"], ["alice", "c1"], {"SCRAM-SHA-256": "password=x"}, [])
    assert alter(admin(cluster), ["users"], [""], {}, ["producer_byte_rate"])    # ...-default-quota-delete
    with pytest.raises(ServerError) as missing:
        alter(admin(cluster), ["users"], ["bob"], {}, ["SCRAM-SHA-512"])
    assert missing.value.code == Errors.RESOURCE_NOT_FOUND


def test_quota_describe_through_a_controller_is_unsupported(cluster):
    with pytest.raises(sc.UnsupportedVersion):
        run_describe(cluster, ["users"], [], controllers=True)
