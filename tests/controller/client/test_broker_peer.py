"""confluent-kafka's AdminClient (librdkafka) against simulated Kafka 3.9 brokers (broker_apis.ServingBroker) on a
real 3-voter kraftsman quorum started by the test; kraftsman's own client for the RPCs confluent-kafka lacks
(reassignments, client quotas, DescribeLogDirs).

One quorum and two brokers (ids 4 and 5, free ports) serve the module; tests run in file order.
"""
from __future__ import annotations

import time

import pytest
from confluent_kafka import ElectionType, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from kraftsman.cli.demo.local_quorum import free_ports
from kraftsman.controller.client.broker_apis.api_table import BROKER_APIS
from kraftsman.controller.client.broker_apis.serving import ServingBroker
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E

from ..server.quorum_fixtures import FAST, find_leader, loop_fixture, running_quorum, wait_for

AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:ANONYMOUS", "allow.everyone.if.no.acl.found": "true"}
loop = loop_fixture()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    extra = {**FAST, **AUTHORIZER, "broker.session.timeout.ms": "9000"}
    with running_quorum(tmp_path_factory.mktemp("broker-peer"), loop, extra=extra) as q:
        yield q


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    ports = dict(zip((4, 5), free_ports(2)))
    sims = {b: ServingBroker(b, quorum.addresses(), quorum.cluster_id, port=p, heartbeat_interval_ms=500,
                             properties={**AUTHORIZER, "log.dirs": f"/data/b{b}"}) for b, p in ports.items()}
    try:
        for sim in sims.values():
            loop.run(sim.start())
        wait_for(lambda: all(_unfenced(s.image, b) for s in sims.values() for b in sims))
        yield sims
    finally:
        for sim in sims.values():
            loop.run(sim.close())


@pytest.fixture(scope="module")
def admin(brokers):
    return AdminClient({"bootstrap.servers": f"127.0.0.1:{brokers[4].port}"})


def _unfenced(image, broker_id: int) -> bool:
    registration = image.cluster.brokers.get(broker_id)
    return registration is not None and not registration.record.fenced


def _result(futures: dict, timeout: float = 30):
    return {key: future.result(timeout=timeout) for key, future in futures.items()}


def _partition(brokers, topic: str, index: int):
    image = brokers[4].image if brokers[4].listener.serving else brokers[5].image
    t = image.topics.by_name.get(topic)
    return None if t is None else t.partition(index)


def _send(loop, broker, api: str, version: int, body):
    from kraftsman.controller.wire.connection import Connection

    async def exchange():
        conn = await Connection.open("127.0.0.1", broker.port, client_id="peer-test", timeout_ms=10_000)
        try:
            await conn.negotiate()
            return await conn.request(api, version, body, timeout_ms=70_000)
        finally:
            await conn.close()
    return loop.run(exchange())


def test_every_broker_advertises_a_39_brokers_table_behind_a_kraftsman_quorum(brokers, loop):
    from kraftsman.controller.wire.connection import Connection

    async def versions(port):
        conn = await Connection.open("127.0.0.1", port, client_id="peer-test", timeout_ms=5000)
        try:
            body = codec.message_class("ApiVersionsRequest")(client_software_name="t", client_software_version="1")
            return await conn.request("ApiVersions", 3, body)
        finally:
            await conn.close()
    for sim in brokers.values():
        response = loop.run(versions(sim.port))
        assert {k.api_key: (k.min_version, k.max_version) for k in response.api_keys} == BROKER_APIS
        assert [(f.name, f.max_version_level) for f in response.finalized_features] == [("metadata.version", 21)]


def test_describe_cluster_lists_both_brokers_and_names_one_of_them_controller(admin, brokers):
    cluster = admin.describe_cluster().result(timeout=20)
    assert sorted((n.id, n.port) for n in cluster.nodes) == sorted((b, s.port) for b, s in brokers.items())
    assert cluster.controller.id in brokers and len(cluster.cluster_id) == 22


def test_topics_are_created_listed_described_and_grown(admin, brokers):
    _result(admin.create_topics([NewTopic("peer-rf2", 3, 2), NewTopic("peer-assigned", 2, replica_assignment=[[5], [4]]),
                                 NewTopic("peer-cfg", 1, 1, config={"cleanup.policy": "compact"})]))
    wait_for(lambda: _partition(brokers, "peer-cfg", 0) is not None)
    assert {"peer-rf2", "peer-assigned", "peer-cfg"} <= set(admin.list_topics(timeout=10).topics)
    described = _result(admin.describe_topics(TopicCollection(["peer-rf2", "peer-assigned"])))
    rf2 = described["peer-rf2"]
    assert len(rf2.partitions) == 3 and all(sorted(n.id for n in p.replicas) == [4, 5] for p in rf2.partitions)
    assert all(sorted(n.id for n in p.isr) == [4, 5] and p.leader.id == p.replicas[0].id for p in rf2.partitions)
    assert [[n.id for n in p.replicas] for p in described["peer-assigned"].partitions] == [[5], [4]]
    _result(admin.create_partitions([NewPartitions("peer-assigned", 3, replica_assignment=[[5]])]))
    wait_for(lambda: _partition(brokers, "peer-assigned", 2) is not None)
    assert list(_partition(brokers, "peer-assigned", 2).replicas) == [5]


