"""AssignReplicasToDirs on a real 3-voter quorum: a JBOD broker moves a replica to its second log directory."""
from __future__ import annotations

import pytest

from kraftsman.storage.protocol import codec

from .quorum_fixtures import (
    loop_fixture,
    running_brokers,
    running_quorum,
    stopped_follower,
)

loop = loop_fixture()
Assign = codec.message_class("AssignReplicasToDirsRequest")


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("quorum"), loop) as q:
        yield q


def _create_topic(broker, name: str):
    """Return a CreateTopics request for a 1-partition topic on broker `broker.broker_id` alone."""
    cls = codec.message_class("CreateTopicsRequest")
    assignment = cls.CreatableReplicaAssignment(partition_index=0, broker_ids=[broker.broker_id])
    body = cls(timeout_ms=10_000, validate_only=False, topics=[cls.CreatableTopic(
        name=name, num_partitions=-1, replication_factor=-1, assignments=[assignment], configs=[])])
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
