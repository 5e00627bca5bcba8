"""Admin calls on configs, quotas, SCRAM credentials and ACLs against a kraftsman controller and a simulated Kafka 3.9
broker (tests/controller/client/small_cluster): what each call sends, where it goes, and what it returns."""
from __future__ import annotations

import time

import pytest

from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.admin import Admin, ServerError
from kraftsman.controller.client.admin.acls import (
    ALLOW,
    ANY_ENTRY,
    CLUSTER,
    DENY,
    LITERAL,
    MATCH,
    PREFIXED,
    TOPIC,
    AccessControlEntry,
    AclBinding,
    ResourcePattern,
)
from kraftsman.controller.client.admin.configs import BROKER, DELETE, SET, AlterConfigOp, source_name
from kraftsman.controller.client.admin.configs import TOPIC as TOPIC_RESOURCE
from kraftsman.controller.client.admin.core import NodeUnavailable
from kraftsman.controller.client.admin.quotas import (
    DEFAULT,
    EXACT,
    SPECIFIED,
    QuotaEntry,
    QuotaFilterComponent,
    ScramDeletion,
    ScramUpsertion,
    java_ordered,
)
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors

from ..server.quorum_fixtures import loop_fixture
from .small_cluster import small_cluster

loop = loop_fixture()
READ, WRITE, DESCRIBE = 3, 4, 8


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    with small_cluster(tmp_path_factory.mktemp("admin-calls"), loop) as c:
        yield c


def admin(address: str, *, controllers: bool = False, seconds: float = 15) -> Admin:
    config = sc.ClientConfig(bootstrap_controllers=controllers, request_timeout_ms=int(seconds * 1000))
    return Admin(sc.parse_addresses(address), config, time.monotonic() + seconds)


def configs(a: Admin, resource: tuple[int, str], include_synonyms: bool = False) -> list:
    """Return one resource's entries (raise its error)."""
    config = a.describe_configs([resource], include_synonyms)[resource]
    if config.error is not None:
        raise config.error
    return config.entries


def create_topic(cluster, name: str) -> None:
    cls = codec.message_class("CreateTopicsRequest")
    body = cls(topics=[cls.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[],
                                          configs=[])], timeout_ms=10_000, validate_only=False)
    with sc.SyncConnection.open("127.0.0.1", cluster.broker.port, sc.ClientConfig(), time.monotonic() + 15) as conn:
        (result,) = conn.request("CreateTopics", 7, body, time.monotonic() + 15).topics
    assert result.error_code in (0, Errors.TOPIC_ALREADY_EXISTS), result
    cluster.sync(lambda image: name in image.topics.by_name)


# ---------------------------------------------------------------- configs


def test_topic_configs_set_delete_and_describe_with_synonyms(cluster):
    create_topic(cluster, "cfg")
    resource = (TOPIC_RESOURCE, "cfg")
    admin(cluster.server).incremental_alter_configs(resource, [AlterConfigOp("cleanup.policy", SET, "compact"),
                                                               AlterConfigOp("retention.ms", SET, "1000")])
    cluster.sync(lambda image: image.configs.resources.get((2, "cfg"), {}).get("retention.ms") == "1000")
    entries = {e.name: e for e in configs(admin(cluster.server), resource, include_synonyms=True)}
    policy = entries["cleanup.policy"]
    assert (policy.value, source_name(policy.source), policy.sensitive) == ("compact", "DYNAMIC_TOPIC_CONFIG", False)
    assert [(source_name(s.source), s.name, s.value) for s in policy.synonyms] == [
        ("DYNAMIC_TOPIC_CONFIG", "cleanup.policy", "compact"), ("DEFAULT_CONFIG", "log.cleanup.policy", "delete")]
    assert source_name(entries["segment.bytes"].source) == "DEFAULT_CONFIG"
    admin(cluster.server).incremental_alter_configs(resource, [AlterConfigOp("retention.ms", DELETE)])
    cluster.sync(lambda image: "retention.ms" not in image.configs.resources.get((2, "cfg"), {}))
    # through the controller too (Kafka's LeastLoadedBrokerOrActiveKController)
    entries = {e.name: e for e in configs(admin(cluster.controller, controllers=True), resource)}
    assert source_name(entries["retention.ms"].source) == "DEFAULT_CONFIG" and entries["cleanup.policy"].value == "compact"


