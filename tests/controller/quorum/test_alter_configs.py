"""IncrementalAlterConfigs, AlterConfigs and DescribeConfigs (Kafka 3.9 ConfigurationControlManager rules).

Defaults: the 36 topic configs and values a real Kafka 3.9 cluster reported in its CreateTopics v7 response
(kafka-wire-3.9 envelope-inner/001637), checked in test_replication_golden.py against the frame itself.
"""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum.alter_configs import alter_configs, incremental_alter_configs
from kraftsman.controller.quorum.describe_configs import describe_configs
from kraftsman.controller.quorum.topics import create_topics

from .replication_fixtures import M, S, cluster, create_request, run

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _image():
    return run(create_topics, cluster(1, 2), create_request(("t", 1, 1, {"retention.ms": "1000"})))[1]


def _incremental(image, *resources, validate_only=False, version=1):
    items = [S("IncrementalAlterConfigsRequest", "AlterConfigsResource", resource_type=kind, resource_name=name,
               configs=[S("IncrementalAlterConfigsRequest", "AlterableConfig", name=k, config_operation=op, value=v)
                        for k, op, v in ops]) for kind, name, ops in resources]
    request = M("IncrementalAlterConfigsRequest", resources=items, validate_only=validate_only)
    return run(incremental_alter_configs, image, request, version=version)


def _legacy(image, *resources, validate_only=False):
    items = [S("AlterConfigsRequest", "AlterConfigsResource", resource_type=kind, resource_name=name,
               configs=[S("AlterConfigsRequest", "AlterableConfig", name=k, value=v) for k, v in configs.items()])
             for kind, name, configs in resources]
    return run(alter_configs, image, M("AlterConfigsRequest", resources=items, validate_only=validate_only), version=2)


def _answers(result):
    return [(r.resource_type, r.resource_name, r.error_code, r.error_message) for r in result.response.responses]


def test_set_delete_append_subtract():
    result, image = _incremental(_image(), (2, "t", [("retention.ms", SET, "5"), ("cleanup.policy", APPEND, "compact"),
                                                      ("max.message.bytes", SET, "100")]))
    assert _answers(result) == [(2, "t", 0, None)]
    assert image.configs.resources[(2, "t")] == {"retention.ms": "5", "cleanup.policy": "delete,compact",
                                                 "max.message.bytes": "100"}
    result, image = _incremental(image, (2, "t", [("cleanup.policy", SUBTRACT, "delete"),
                                                  ("max.message.bytes", DELETE, None)]))
    assert image.configs.resources[(2, "t")] == {"retention.ms": "5", "cleanup.policy": "compact"}
    assert [(r.message.name, r.message.value) for r in result.records] == [("cleanup.policy", "compact"),
                                                                           ("max.message.bytes", None)]


def test_unchanged_topic_value_writes_no_record_but_broker_values_always_do():
    result, _ = _incremental(_image(), (2, "t", [("retention.ms", SET, "1000")]))
    assert result.records == []
    result, image = _incremental(_image(), (4, "", [("log.cleaner.threads", SET, "2")]),
                                 (4, "1", [("log.retention.ms", SET, "7200000")]))
    assert len(result.records) == 2
    result, _ = _incremental(image, (4, "", [("log.cleaner.threads", SET, "2")]))
    assert len(result.records) == 1


@pytest.mark.parametrize("resource,code,message", [
    ((2, "t", [("segment.ms", APPEND, "1")]), 40, "Can't APPEND to key segment.ms because its type is not LIST."),
    ((2, "t", [("retention.ms", SET, "x")]), 40, "Invalid value x for configuration retention.ms: Not a number of "
                                                 "type LONG"),
    ((2, "t", [("min.cleanable.dirty.ratio", SET, "2")]), 40, "Invalid value 2 for configuration "
                                                             "min.cleanable.dirty.ratio: Value must be no more than 1"),
    ((2, "t", [("preallocate", SET, "yes")]), 40, "Invalid value yes for configuration preallocate: Expected value "
                                                  "to be either true or false"),
    ((2, "t", [("compression.type", SET, "brotli")]), 40, "Invalid value brotli for configuration compression.type: "
                                                          "String must be one of: uncompressed, zstd, lz4, snappy, "
                                                          "gzip, producer"),
    ((2, "t", [("bogus", SET, "1")]), 40, "Unknown topic config name: bogus"),
    ((2, "zz", [("retention.ms", SET, "1")]), 3, "The topic 'zz' does not exist."),
    ((2, "", [("retention.ms", SET, "1")]), 42, "Default topic resources are not allowed."),
    ((4, "9", [("x", SET, "1")]), 102, "No broker with id 9 found."),
    ((4, "b", [("x", SET, "1")]), 42, "Invalid broker name b"),
    ((7, "x", [("x", SET, "1")]), 35, "Unknown resource type 7."),
])
def test_incremental_errors(resource, code, message):
    result, image = _incremental(_image(), resource)
    assert _answers(result) == [(resource[0], resource[1], code, message)]
    assert result.records == []


def test_controller_ids_are_valid_broker_resources():
    result, _ = _incremental(_image(), (4, "3", [("x", SET, "1")]))
    assert _answers(result) == [(4, "3", 0, None)]


