"""A real 3-voter kraftsman quorum on 127.0.0.1: elections, brokers, admin clients, failover, catch-up.

One quorum serves the whole module (start-up costs a few seconds); tests run in file order and each
leaves the quorum healthy for the next.
"""
from __future__ import annotations

import io
import signal

import pytest

from kraftsman.cli.common.environment import Environment
from kraftsman.controller.client.broker_sim import SimulatedBroker

from .quorum_fixtures import FAST, find_leader, loop_fixture, running_brokers, running_quorum, wait_for

loop = loop_fixture()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    # metadata.max.retention.bytes=0: each snapshot deletes the log below it, so a voter kept down while the
    # leader snapshots must download a snapshot (Kafka's 100 MiB default would let it fetch the log)
    extra = FAST | {"metadata.max.retention.bytes": "0"}
    with running_quorum(tmp_path_factory.mktemp("quorum"), loop, extra=extra) as q:
        yield q


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    with running_brokers(quorum, loop, (101, 102, 103), unfenced=False, rack_of=lambda b: f"r{b % 2}") as sims:
        yield sims


def admin(quorum):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})


def test_three_voters_elect_one_leader(quorum, loop):
    leader, part = loop.run(find_leader(quorum.addresses()))
    assert leader in quorum.ids
    assert sorted(v.replica_id for v in part.current_voters) == quorum.ids
    assert part.high_watermark > 0


def test_simulated_brokers_register_and_get_unfenced(brokers):
    wait_for(lambda: all(not b.fenced for b in brokers))
    assert all(b.broker_epoch > 0 for b in brokers)


def test_admin_client_describe_cluster_and_create_topic(quorum, brokers):
    from confluent_kafka.admin import NewTopic

    client = admin(quorum)
    cluster = client.describe_cluster(request_timeout=10).result(20)
    assert cluster.cluster_id == quorum.cluster_id
    futures = client.create_topics([NewTopic("orders", 6, 3)], request_timeout=15)
    futures["orders"].result(20)
    topics = client.list_topics(timeout=10).topics
    assert "orders" in topics and len(topics["orders"].partitions) == 6
    for p in topics["orders"].partitions.values():
        assert sorted(p.replicas) == [101, 102, 103] and p.leader in (101, 102, 103)


def test_admin_client_configs_partitions_and_delete(quorum, brokers):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions, NewTopic

    client = admin(quorum)
    client.create_topics([NewTopic("scratch", 1, 1)], request_timeout=15)["scratch"].result(20)
    resource = ConfigResource("topic", "scratch", incremental_configs=[
        ConfigEntry("retention.ms", "1234", incremental_operation=AlterConfigOpType.SET)])
    client.incremental_alter_configs([resource])[resource].result(20)
    described = client.describe_configs([ConfigResource("topic", "scratch")])
    configs = list(described.values())[0].result(20)
    assert configs["retention.ms"].value == "1234"
    client.create_partitions([NewPartitions("scratch", 3)])["scratch"].result(20)
    wait_for(lambda: len(client.list_topics(timeout=10).topics["scratch"].partitions) == 3)
    client.delete_topics(["scratch"], request_timeout=15)["scratch"].result(20)
    wait_for(lambda: "scratch" not in client.list_topics(timeout=10).topics)


def test_crashed_broker_is_fenced_then_unregistered(quorum, brokers, loop):
    from kraftsman.controller.client.controller_client import ActiveControllerClient
    from kraftsman.storage.protocol import codec

    extra = SimulatedBroker(104, quorum.addresses(), quorum.cluster_id, heartbeat_interval_ms=500)
    loop.run(extra.start())
    wait_for(lambda: not extra.fenced)
    extra.crash()
    client = ActiveControllerClient(list(quorum.addresses().values()))
    unregister = codec.message_class("UnregisterBrokerRequest")(broker_id=104)
    describe = codec.message_class("DescribeClusterRequest")(endpoint_type=1)

    def registered_ids():
        return {b.broker_id for b in loop.run(client.request("DescribeCluster", 1, describe)).brokers}

    wait_for(lambda: 104 not in registered_ids(), timeout=15)  # fenced brokers leave DescribeCluster
    response = loop.run(client.request("UnregisterBroker", 0, unregister))
    assert response.error_code == 0
    again = loop.run(client.request("UnregisterBroker", 0, unregister))
    assert again.error_code == 102  # BROKER_ID_NOT_REGISTERED
    loop.run(client.close())
    loop.run(extra.stop())


