"""DescribeConfigs golden tests on a real kraftsman controller: confluent-kafka's AdminClient and the exact frames.

The controller's server.properties sets log.retention.hours=24 and log.segment.bytes=1048576 (static); the cluster
default BROKER resource gets log.cleanup.policy=compact and log.retention.ms=3600000 (dynamic, IncrementalAlterConfigs
on resource ""); topic "golden" sets segment.bytes=2097152. Expectations follow Kafka 3.9's ConfigHelper:
layers dynamic broker (2) > dynamic default (3) > static (4) > default (5), each listing the synonym names it
holds, cut before the first entry under the described name; a topic config adds its own entry (1) first.

confluent-kafka 2.16 always asks for synonyms (no include_synonyms argument) and hands them back as a dict keyed
by name, so repeated names collapse there; the ordered chains are read with kraftsman's own client. It also
refuses a BROKER resource with an empty name, so the cluster default is read with kraftsman's client too.
"""
from __future__ import annotations

import time

import pytest

from .quorum_fixtures import FAST, loop_fixture, running_brokers, running_quorum

loop = loop_fixture()
STATIC = {"log.retention.hours": "24", "log.segment.bytes": "1048576"}


def _request(quorum, api: str, version: int, body):
    from kraftsman.controller.client import sync_client as sc

    deadline = time.monotonic() + 15
    with sc.SyncConnection.open("127.0.0.1", quorum.ports[1], sc.ClientConfig.from_properties({}), deadline) as conn:
        return conn.request(api, version, body, deadline)


def _set_cluster_default(quorum, **configs):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("IncrementalAlterConfigsRequest")
    ops = [cls.AlterableConfig(name=k.replace("_", "."), config_operation=0, value=v) for k, v in configs.items()]
    body = cls(resources=[cls.AlterConfigsResource(resource_type=4, resource_name="", configs=ops)])
    assert [r.error_code for r in _request(quorum, "IncrementalAlterConfigs", 1, body).responses] == [0]


def _chains(quorum, kind: int, name: str) -> dict:
    """Return {config: (value, source, [(synonym, value, source), ...])} from a DescribeConfigs v4 frame."""
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeConfigsRequest")
    body = cls(resources=[cls.DescribeConfigsResource(resource_type=kind, resource_name=name, configuration_keys=None)],
               include_synonyms=True, include_documentation=False)
    [result] = _request(quorum, "DescribeConfigs", 4, body).results
    assert result.error_code == 0, result.error_message
    return {c.name: (c.value, c.config_source, [(s.name, s.value, s.source) for s in c.synonyms])
            for c in result.configs}


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("quorum"), loop, voters=1, extra=FAST | STATIC) as q:
        with running_brokers(q, loop, (101,)):
            _set_cluster_default(q, log_cleanup_policy="compact", log_retention_ms="3600000")
            yield q


@pytest.fixture(scope="module")
def admin(quorum):
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})
    topic = NewTopic("golden", 1, 1, config={"segment.bytes": "2097152"})
    client.create_topics([topic], request_timeout=15)["golden"].result(20)
    return client


def _described(admin, kind: str, name: str) -> dict:
    from confluent_kafka.admin import ConfigResource

    [future] = admin.describe_configs([ConfigResource(kind, name)], request_timeout=15).values()
    return future.result(20)


def _source(entry) -> int:
    return int(getattr(entry.source, "value", entry.source))


def test_admin_client_topic_values_sources_and_synonyms(admin):
    configs = _described(admin, "topic", "golden")
    assert len(configs) == 36
    summary = {k: (configs[k].value, _source(configs[k]), sorted(configs[k].synonyms))
               for k in ("segment.bytes", "cleanup.policy", "retention.ms", "max.message.bytes",
                         "remote.storage.enable", "segment.ms")}
    assert summary == {
        "segment.bytes": ("2097152", 1, ["log.segment.bytes", "segment.bytes"]),   # set on the topic
        "cleanup.policy": ("compact", 3, ["log.cleanup.policy"]),                # dynamic cluster default
        "retention.ms": ("3600000", 3, ["log.retention.hours", "log.retention.ms"]),
        "max.message.bytes": ("1048588", 5, ["message.max.bytes"]),              # unset anywhere
        "remote.storage.enable": ("false", 5, []),                               # no broker synonym
        "segment.ms": ("604800000", 5, []),                                      # log.roll.ms unset: cut
    }
    assert not any(c.is_read_only or c.is_sensitive for c in configs.values())


def test_topic_synonym_chains_on_the_wire(admin, quorum):
    chains = _chains(quorum, 2, "golden")
    assert chains["segment.bytes"] == ("2097152", 1, [
        ("segment.bytes", "2097152", 1), ("log.segment.bytes", "1048576", 4), ("log.segment.bytes", "1073741824", 5)])
    assert chains["cleanup.policy"] == ("compact", 3, [
        ("log.cleanup.policy", "compact", 3), ("log.cleanup.policy", "delete", 5)])
    assert chains["retention.ms"] == ("3600000", 3, [
        ("log.retention.ms", "3600000", 3), ("log.retention.hours", "24", 4), ("log.retention.hours", "168", 5)])
    assert chains["flush.ms"] == ("9223372036854775807", 5, [])


def test_admin_client_broker_resource(admin, quorum):
    configs = _described(admin, "broker", "1")
    assert len(configs) == 314
    picked = {k: (configs[k].value, _source(configs[k]), configs[k].is_read_only, configs[k].is_sensitive)
              for k in ("node.id", "broker.id", "process.roles", "log.retention.hours", "log.retention.ms",
                        "log.segment.bytes", "num.io.threads", "controller.quorum.election.timeout.ms",
                        "sasl.jaas.config", "log.dirs")}
    assert picked == {
        "node.id": ("1", 4, True, False),
        "broker.id": ("1", 4, True, False),           # KafkaConfig copies node.id into broker.id
        "process.roles": ("controller", 4, True, False),
        "log.retention.hours": ("24", 4, True, False),
        "log.retention.ms": ("3600000", 3, False, False),
        "log.segment.bytes": ("1048576", 4, False, False),
        "num.io.threads": ("8", 5, False, False),
        "controller.quorum.election.timeout.ms": ("500", 4, True, False),
        "sasl.jaas.config": (None, 5, False, True),
        "log.dirs": (str(quorum.metadata_dir(1)), 4, True, False),
    }


def test_broker_chains_and_cluster_default_on_the_wire(admin, quorum):
    own = _chains(quorum, 4, "1")
    assert own["log.retention.hours"] == ("24", 4, [("log.retention.hours", "24", 4), ("log.retention.hours", "168", 5)])
    assert own["log.retention.ms"] == ("3600000", 3, [
        ("log.retention.ms", "3600000", 3), ("log.retention.hours", "24", 4), ("log.retention.hours", "168", 5)])
    assert own["node.id"] == ("1", 4, [("node.id", "1", 4), ("node.id", "-1", 5)])
    assert _chains(quorum, 4, "") == {
        "log.cleanup.policy": ("compact", 3, [("log.cleanup.policy", "compact", 3)]),
        "log.retention.ms": ("3600000", 3, [("log.retention.ms", "3600000", 3)])}
