"""JBOD on a real 3-voter quorum: a broker moves a replica to its second log directory (AssignReplicasToDirs), and
loses a directory (a heartbeat's OfflineLogDirs): leadership and ISR leave it, the registration drops it."""
from __future__ import annotations

import pytest

from kraftsman.storage.protocol import codec

from .quorum_fixtures import (
    loop_fixture,
    running_brokers,
    running_quorum,
    stopped_follower,
    wait_for,
)

loop = loop_fixture()
Assign = codec.message_class("AssignReplicasToDirsRequest")


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("quorum"), loop) as q:
        yield q


def _create_topic(broker, name: str, *replicas):
    """Return a CreateTopics request for a topic whose partitions have `replicas` (default: one partition on
    `broker` alone)."""
    cls = codec.message_class("CreateTopicsRequest")
    replicas = replicas or ([broker.broker_id],)
    assignments = [cls.CreatableReplicaAssignment(partition_index=i, broker_ids=list(r)) for i, r in enumerate(replicas)]
    body = cls(timeout_ms=10_000, validate_only=False, topics=[cls.CreatableTopic(
        name=name, num_partitions=-1, replication_factor=-1, assignments=assignments, configs=[])])
    return body


def _assign(broker, directory, topic_id, partitions, epoch=None):
    """Return the coroutine sending AssignReplicasToDirs for one directory and topic from `broker`."""
    body = Assign(broker_id=broker.broker_id, broker_epoch=broker.broker_epoch if epoch is None else epoch,
                  directories=[Assign.DirectoryData(id=directory, topics=[Assign.TopicData(
                      topic_id=topic_id, partitions=[Assign.PartitionData(partition_index=p) for p in partitions])])])
    return broker.client.request("AssignReplicasToDirs", 0, body)


def test_a_jbod_broker_assigns_a_replica_to_its_second_directory(quorum, loop):
    from kraftsman.controller.image.loader import load_directory

    with running_brokers(quorum, loop, (201,), log_dirs=2) as (broker,):
        first, second = broker.directory_ids
        created = loop.run(broker.client.request("CreateTopics", 7, _create_topic(broker, "jbod")))
        (result,) = created.topics
        assert result.error_code == 0, result.error_message
        topic_id = result.topic_id

        stale = loop.run(_assign(broker, second, topic_id, [0], epoch=broker.broker_epoch + 1))
        assert (stale.error_code, stale.directories) == (77, [])  # STALE_BROKER_EPOCH
        response = loop.run(_assign(broker, second, topic_id, [0, 5]))
        assert response.error_code == 0
        assert [(p.partition_index, p.error_code) for d in response.directories for t in d.topics
                for p in t.partitions] == [(0, 0), (5, 3)]  # partition 5 does not exist
        assert (response.directories[0].id, response.directories[0].topics[0].topic_id) == (second, topic_id)

    with stopped_follower(quorum, loop) as follower:
        image = load_directory(quorum.partition_dir(follower)).image
    registration = image.cluster.brokers[201].record
    assert sorted(map(bytes, registration.log_dirs)) == sorted([bytes(first), bytes(second)])
    partition = image.topics.by_name["jbod"].partition(0)
    assert (partition.replicas, partition.directories) == ([201], [second])
    assert image.topics.by_name["jbod"].topic_id == topic_id


def _partitions(broker, loop, name: str) -> dict:
    """Return {partition: (leader, isr, offline replicas)} of a topic as the controllers' Metadata tells it."""
    cls = codec.message_class("MetadataRequest")
    response = loop.run(broker.client.request("Metadata", 12, cls(
        topics=[cls.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)))
    (topic,) = response.topics
    return {p.partition_index: (p.leader_id, list(p.isr_nodes), list(p.offline_replicas)) for p in topic.partitions}


def _health(quorum) -> dict:
    """Return `kafka-cluster health --output json` against the quorum, parsed, with its exit status."""
    import io
    import json

    from kraftsman.cli.cluster import tool as cluster_tool
    from kraftsman.cli.common.boundary import run_command
    from kraftsman.cli.common.environment import Environment

    out = io.StringIO()
    status = run_command(cluster_tool.run, ["health", "-C", quorum.bootstrap(), "--output", "json"],
                         Environment(stdout=out, stderr=io.StringIO(), env={}), prog="kafka-cluster")
    return json.loads(out.getvalue()) | {"status": status}


def test_a_jbod_broker_that_loses_a_directory_gives_up_its_partitions_there(quorum, loop):
    from kraftsman.controller.image.loader import load_directory

    with running_brokers(quorum, loop, (211, 212), log_dirs=2) as (jbod, other):
        first, second = jbod.directory_ids
        created = loop.run(jbod.client.request("CreateTopics", 7, _create_topic(
            jbod, "disks", [211, 212], [211, 212], [212, 211])))
        (result,) = created.topics
        assert result.error_code == 0, result.error_message
        for directory, partitions in ((second, [0, 2]), (first, [1])):
            assert loop.run(jbod.assign_replicas(directory, result.topic_id, partitions)).error_code == 0
        assert _partitions(jbod, loop, "disks") == {
            0: (211, [211, 212], []), 1: (211, [211, 212], []), 2: (212, [212, 211], [])}

        response = loop.run(jbod.fail_directory(second))          # rm -rf of the second log dir
        assert (response.error_code, response.is_fenced) == (0, False)
        expected = {0: (212, [212], [211]), 1: (211, [211, 212], []), 2: (212, [212], [211])}
        wait_for(lambda: _partitions(jbod, loop, "disks") == expected, timeout=10)
        loop.run(jbod.heartbeat())                                # it keeps listing it: nothing more changes
        assert _partitions(jbod, loop, "disks") == expected
        assert not jbod.fenced and jbod.errors == 0
        report = _health(quorum)                                  # kafka-cluster health names what the disk took
        assert (report["status"], report["healthy"]) == (5, False)
        assert {"disks-0", "disks-2"} <= set(report["partitions"]["under_replicated"])
        assert "disks-1" not in report["partitions"]["under_replicated"]

    with stopped_follower(quorum, loop) as follower:
        image = load_directory(quorum.partition_dir(follower)).image
    assert list(map(bytes, image.cluster.brokers[211].record.log_dirs)) == [bytes(first)]
    assert sorted(map(bytes, image.cluster.brokers[212].record.log_dirs)) == sorted(map(bytes, other.directory_ids))
    topic = image.topics.by_name["disks"]
    assert [topic.partition(p).directories[topic.partition(p).replicas.index(211)] for p in range(3)] == [
        second, first, second]   # the assignment stays: the replica is offline, not moved