def test_bad_value_and_missing_topic_are_server_errors_with_kafkas_messages(cluster):
    with pytest.raises(ServerError) as bad:
        admin(cluster.server).incremental_alter_configs((TOPIC_RESOURCE, "cfg"),
                                                        [AlterConfigOp("retention.ms", SET, "abc")])
    assert (bad.value.code, bad.value.message) == (
        Errors.INVALID_CONFIG, "Invalid value abc for configuration retention.ms: Not a number of type LONG")
    with pytest.raises(ServerError) as missing:
        configs(admin(cluster.server), (TOPIC_RESOURCE, "nope"))
    assert (missing.value.code, missing.value.message) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, "")


def test_broker_configs_go_to_the_broker_and_the_legacy_alter_replaces_them(cluster):
    resource = (BROKER, "4")
    admin(cluster.server).alter_configs(resource, [("log.cleaner.threads", "2")])
    cluster.sync(lambda image: image.configs.resources.get((4, "4"), {}).get("log.cleaner.threads") == "2")
    dynamic = [e for e in configs(admin(cluster.server), resource) if e.source == 2]
    assert [(e.name, e.value) for e in dynamic] == [("log.cleaner.threads", "2")]
    admin(cluster.server).alter_configs(resource, [])          # the legacy API deletes what it leaves out
    cluster.sync(lambda image: not image.configs.resources.get((4, "4")))
    default = (BROKER, "")
    admin(cluster.controller, controllers=True).alter_configs(default, [("log.retention.ms", "604800000")])
    cluster.sync(lambda image: image.configs.resources.get((4, ""), {}).get("log.retention.ms") == "604800000")
    entries = configs(admin(cluster.controller, controllers=True), default, include_synonyms=True)
    assert [(e.name, e.source, [s.source for s in e.synonyms]) for e in entries] == [("log.retention.ms", 3, [3])]
    admin(cluster.server).alter_configs(default, [])
    cluster.sync(lambda image: not image.configs.resources.get((4, "")))


def test_a_broker_the_cluster_does_not_list_times_out_as_kafkas_admin_does(cluster):
    started = time.monotonic()
    with pytest.raises(NodeUnavailable) as unknown:
        configs(admin(cluster.server, seconds=1.5), (BROKER, "9"))
    assert 1.4 < time.monotonic() - started < 5
    assert "node 9 is not in the cluster's metadata (call: DescribeConfigs)" in str(unknown.value)
    # with bootstrap controllers only a controller's own id is found: broker 4 is not
    with pytest.raises(NodeUnavailable, match=r"node 4 is not in the cluster's metadata"):
        configs(admin(cluster.controller, controllers=True, seconds=1), (BROKER, "4"))
    own = configs(admin(cluster.controller, controllers=True), (BROKER, "1"))
    assert {e.name: e.value for e in own}["node.id"] == "1"


# ---------------------------------------------------------------- quotas and SCRAM


def test_quotas_alter_describe_and_remove(cluster):
    a = admin(cluster.server)
    a.alter_client_quotas([("client-id", "c1")], [("producer_byte_rate", 1024), ("consumer_byte_rate", 2048)])
    a.alter_client_quotas([("user", None)], [("producer_byte_rate", 4096)])
    cluster.sync(lambda image: len(image.client_quotas.entities) == 2)
    clients = a.describe_client_quotas([QuotaFilterComponent("client-id", SPECIFIED)], strict=True)
    # Kafka's HashMap<String, Double> of two keys iterates consumer_byte_rate first (the fixture's order)
    assert clients == [QuotaEntry([("client-id", "c1")], [("consumer_byte_rate", 2048.0),
                                                         ("producer_byte_rate", 1024.0)])]
    assert a.describe_client_quotas([QuotaFilterComponent("user", DEFAULT)], strict=True) == [
        QuotaEntry([("user", None)], [("producer_byte_rate", 4096.0)])]
    assert a.describe_client_quotas([QuotaFilterComponent("client-id", EXACT, "c2")], strict=True) == []
    a.alter_client_quotas([("client-id", "c1")], [("producer_byte_rate", None), ("consumer_byte_rate", None)])
    a.alter_client_quotas([("user", None)], [("producer_byte_rate", None)])
    cluster.sync(lambda image: not image.client_quotas.entities)


def test_a_bad_quota_is_the_controllers_error_and_controllers_do_not_describe_quotas(cluster):
    with pytest.raises(ServerError) as bad:
        admin(cluster.server).alter_client_quotas([("client-id", "c1")], [("not_a_quota", 1.0)])
    assert bad.value.code == Errors.INVALID_REQUEST
    with pytest.raises(sc.UnsupportedVersion):
        admin(cluster.controller, controllers=True).describe_client_quotas(
            [QuotaFilterComponent("user", SPECIFIED)], strict=True)