def test_topic_survives_sigkill_of_the_active_controller(quorum, brokers, loop):
    from confluent_kafka.admin import NewTopic

    client = admin(quorum)
    client.create_topics([NewTopic("durable", 3, 3)], request_timeout=15)["durable"].result(20)
    leader, _ = loop.run(find_leader(quorum.addresses()))
    quorum.kill(leader)
    new_leader, _ = loop.run(find_leader(quorum.addresses(), exclude={leader}))
    assert new_leader != leader
    client = admin(quorum)
    assert "durable" in client.list_topics(timeout=15).topics
    client.create_topics([NewTopic("after-failover", 1, 3)], request_timeout=15)["after-failover"].result(30)
    quorum.start(leader)
    quorum.wait_listening()


def test_restarted_voter_catches_up_and_its_log_decodes(quorum, loop):
    from kraftsman.cli.dump_log import tool as dump_log
    from kraftsman.controller.image.loader import load_directory

    leader, _ = loop.run(find_leader(quorum.addresses()))
    follower = next(i for i in quorum.ids if i != leader)
    try:
        status = quorum.terminate(follower)  # SIGTERM: clean shutdown, exit 0
        assert status == 0, quorum.log_tail(follower, 60)
    finally:
        quorum.start(follower)  # a failure here must not leave the voter down for the next tests
        quorum.wait_listening()

    def caught_up():
        _, part = loop.run(find_leader(quorum.addresses()))
        ends = {v.replica_id: v.log_end_offset for v in part.current_voters}
        return ends[follower] >= part.high_watermark - 1 and part.high_watermark
    wait_for(caught_up, timeout=30)
    quorum.terminate(follower)
    try:
        state = load_directory(quorum.partition_dir(follower))
        assert {"orders", "durable", "after-failover"} <= set(state.image.topics.by_name)
        # The log below the newest snapshot may be gone (snapshots every 4,000 bytes): dump both kinds.
        files = sorted(quorum.partition_dir(follower).glob("*.checkpoint"))
        files += sorted(quorum.partition_dir(follower).glob("*.log"))
        out, err = io.StringIO(), io.StringIO()
        status = dump_log.run(["--cluster-metadata-decoder", "--files", ",".join(map(str, files))],
                              Environment(stdout=out, stderr=err))
        assert status == 0, err.getvalue()
        assert '"name":"orders"' in out.getvalue().replace(" ", "")
    finally:
        quorum.start(follower)
        quorum.wait_listening()


def test_sigquit_logs_every_stack_and_the_controller_goes_on(quorum, loop):
    node = quorum.ids[-1]
    log_file = quorum.node_dir(node) / "controller.log"
    before = log_file.stat().st_size
    quorum.procs[node].send_signal(signal.SIGQUIT)
    wait_for(lambda: "asyncio tasks:" in log_file.read_text(errors="replace")[before:])
    dump = log_file.read_text(errors="replace")[before:]
    assert "stack dump (SIGQUIT)" in dump and 'Thread "MainThread"' in dump
    assert "in _tick_loop" in dump  # a task, with the coroutine it waits in
    assert quorum.procs[node].poll() is None
    loop.run(find_leader(quorum.addresses()))


def _voter_ends(loop, quorum):
    _, part = loop.run(find_leader(quorum.addresses()))
    return {v.replica_id: v.log_end_offset for v in part.current_voters}, part.high_watermark


def test_voter_behind_the_log_start_catches_up_from_a_snapshot(quorum, brokers, loop):
    from confluent_kafka.admin import NewTopic

    from kraftsman.cli.shell import tool as metadata_shell
    from kraftsman.storage.log.snapshot import list_snapshots

    leader, _ = loop.run(find_leader(quorum.addresses()))
    follower = next(i for i in quorum.ids if i != leader)
    wait_for(lambda: (lambda ends, hw: ends[follower] >= hw)(*_voter_ends(loop, quorum)))
    behind = _voter_ends(loop, quorum)[0][follower]
    quorum.kill(follower)
    client = admin(quorum)
    for batch in range(6):
        names = [f"bulk-{batch}-{i}" for i in range(20)]
        futures = client.create_topics([NewTopic(n, 4, 3) for n in names], request_timeout=20)
        for f in futures.values():
            f.result(30)
    leader_segments = [int(p.stem) for p in quorum.partition_dir(leader).glob("*.log")]
    assert min(leader_segments) > behind, "the leader should have deleted the segments the follower needs"
    quorum.start(follower)
    quorum.wait_listening()
    wait_for(lambda: (lambda ends, hw: ends[follower] >= hw - 1)(*_voter_ends(loop, quorum)), timeout=30)
    assert list_snapshots(quorum.partition_dir(follower))[-1].end_offset > behind  # fetched from the leader
    live = set(client.list_topics(timeout=10).topics)
    quorum.terminate(follower)
    out = io.StringIO()
    status = metadata_shell.run(["--directory", str(quorum.partition_dir(follower)), "ls", "/image/topics/byName"],
                                Environment(stdout=out, stderr=io.StringIO()))
    assert status == 0
    assert set(out.getvalue().split()) == live
    quorum.start(follower)
    quorum.wait_listening()