def test_topic_errors_are_kafkas(admin):
    with pytest.raises(KafkaException) as existing:
        _result(admin.create_topics([NewTopic("peer-rf2", 1, 1)]))
    assert existing.value.args[0].code() == E.TOPIC_ALREADY_EXISTS
    assert existing.value.args[0].str() == "Topic 'peer-rf2' already exists."
    with pytest.raises(KafkaException) as bad:
        _result(admin.create_topics([NewTopic("bad name!", 1, 1)]))
    assert bad.value.args[0].code() == E.INVALID_TOPIC_EXCEPTION


def test_a_topic_is_deleted(admin, brokers):
    _result(admin.create_topics([NewTopic("peer-doomed", 2, 1)]))
    wait_for(lambda: _partition(brokers, "peer-doomed", 1) is not None)
    _result(admin.delete_topics(["peer-doomed"]))
    wait_for(lambda: "peer-doomed" not in admin.list_topics(timeout=10).topics)


def test_topic_and_broker_configs_are_described_and_altered(admin, brokers):
    topic = ConfigResource(ResourceType.TOPIC, "peer-cfg")
    entries = _result(admin.describe_configs([topic]))[topic]
    assert (entries["cleanup.policy"].value, entries["cleanup.policy"].source) == ("compact", 1)  # DYNAMIC_TOPIC
    change = ConfigResource(ResourceType.TOPIC, "peer-cfg", incremental_configs=[
        ConfigEntry("retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", None, incremental_operation=AlterConfigOpType.DELETE)])
    _result(admin.incremental_alter_configs([change]))
    wait_for(lambda: brokers[5].image.configs.resources.get((2, "peer-cfg")) == {"retention.ms": "86400000"})
    own = ConfigResource(ResourceType.BROKER, "5", incremental_configs=[
        ConfigEntry("log.cleaner.threads", "2", incremental_operation=AlterConfigOpType.SET)])
    _result(admin.incremental_alter_configs([own]))   # goes to broker 5, checked there, forwarded
    broker5 = ConfigResource(ResourceType.BROKER, "5")
    wait_for(lambda: _result(admin.describe_configs([broker5]))[broker5]["log.cleaner.threads"].value == "2")
    entry = _result(admin.describe_configs([broker5]))[broker5]["log.cleaner.threads"]
    assert entry.source == 2  # DYNAMIC_BROKER_CONFIG


def test_acls_are_created_described_and_deleted(admin, brokers):
    binding = AclBinding(ResourceType.TOPIC, "peer-rf2", ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
    _result(admin.create_acls([binding]))
    any_topic = AclBindingFilter(ResourceType.TOPIC, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                 AclPermissionType.ANY)
    wait_for(lambda: binding in admin.describe_acls(any_topic).result(timeout=10))
    _result(admin.delete_acls([any_topic]))
    wait_for(lambda: admin.describe_acls(any_topic).result(timeout=10) == [])


def test_scram_credentials_are_upserted_and_described(admin):
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192)
    _result(admin.alter_user_scram_credentials([UserScramCredentialUpsertion("alice", info, b"pw")]))
    def described():
        try:
            return admin.describe_user_scram_credentials(["alice"])["alice"].result(timeout=10)
        except KafkaException:   # RESOURCE_NOT_FOUND until the broker's image has the credential
            return None
    wait_for(described)
    described = described()
    assert [(c.mechanism, c.iterations) for c in described.scram_credential_infos] == [
        (ScramMechanism.SCRAM_SHA_256, 8192)]


def test_client_quotas_are_altered_and_described(brokers, loop):
    alter = codec.message_class("AlterClientQuotasRequest")
    entry = alter.EntryData(entity=[alter.EntityData(entity_type="client-id", entity_name="c1")],
                            ops=[alter.OpData(key="producer_byte_rate", value=1024.0, remove=False)])
    answer = _send(loop, brokers[4], "AlterClientQuotas", 1, alter(entries=[entry], validate_only=False))
    assert [e.error_code for e in answer.entries] == [0]
    describe = codec.message_class("DescribeClientQuotasRequest")
    request = describe(components=[describe.ComponentData(entity_type="client-id", match_type=2, match=None)],
                       strict=False)
    wait_for(lambda: _send(loop, brokers[5], "DescribeClientQuotas", 1, request).entries)
    (found,) = _send(loop, brokers[5], "DescribeClientQuotas", 1, request).entries
    assert [(v.key, v.value) for v in found.values] == [("producer_byte_rate", 1024.0)]


def test_a_stopped_broker_leaves_the_isr_and_rejoins_when_it_starts_again(admin, brokers, loop):
    loop.run(brokers[5].stop())
    wait_for(lambda: all(list(_partition(brokers, "peer-rf2", i).isr) == [4] for i in range(3)))
    assert _partition(brokers, "peer-assigned", 0).leader == -1   # its only replica is down
    loop.run(brokers[5].start())
    wait_for(lambda: all(sorted(_partition(brokers, "peer-rf2", i).isr) == [4, 5] for i in range(3)), timeout=30)
    assert _partition(brokers, "peer-assigned", 0).leader == 5