def test_java_order_of_quota_entities_follows_their_map_hashes():
    cls = codec.message_class("DescribeClientQuotasResponse")

    def entry(name):
        return cls.EntryData(entity=[cls.EntityData(entity_type="user", entity_name=name)],
                             values=[cls.ValueData(key="request_percentage", value=50.0)])
    # the recording printed the default user before alice whichever order the broker answered in
    for entries in ([entry("alice"), entry(None)], [entry(None), entry("alice")]):
        assert [e.entity for e in java_ordered(entries)] == [[("user", None)], [("user", "alice")]]


def test_scram_credentials_are_salted_by_the_client_and_described(cluster):
    a = admin(cluster.server)
    outcome = a.alter_user_scram_credentials([ScramUpsertion("alice", "SCRAM-SHA-256", 8192, "pw")], [])
    assert outcome == {"alice": None}
    cluster.sync(lambda image: "alice" in image.scram.users(1))
    described = {r.user: r for r in a.describe_user_scram_credentials()}
    assert described["alice"].credentials == [("SCRAM-SHA-256", 8192)] and described["alice"].error_code == 0
    # through the controller (a kraftsman addition to kafka-configs: Kafka 3.9 controllers serve it)
    (mine,) = admin(cluster.controller, controllers=True).describe_user_scram_credentials(["alice"])
    assert mine.credentials == [("SCRAM-SHA-256", 8192)]
    (nobody,) = a.describe_user_scram_credentials(["nobody"])
    assert nobody.error_code == Errors.RESOURCE_NOT_FOUND
    refused = a.alter_user_scram_credentials([ScramUpsertion("bob", "SCRAM-SHA-256", 4096, "")],
                                             [ScramDeletion("", "SCRAM-SHA-512")])
    assert {u: (e.code, e.message) for u, e in refused.items()} == {
        "bob": (Errors.UNACCEPTABLE_CREDENTIAL, "Password must not be empty"),
        "": (Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")}
    gone = a.alter_user_scram_credentials([], [ScramDeletion("alice", "SCRAM-SHA-256")])
    assert gone == {"alice": None}
    again = a.alter_user_scram_credentials([], [ScramDeletion("alice", "SCRAM-SHA-256")])
    assert again["alice"].code == Errors.RESOURCE_NOT_FOUND


# ---------------------------------------------------------------- ACLs


def test_acls_create_describe_match_and_delete(cluster):
    a = admin(cluster.server)
    plain = ResourcePattern(TOPIC, "plain", LITERAL)
    prefixed = ResourcePattern(TOPIC, "t-", PREFIXED)
    bindings = [AclBinding(plain, AccessControlEntry("User:alice", "*", READ, ALLOW)),
                AclBinding(plain, AccessControlEntry("User:bob", "10.0.0.1", WRITE, DENY)),
                AclBinding(prefixed, AccessControlEntry("User:alice", "*", 2, ALLOW)),
                AclBinding(ResourcePattern(CLUSTER, "kafka-cluster", LITERAL),
                           AccessControlEntry("User:alice", "*", DESCRIBE, ALLOW))]
    assert a.create_acls(bindings) == [None] * 4
    cluster.sync(lambda image: len(image.acls.entries) == 4)
    assert set(a.describe_acls(plain)) == set(bindings[:2])
    matched = a.describe_acls(ResourcePattern(TOPIC, "t-p3r2", MATCH))
    assert matched == [bindings[2]]
    everything = a.describe_acls(ResourcePattern(1, None, 1))
    assert set(everything) == set(bindings)
    assert str(bindings[1].pattern) == "ResourcePattern(resourceType=TOPIC, name=plain, patternType=LITERAL)"
    assert str(bindings[1].entry) == "(principal=User:bob, host=10.0.0.1, operation=WRITE, permissionType=DENY)"
    (outcome,) = a.delete_acls([AclBinding(plain, AccessControlEntry("User:alice", None, READ, ALLOW))])
    assert outcome.error is None and outcome.matched == [(bindings[0], None)]
    (outcome,) = admin(cluster.controller, controllers=True).delete_acls([AclBinding(ResourcePattern(1, None, 1),
                                                                                       ANY_ENTRY)])
    assert {b for b, _ in outcome.matched} == set(bindings[1:])


def test_a_bad_acl_binding_is_refused_per_binding(cluster):
    entry = AccessControlEntry("User:a", "*", DESCRIBE, ALLOW)
    bad = AclBinding(ResourcePattern(CLUSTER, "other", LITERAL), entry)
    good = AclBinding(ResourcePattern(TOPIC, "x", LITERAL), entry)
    error, fine = admin(cluster.server).create_acls([bad, good])
    assert fine is None and isinstance(error, ServerError) and error.code == Errors.INVALID_REQUEST
