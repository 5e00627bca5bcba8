"""Controller configuration from server .properties: Kafka's names, defaults and messages."""
from __future__ import annotations

import pytest

from kraftsman.controller.server.config import ConfigError, Endpoint, from_properties

BASE = {"process.roles": "controller", "node.id": "1", "controller.listener.names": "CONTROLLER",
        "listeners": "CONTROLLER://127.0.0.1:9093", "controller.quorum.voters": "1@127.0.0.1:9093,2@[::1]:9094",
        "log.dirs": "/data/a,/data/b"}


def test_defaults_are_kafkas():
    c = from_properties(dict(BASE))
    assert (c.election_timeout_ms, c.fetch_timeout_ms, c.session_timeout_ms, c.heartbeat_interval_ms) == (
        1000, 2000, 9000, 2000)
    assert c.snapshot_max_bytes == 20 * 1024 * 1024 and c.segment_bytes == 1 << 30
    assert c.static_voters == {1: ("127.0.0.1", 9093), 2: ("::1", 9094)}
    assert c.metadata_log_dir == "/data/a" and str(c.partition_dir) == "/data/a/__cluster_metadata-0"
    assert c.controller_listener() == Endpoint("CONTROLLER", "127.0.0.1", 9093)


def test_overrides_and_metadata_log_dir():
    c = from_properties(BASE | {"metadata.log.dir": "/meta", "broker.session.timeout.ms": "3000",
                                "unclean.leader.election.enable": "true"})
    assert c.metadata_log_dir == "/meta" and c.session_timeout_ms == 3000 and c.unclean_leader_election


def test_delegation_token_settings():
    c = from_properties(dict(BASE))
    assert c.delegation_token_secret_key is None and c.quorum_config().delegation_token_secret_key is None
    assert (c.delegation_token_max_lifetime_ms, c.delegation_token_expiry_time_ms,
            c.delegation_token_expiry_check_interval_ms) == (604_800_000, 86_400_000, 3_600_000)
    c = from_properties(BASE | {"delegation.token.master.key": "old", "delegation.token.expiry.time.ms": "5000"})
    assert c.quorum_config().delegation_token_secret_key == "old"  # the deprecated alias
    assert c.quorum_config().delegation_token_expiry_time_ms == 5000
    c = from_properties(BASE | {"delegation.token.secret.key": "new", "delegation.token.master.key": "old"})
    assert c.delegation_token_secret_key == "new" and "new" not in repr(c)
    with pytest.raises(ConfigError, match="Invalid value x for configuration delegation.token.max.lifetime.ms: "
                                          "Not a number of type LONG"):
        from_properties(BASE | {"delegation.token.max.lifetime.ms": "x"})


def test_bootstrap_servers_instead_of_voters():
    props = {k: v for k, v in BASE.items() if k != "controller.quorum.voters"}
    c = from_properties(props | {"controller.quorum.bootstrap.servers": "localhost:9093,localhost:9094"})
    assert c.static_voters == {} and c.bootstrap_servers == (("localhost", 9093), ("localhost", 9094))


@pytest.mark.parametrize("change, message", [
    ({"node.id": None}, 'Missing required configuration "node.id" which has no default value.'),
    ({"node.id": "x"}, "Invalid value x for configuration node.id: Not a number of type INT"),
    ({"process.roles": "broker"}, "process.roles must be 'controller'"),
    ({"controller.quorum.voters": None}, "either controller.quorum.bootstrap.servers must contain"),
    ({"controller.quorum.voters": "2@h:1"}, "the node id 1 must be included in the set of voters"),
    ({"controller.quorum.voters": "1@h"}, "Unable to parse 1@h"),
    ({"controller.listener.names": "OTHER"}, "controller.listener.names must contain at least one value"),
    ({"listeners": "CONTROLLER://h"}, "Unable to parse CONTROLLER://h to a broker endpoint"),
    ({"delete.topic.enable": "yes"}, "Expected value to be either true or false"),
])
def test_bad_settings_give_one_line(change, message):
    props = dict(BASE)
    for key, value in change.items():
        if value is None:
            props.pop(key)
        else:
            props[key] = value
    with pytest.raises(ConfigError) as info:
        from_properties(props)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_metadata_retention_settings_reach_the_raft_core():
    """metadata.max.retention.bytes / .ms: LONGs with Kafka's defaults (100 MiB, 7 days), no validator (a
    negative value turns the rule off), passed to the raft core's retention."""
    c = from_properties(dict(BASE))
    assert (c.retention_max_bytes, c.retention_millis) == (104_857_600, 604_800_000)
    raft = c.raft_config("cluster", bytes(16), "127.0.0.1", tick_ms=20, high_watermark_linger_ms=5)
    assert (raft.retention_max_bytes, raft.retention_millis) == (104_857_600, 604_800_000)
    c = from_properties(BASE | {"metadata.max.retention.bytes": " -1 ", "metadata.max.retention.ms": "3000000000"})
    raft = c.raft_config("cluster", bytes(16), "127.0.0.1", tick_ms=20, high_watermark_linger_ms=5)
    assert (raft.retention_max_bytes, raft.retention_millis) == (-1, 3_000_000_000)
    for key in ("metadata.max.retention.bytes", "metadata.max.retention.ms"):
        for bad in ("not_a_number", str(1 << 63)):
            with pytest.raises(ConfigError, match=f"Invalid value {bad} for configuration {key}: "
                                                  "Not a number of type LONG"):
                from_properties(BASE | {key: bad})


def test_a_voter_told_to_speak_kafka_39_runs_no_pre_vote_and_caps_vote_at_v1():
    from kraftsman.controller.server.api_versions import VOTE_KEY, controller_api_versions

    plain = from_properties(BASE)
    old = from_properties(BASE | {"kraftsman.raft.kafka.version": "3.9"})
    assert plain.raft_kafka_version == "4.0" and old.raft_kafka_version == "3.9"
    assert plain.raft_config("c", bytes(16), "h", tick_ms=10, high_watermark_linger_ms=0).pre_vote
    assert not old.raft_config("c", bytes(16), "h", tick_ms=10, high_watermark_linger_ms=0).pre_vote
    vote = {k.api_key: k.max_version for k in controller_api_versions(vote_max_version=1).api_keys}[VOTE_KEY]
    assert vote == 1
    assert {k.api_key: k.max_version for k in controller_api_versions().api_keys}[VOTE_KEY] == 2
    with pytest.raises(ConfigError, match="kraftsman.raft.kafka.version: String must be one of: 3.9, 4.0"):
        from_properties(BASE | {"kraftsman.raft.kafka.version": "3.8"})