def test_a_preferred_election_moves_leaders_back(admin, brokers):
    moved = [TopicPartition("peer-rf2", i) for i in range(3) if _partition(brokers, "peer-rf2", i).replicas[0] == 5]
    assert moved, "broker 5 led no partition before its restart"
    result = admin.elect_leaders(ElectionType.PREFERRED, moved).result(timeout=30)
    assert all(error is None for error in result.values())
    wait_for(lambda: all(_partition(brokers, "peer-rf2", tp.partition).leader == 5 for tp in moved))
    again = admin.elect_leaders(ElectionType.PREFERRED, moved[:1]).result(timeout=30)
    assert [e.code() for e in again.values()] == [E.ELECTION_NOT_NEEDED]


def _reassign(loop, broker, topic: str, index: int, replicas):
    cls = codec.message_class("AlterPartitionReassignmentsRequest")
    body = cls(timeout_ms=30_000, topics=[cls.ReassignableTopic(name=topic, partitions=[
        cls.ReassignablePartition(partition_index=index, replicas=replicas)])])
    answer = _send(loop, broker, "AlterPartitionReassignments", 0, body)
    assert [p.error_code for t in answer.responses for p in t.partitions] == [0]


def test_a_reassignment_copies_the_data_and_completes(admin, brokers, loop):
    _result(admin.create_topics([NewTopic("peer-move", 1, replica_assignment=[[4]])]))
    wait_for(lambda: _partition(brokers, "peer-move", 0) is not None)
    loop.run(_append(brokers[4], "peer-move", 0, 300_000))
    _reassign(loop, brokers[5], "peer-move", 0, [5])
    wait_for(lambda: list(_partition(brokers, "peer-move", 0).replicas) == [5] and
             list(_partition(brokers, "peer-move", 0).isr) == [5])
    dirs = _send(loop, brokers[5], "DescribeLogDirs", 4, codec.message_class("DescribeLogDirsRequest")(topics=None))
    sizes = {(t.name, p.partition_index): p.partition_size for r in dirs.results for t in r.topics for p in t.partitions}
    assert sizes[("peer-move", 0)] >= 300_000 and dirs.results[0].log_dir == "/data/b5"


def test_a_throttled_reassignment_stays_in_progress_and_is_cancelled(admin, brokers, loop):
    loop.run(_append(brokers[5], "peer-move", 0, 3_000_000))
    topic = ConfigResource(ResourceType.TOPIC, "peer-move", incremental_configs=[
        ConfigEntry("leader.replication.throttled.replicas", "0:5", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("follower.replication.throttled.replicas", "0:4", incremental_operation=AlterConfigOpType.SET)])
    rates = [ConfigResource(ResourceType.BROKER, str(b), incremental_configs=[
        ConfigEntry("leader.replication.throttled.rate", "1000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("follower.replication.throttled.rate", "1000", incremental_operation=AlterConfigOpType.SET)])
        for b in (4, 5)]
    for resource in (topic, *rates):   # librdkafka sends one BROKER resource per call
        _result(admin.incremental_alter_configs([resource]))
    wait_for(lambda: "leader.replication.throttled.rate" in brokers[5].image.configs.resources.get((4, "5"), {}))
    _reassign(loop, brokers[4], "peer-move", 0, [4])
    time.sleep(3)
    listing = _send(loop, brokers[4], "ListPartitionReassignments", 0,
                    codec.message_class("ListPartitionReassignmentsRequest")(timeout_ms=10_000, topics=None))
    ongoing = [(t.name, p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas)
               for t in listing.topics for p in t.partitions]
    assert ongoing == [("peer-move", 0, [4, 5], [4], [5])]
    copied = brokers[4].replicas.logs[(_topic_id(brokers, "peer-move"), 0)].size
    assert 0 < copied < brokers[5].replicas.logs[(_topic_id(brokers, "peer-move"), 0)].size  # one fetch, then held
    _reassign(loop, brokers[5], "peer-move", 0, None)
    wait_for(lambda: list(_partition(brokers, "peer-move", 0).replicas) == [5])


def test_writes_reach_a_new_active_controller(admin, brokers, loop, quorum):
    """The broker's forwarding finds the new active controller after the old one stops (NOT_CONTROLLER and a
    broken connection are retried, as Kafka's forwarding channel does)."""
    leader, _ = loop.run(find_leader(quorum.addresses()))
    assert quorum.terminate(leader) == 0
    try:
        _result(admin.create_topics([NewTopic("peer-after-failover", 1, 2)]), timeout=60)
        wait_for(lambda: _partition(brokers, "peer-after-failover", 0) is not None, timeout=30)
        assert sum(b.channel.forwarded for b in brokers.values()) > 0
    finally:
        quorum.start(leader)
        quorum.wait_listening()


def _topic_id(brokers, name: str) -> bytes:
    return brokers[4].image.topics.by_name[name].topic_id


async def _append(broker, topic: str, index: int, nbytes: int) -> None:
    broker.append(topic, index, nbytes)

