"""DescribeConfigs synonyms and sources as Kafka 3.9's ConfigHelper builds them, without processes.

Every expectation below is worked out from Kafka's rules, not printed from kraftsman:
- layers, most specific first: dynamic broker config of this node (2), dynamic cluster default (3), static server
  properties (4), ConfigDef defaults (5); each layer lists the synonym names found in it, in the synonyms' order;
  everything before the first entry under the described name is dropped (ConfigHelper.configSynonyms);
- a topic config stands on its first broker synonym (ServerTopicConfigSynonyms: retention.ms -> log.retention.ms,
  then log.retention.minutes, log.retention.hours; cleanup.policy -> log.cleanup.policy; ...), preceded by a
  TOPIC_CONFIG (1) entry when the topic sets it; the source is the first synonym's, else DEFAULT_CONFIG (5).
"""
from __future__ import annotations

from kraftsman.controller.quorum.alter_configs import config_record
from kraftsman.controller.quorum.configs_synonyms import Layers, config_synonyms, java_double
from kraftsman.controller.quorum.describe_configs import describe_configs
from kraftsman.controller.quorum.topics import create_topics

from .replication_fixtures import M, S, cluster, context, create_request, replay, run

STATIC = {"node.id": "1", "process.roles": "controller", "log.retention.hours": "24", "log.cleanup.policy": "compact",
          "log.segment.bytes": "1048576", "delegation.token.secret.key": "s3cret", "custom.key": "abc"}


def _image(default=None, own=None):
    image = run(create_topics, cluster(1, 2), create_request(("t", 1, 1, {"cleanup.policy": "compact"})))[1]
    records = [config_record(4, "", k, v) for k, v in (default or {}).items()]
    records += [config_record(4, "1", k, v) for k, v in (own or {}).items()]
    return replay(image, records)


def _describe(image, *resources, static=STATIC):
    items = [S("DescribeConfigsRequest", "DescribeConfigsResource", resource_type=k, resource_name=n,
               configuration_keys=None) for k, n in resources]
    request = M("DescribeConfigsRequest", resources=items, include_synonyms=True)
    ctx = context(image, version=4, server_properties=tuple(static.items()))
    return describe_configs(ctx, request).response.results


def _configs(result):
    return {c.name: c for c in result.configs}


def _chain(entry):
    return [(s.name, s.value, s.source) for s in entry.synonyms]


def test_topic_synonyms_run_topic_then_dynamic_broker_default_static_default():
    image = _image(default={"log.cleanup.policy": "delete", "log.retention.ms": "5000"},
                   own={"log.segment.bytes": "2097152"})
    configs = _configs(_describe(image, (2, "t"))[0])
    policy = configs["cleanup.policy"]
    assert (policy.value, policy.config_source) == ("compact", 1)
    assert _chain(policy) == [("cleanup.policy", "compact", 1), ("log.cleanup.policy", "delete", 3),
                              ("log.cleanup.policy", "compact", 4), ("log.cleanup.policy", "delete", 5)]
    segment = configs["segment.bytes"]
    assert (segment.value, segment.config_source) == ("2097152", 2)
    assert _chain(segment) == [("log.segment.bytes", "2097152", 2), ("log.segment.bytes", "1048576", 4),
                               ("log.segment.bytes", "1073741824", 5)]
    retention = configs["retention.ms"]
    assert (retention.value, retention.config_source) == ("5000", 3)
    assert _chain(retention) == [("log.retention.ms", "5000", 3), ("log.retention.hours", "24", 4),
                                 ("log.retention.hours", "168", 5)]


def test_a_topic_config_whose_first_broker_synonym_is_unset_has_no_synonyms():
    configs = _configs(_describe(_image(), (2, "t"))[0])
    retention = configs["retention.ms"]  # log.retention.ms is set nowhere: the hours entries are cut away
    assert (retention.value, retention.config_source, _chain(retention)) == ("86400000", 5, [])
    flush = configs["flush.ms"]  # log.flush.interval.ms has no default; the scheduler interval is cut away
    assert (flush.value, flush.config_source, _chain(flush)) == ("9223372036854775807", 5, [])
    isr = configs["min.insync.replicas"]
    assert (isr.value, isr.config_source, _chain(isr)) == ("1", 5, [("min.insync.replicas", "1", 5)])


def test_topic_configs_without_broker_synonyms_list_only_the_topic_entry():
    image = replay(_image(), [config_record(2, "t", "remote.storage.enable", "true")])
    configs = _configs(_describe(image, (2, "t"))[0])
    assert _chain(configs["remote.storage.enable"]) == [("remote.storage.enable", "true", 1)]
    throttled = configs["leader.replication.throttled.replicas"]
    assert (throttled.value, throttled.config_source, _chain(throttled)) == ("", 5, [])
    assert len(configs) == 36 and not any(c.read_only or c.is_sensitive for c in configs.values())


