"""AlterPartition (v0-v3) validation and ISR changes, and PartitionChangeBuilder corner cases.

Error choices follow Kafka 3.9's ReplicationControlManager.validateAlterPartitionData, in its order.
"""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum.partitions import PartitionChangeBuilder, new_partition_record, new_partition_records
from kraftsman.controller.quorum.reassignment import alter_partition
from kraftsman.controller.quorum.topics import create_topics

from .replication_fixtures import M, S, broker, cluster, replay, run


def _image(*brokers):
    items = [S("CreateTopicsRequest", "CreatableReplicaAssignment", partition_index=0, broker_ids=[1, 2, 3])]
    request = M("CreateTopicsRequest", topics=[S("CreateTopicsRequest", "CreatableTopic", name="t", num_partitions=-1,
                                                 replication_factor=-1, assignments=items)])
    return run(create_topics, cluster(*(brokers or (1, 2, 3))), request)[1]


def _alter(image, isr, version=3, broker_id=1, leader_epoch=0, partition_epoch=0, epochs=None, lrs=0,
           broker_epoch=None, topic=None):
    t = image.topics.by_name["t"]
    data = S("AlterPartitionRequest", "PartitionData", partition_index=0, leader_epoch=leader_epoch,
             partition_epoch=partition_epoch, leader_recovery_state=lrs, new_isr=list(isr),
             new_isr_with_epochs=[S("AlterPartitionRequest", "BrokerState", broker_id=b,
                                    broker_epoch=(epochs or {}).get(b, -1)) for b in isr])
    topic_data = S("AlterPartitionRequest", "TopicData", topic_name=topic or "t", topic_id=t.topic_id,
                   partitions=[data])
    epoch = image.cluster.brokers[broker_id].record.broker_epoch if broker_epoch is None else broker_epoch
    request = M("AlterPartitionRequest", broker_id=broker_id, broker_epoch=epoch, topics=[topic_data])
    return run(alter_partition, image, request, version=version)


def _code(result):
    return result.response.topics[0].partitions[0].error_code


def test_shrink_then_expand_the_isr():
    image = _image()
    result, image = _alter(image, [1, 2])
    p = result.response.topics[0].partitions[0]
    assert (p.error_code, p.leader_id, p.leader_epoch, p.isr, p.partition_epoch) == (0, 1, 0, [1, 2], 1)
    assert [r.message.isr for r in result.records] == [[1, 2]] and result.records[0].message.leader == -2
    result, image = _alter(image, [1, 2, 3], partition_epoch=1)
    assert _code(result) == 0 and image.topics.by_name["t"].partition(0).isr == [1, 2, 3]


def test_same_isr_writes_nothing_and_answers_the_current_state():
    result, _ = _alter(_image(), [1, 2, 3])
    assert result.records == [] and result.response.topics[0].partitions[0].partition_epoch == 0


@pytest.mark.parametrize("kwargs,code", [
    (dict(isr=[1, 2], leader_epoch=1), 41),                       # newer leader epoch: NOT_CONTROLLER
    (dict(isr=[1, 2], partition_epoch=3), 41),
    (dict(isr=[1, 2], leader_epoch=-1), 74),                      # FENCED_LEADER_EPOCH
    (dict(isr=[2, 3], broker_id=2), 42),                          # not the leader
    (dict(isr=[1, 4]), 42),                                       # not a replica
    (dict(isr=[2, 3]), 42),                                       # leader left out
    (dict(isr=[1, 2], lrs=1), 42),                                # RECOVERED -> RECOVERING
])
def test_validation_errors(kwargs, code):
    image = _image(1, 2, 3, 4)
    result, _ = _alter(image, **kwargs)
    assert _code(result) == code and result.records == []


def test_older_partition_epoch_is_invalid_update_version():
    image = _alter(_image(), [1, 2])[1]
    result, _ = _alter(image, [1], partition_epoch=0)
    assert _code(result) == 95


@pytest.mark.parametrize("version,code", [(3, 107), (2, 107), (1, 55), (0, 55)])
def test_ineligible_replicas_by_version(version, code):
    image = _alter(_image(), [1, 2])[1]
    image = replay(image, [broker(3, fenced=True)])
    result, _ = _alter(image, [1, 2, 3], version=version, partition_epoch=1)
    assert _code(result) == code