def test_duplicate_resources_and_validate_only():
    result, _ = _incremental(_image(), (2, "t", [("retention.ms", SET, "5")]), (2, "t", [("retention.ms", SET, "6")]))
    assert _answers(result) == [(2, "t", 42, "Duplicate resource.")] and result.records == []
    result, _ = _incremental(_image(), (2, "t", [("retention.ms", SET, "5")]), validate_only=True)
    assert _answers(result) == [(2, "t", 0, None)] and result.records == []


def test_legacy_alter_replaces_the_whole_config():
    result, image = _legacy(_image(), (2, "t", {"segment.ms": "100"}))
    assert _answers(result) == [(2, "t", 0, None)]
    assert image.configs.resources[(2, "t")] == {"segment.ms": "100"}
    assert sorted((r.message.name, r.message.value) for r in result.records) == [("retention.ms", None),
                                                                                 ("segment.ms", "100")]
    result, _ = _legacy(image, (2, "t", {"segment.ms": "0"}))
    assert _answers(result) == [(2, "t", 40, "Invalid value 0 for configuration segment.ms: Value must be at least 1")]


def _describe(image, *resources, version=4, synonyms=False):
    items = [S("DescribeConfigsRequest", "DescribeConfigsResource", resource_type=k, resource_name=n,
               configuration_keys=keys) for k, n, keys in resources]
    request = M("DescribeConfigsRequest", resources=items, include_synonyms=synonyms)
    return run(describe_configs, image, request, version=version)[0]


def test_describe_topic_merges_overrides_with_defaults():
    result = _describe(_image(), (2, "t", None))
    [res] = result.response.results
    configs = {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive) for c in res.configs}
    assert len(configs) == 36 and res.error_code == 0
    assert configs["retention.ms"] == ("1000", 1, False, False)
    assert configs["segment.bytes"] == ("1073741824", 5, False, False)
    assert {c.name: c.config_type for c in res.configs}["cleanup.policy"] == 7  # LIST


def test_describe_filters_keys_and_reports_v0_defaults_and_synonyms():
    result = _describe(_image(), (2, "t", ["retention.ms", "preallocate"]), version=0)
    assert {c.name: c.is_default for c in result.response.results[0].configs} == {"retention.ms": False,
                                                                                  "preallocate": True}
    result = _describe(_image(), (2, "t", ["retention.ms"]), version=1, synonyms=True)
    [entry] = result.response.results[0].configs
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [("retention.ms", "1000", 1)]


def test_describe_errors_and_brokers():
    image = _incremental(_image(), (4, "", [("log.cleaner.threads", SET, "2")]),
                         (4, "1", [("log.retention.ms", SET, "7")]))[1]
    result = _describe(image, (2, "zz", None), (2, "a b", None), (4, "1", None), (4, "", None))
    r = result.response.results
    assert (r[0].error_code, r[0].error_message, r[0].configs) == (3, "", [])  # Kafka's "" (admin fixture)
    assert r[1].error_code == 17
    own = {c.name: (c.value, c.config_source) for c in r[2].configs}  # node 1 answers for itself: every key
    assert len(own) == 314
    assert (own["log.cleaner.threads"], own["log.retention.ms"]) == (("2", 3), ("7", 2))
    assert {c.name: (c.value, c.config_source) for c in r[3].configs} == {"log.cleaner.threads": ("2", 3)}
    r = _describe(image, (4, "2", None), (4, "x", None)).response.results
    assert [(x.error_code, x.error_message) for x in r] == [
        (42, "Unexpected broker id, expected 1 or empty string, but received 2"),
        (42, "Broker id must be an integer, but it is: x")]


def test_legacy_alter_with_a_null_value_deletes_the_key():
    result, image = _legacy(_image(), (2, "t", {"retention.ms": None, "segment.ms": "100"}))
    assert _answers(result) == [(2, "t", 0, None)]
    assert image.configs.resources[(2, "t")] == {"segment.ms": "100"}


def test_eligible_leader_replicas_guard_min_insync_replicas():
    """Kafka 4.x with ELR on: broker-level min.insync.replicas is frozen, the cluster-level one cannot go, and each
    change clears the ELR of the topic (or of every topic: an empty TopicName)."""
    from kraftsman.storage.records.metadata import ApiMessageAndVersion

    elr = ApiMessageAndVersion(M("FeatureLevelRecord", name="eligible.leader.replicas.version", feature_level=1), 0)
    image = run(create_topics, cluster(1, 2, mv=29), create_request(("t", 1, 1, {})))[1]
    from .replication_fixtures import replay
    image = replay(image, [elr])
    result, _ = _incremental(image, (4, "1", [("min.insync.replicas", SET, "2")]),
                             (4, "", [("min.insync.replicas", DELETE, None)]))
    assert _answers(result) == [
        (4, "1", 40, "Broker-level min.insync.replicas cannot be altered while ELR is enabled."),
        (4, "", 40, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")]
    assert result.records == []
    result, _ = _incremental(image, (2, "t", [("min.insync.replicas", SET, "1")]),
                             (4, "", [("min.insync.replicas", SET, "2")]))
    assert [(type(r.message).__name__.removeprefix("_S_"), getattr(r.message, "topic_name", None))
            for r in result.records] == [("ConfigRecord", None), ("ConfigRecord", None), ("ClearElrRecord", "t"),
                                         ("ClearElrRecord", "")]