def test_own_broker_resource_lists_every_key_with_broker_synonyms():
    image = _image(default={"log.retention.ms": "5000"})
    configs = _configs(_describe(image, (4, "1"))[0])
    assert len(configs) == 315  # the 314 KafkaConfig keys and custom.key from the properties file
    hours, millis = configs["log.retention.hours"], configs["log.retention.ms"]
    assert (hours.value, hours.config_source, hours.read_only) == ("24", 4, True)
    assert _chain(hours) == [("log.retention.hours", "24", 4), ("log.retention.hours", "168", 5)]
    assert (millis.value, millis.config_source, millis.read_only) == ("5000", 3, False)
    assert _chain(millis) == [("log.retention.ms", "5000", 3), ("log.retention.hours", "24", 4),
                              ("log.retention.hours", "168", 5)]
    broker_id = configs["broker.id"]  # KafkaConfig.populateSynonyms copies node.id
    assert (broker_id.value, _chain(broker_id)) == ("1", [("broker.id", "1", 4), ("broker.id", "-1", 5)])
    roles = configs["process.roles"]
    assert (roles.value, roles.config_type, _chain(roles)) == ("controller", 7, [("process.roles", "controller", 4),
                                                                                 ("process.roles", "", 5)])


def test_sensitive_and_unknown_keys_hide_their_values():
    configs = _configs(_describe(_image(), (4, "1"))[0])
    secret = configs["delegation.token.secret.key"]
    assert (secret.value, secret.is_sensitive, secret.config_type, _chain(secret)) == (
        None, True, 9, [("delegation.token.secret.key", None, 4)])
    password = configs["ssl.keystore.password"]
    assert (password.value, password.config_source, _chain(password)) == (None, 5, [])
    custom = configs["custom.key"]
    assert (custom.value, custom.is_sensitive, custom.config_type, custom.read_only) == (None, True, 0, True)


def test_default_broker_resource_keeps_only_what_kafka_accepts_there():
    default = {"log.retention.ms": "5000", "log.dirs": "/x", "listeners": "CONTROLLER://:1", "num.io.threads": "abc",
               "ssl.keystore.location": "/k", "log.cleaner.threads": "2"}
    image = _image(default=default, own={"listener.name.controller.ssl.keystore.location": "/own"})
    default_result, own_result = _describe(image, (4, ""), (4, "1"))
    configs = _configs(default_result)
    assert sorted(configs) == ["log.cleaner.threads", "log.retention.ms"]
    assert _chain(configs["log.retention.ms"]) == [("log.retention.ms", "5000", 3)]  # dynamic default layer only
    own = _configs(own_result)
    prefixed = own["listener.name.controller.ssl.keystore.location"]
    assert (prefixed.value, prefixed.config_type, prefixed.read_only) == ("/own", 2, True)
    assert _chain(prefixed) == [("listener.name.controller.ssl.keystore.location", "/own", 2)]
    assert _chain(own["ssl.keystore.location"]) == []  # a listener override is no synonym of its base name


def test_config_synonyms_cut_before_the_first_entry_under_the_name():
    layers = Layers({}, {"a.ms": "1"}, {"a.hours": "2"}, {"a.hours": "3"})
    assert config_synonyms(layers, "a.hours", ["a.ms", "a.hours"], False) == [("a.hours", "2", 4), ("a.hours", "3", 5)]
    assert config_synonyms(layers, "a.ms", ["a.ms", "a.hours"], True) == [("a.ms", None, 3), ("a.hours", None, 4),
                                                                          ("a.hours", None, 5)]
    assert config_synonyms(layers, "b", ["b", "a.hours"], False) == []


def test_java_double_renders_like_double_to_string():
    assert [java_double(x) for x in (0.9, 0.05, 1e7, 1.7976931348623157e308, 1e-4)] == [
        "0.9", "0.05", "1.0E7", "1.7976931348623157E308", "1.0E-4"]


def test_an_unknown_topic_answers_its_code_with_an_empty_message():
    """ConfigHelper sets only UNKNOWN_TOPIC_OR_PARTITION: the message stays "" (kafka-configs then prints
    'UnknownTopicOrPartitionException: ' with nothing after it, not Kafka's default text)."""
    (result,) = _describe(_image(), (2, "nope"))
    assert (result.error_code, result.error_message, result.configs) == (3, "", [])