def test_broker_epoch_mismatch_inside_the_isr_is_ineligible():
    image = _alter(_image(), [1, 2])[1]
    result, _ = _alter(image, [1, 2, 3], partition_epoch=1, epochs={3: 999})
    assert _code(result) == 107


def test_stale_broker_epoch_fails_the_request():
    result, _ = _alter(_image(), [1, 2], broker_epoch=5)
    assert result.response.error_code == 77 and result.response.topics == [] and result.records == []


@pytest.mark.parametrize("version,code", [(1, 3), (2, 100)])
def test_unknown_topic_by_name_or_id(version, code):
    image = _image()
    t = image.topics.by_name["t"]
    request = M("AlterPartitionRequest", broker_id=1, broker_epoch=11, topics=[S(
        "AlterPartitionRequest", "TopicData", topic_name="zz", topic_id=bytes(16),
        partitions=[S("AlterPartitionRequest", "PartitionData", partition_index=0)])])
    assert t is not None
    result, _ = run(alter_partition, image, request, version=version)
    assert _code(result) == code


def test_builder_returns_none_without_change_and_elects_preferred():
    image = _image()
    t = image.topics.by_name["t"]
    builder = PartitionChangeBuilder(image, t.partition(0), t.topic_id, 0)
    assert builder.build() is None
    builder.target_isr = [2, 3]
    record = builder.build().message
    assert (record.isr, record.leader) == ([2, 3], 2)


def test_builder_directories_follow_replicas_at_v1_only():
    for mv, expect_dirs in ((21, True), (14, False)):
        image = _image() if mv == 21 else run(create_topics, cluster(1, 2, 3, 4, mv=14), M(
            "CreateTopicsRequest", topics=[S("CreateTopicsRequest", "CreatableTopic", name="t", num_partitions=-1,
                                             replication_factor=-1, assignments=[S(
                                                 "CreateTopicsRequest", "CreatableReplicaAssignment",
                                                 partition_index=0, broker_ids=[1, 2, 3])])]))[1]
        if mv == 21:
            image = replay(image, [broker(4)])
        t = image.topics.by_name["t"]
        builder = PartitionChangeBuilder(image, t.partition(0), t.topic_id, 0)
        builder.target_replicas = [1, 2, 3, 4]
        record = builder.build()
        assert record.version == (1 if expect_dirs else 0)
        assert (record.message.directories is not None) == expect_dirs


@pytest.mark.parametrize("mv,leader_epoch", [(11, 1), (12, 0), (21, 0)])
def test_isr_shrink_bumps_the_leader_epoch_only_before_3_6(mv, leader_epoch):
    request = M("CreateTopicsRequest", topics=[S("CreateTopicsRequest", "CreatableTopic", name="t", num_partitions=-1,
                                                 replication_factor=-1, assignments=[S(
                                                     "CreateTopicsRequest", "CreatableReplicaAssignment",
                                                     partition_index=0, broker_ids=[1, 2, 3])])])
    image = run(create_topics, cluster(1, 2, 3, mv=mv), request)[1]
    result, image = _alter(image, [1, 2])
    p = image.topics.by_name["t"].partition(0)
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ([1, 2], 1, leader_epoch, 1)
    result, image = _alter(image, [1, 2, 3], leader_epoch=leader_epoch, partition_epoch=1)
    assert image.topics.by_name["t"].partition(0).leader_epoch == leader_epoch  # expansions never bump


@pytest.mark.parametrize("mv", [7, 17, 21, 23])
def test_new_partition_records_equal_new_partition_record_one_by_one(mv):
    image = cluster(broker(1), broker(2, dirs=2), broker(3, dirs=0), mv=mv)
    parts = [([1, 2, 3], [1, 2, 3]), ([2, 9], [2]), ([3, 1], [3, 1])]
    one_by_one = [new_partition_record(image, b"t" * 16, 5 + i, list(r), list(isr)) for i, (r, isr) in enumerate(parts)]
    batch = new_partition_records(image, b"t" * 16, 5, [(list(r), list(isr)) for r, isr in parts])
    assert [tuple(r) for r in batch] == [tuple(r) for r in one_by_one]
