"""KIP-455 reassignments: AlterPartitionReassignments, ListPartitionReassignments, completion via AlterPartition.

Hand-derived from KIP-455 and Kafka 3.9's PartitionReassignmentReplicas: replicas = target + removing,
adding = target - current, removing = current - target; complete when all adding replicas are in the ISR,
then replicas = target and removed replicas leave the ISR (and the leadership, with an epoch bump).
"""
from __future__ import annotations

from kraftsman.controller.quorum.reassignment import (
    alter_partition,
    alter_partition_reassignments,
    list_partition_reassignments,
)
from kraftsman.controller.quorum.topics import create_topics
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .replication_fixtures import M, S, cluster, replay, run


def _image():
    items = [S("CreateTopicsRequest", "CreatableReplicaAssignment", partition_index=i, broker_ids=[1, 2, 3])
             for i in range(2)]
    request = M("CreateTopicsRequest", topics=[S("CreateTopicsRequest", "CreatableTopic", name="t", num_partitions=-1,
                                                 replication_factor=-1, assignments=items)])
    return run(create_topics, cluster(1, 2, 3, 4, 5), request)[1]


def _reassign(image, *targets, name="t"):
    parts = [S("AlterPartitionReassignmentsRequest", "ReassignablePartition", partition_index=i, replicas=r)
             for i, r in targets]
    request = M("AlterPartitionReassignmentsRequest", topics=[S("AlterPartitionReassignmentsRequest",
                                                                "ReassignableTopic", name=name, partitions=parts)])
    return run(alter_partition_reassignments, image, request, version=0)


def _errors(result):
    return [(p.partition_index, p.error_code, p.error_message) for t in result.response.responses
            for p in t.partitions]


def _list(image, topics=None):
    items = None if topics is None else [S("ListPartitionReassignmentsRequest", "ListPartitionReassignmentsTopics",
                                           name=n, partition_indexes=p) for n, p in topics]
    result, _ = run(list_partition_reassignments, image, M("ListPartitionReassignmentsRequest", topics=items),
                    version=0)
    return [(t.name, p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas)
            for t in result.response.topics for p in t.partitions]


def _isr_update(image, isr, partition_id=0):
    p = image.topics.by_name["t"].partition(partition_id)
    data = S("AlterPartitionRequest", "PartitionData", partition_index=partition_id, leader_epoch=p.leader_epoch,
             partition_epoch=p.partition_epoch,
             new_isr_with_epochs=[S("AlterPartitionRequest", "BrokerState", broker_id=b) for b in isr])
    request = M("AlterPartitionRequest", broker_id=p.leader, broker_epoch=10 + p.leader, topics=[S(
        "AlterPartitionRequest", "TopicData", topic_id=image.topics.by_name["t"].topic_id, partitions=[data])])
    return run(alter_partition, image, request, version=3)


def test_move_a_partition_lists_it_then_completes_when_the_new_replicas_join_the_isr():
    image = _image()
    result, image = _reassign(image, (0, [4, 5, 1]))
    assert _errors(result) == [(0, 0, None)]
    change = result.records[0].message
    assert (change.replicas, change.adding_replicas, change.removing_replicas) == ([4, 5, 1, 2, 3], [4, 5], [2, 3])
    assert _list(image) == [("t", 0, [4, 5, 1, 2, 3], [4, 5], [2, 3])]
    assert _list(image, [("t", [1, 0]), ("zz", [0])]) == _list(image)
    result, image = _isr_update(image, [1, 2, 3, 4])
    assert image.topics.by_name["t"].partition(0).adding_replicas == [4, 5]      # 5 still catching up
    result, image = _isr_update(image, [1, 2, 3, 4, 5])
    p = image.topics.by_name["t"].partition(0)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas, p.leader) == ([4, 5, 1], [1, 4, 5], [], [], 1)
    assert p.leader_epoch == 1                                                    # replicas were removed
    assert _list(image) == []


def test_completion_that_removes_the_leader_answers_new_leader_elected():
    image = _reassign(_image(), (0, [2, 3, 4]))[1]
    result, image = _isr_update(image, [1, 2, 3, 4])
    assert result.response.topics[0].partitions[0].error_code == 108
    p = image.topics.by_name["t"].partition(0)
    assert (p.replicas, p.isr, p.leader) == ([2, 3, 4], [2, 3, 4], 2)


def test_shrinking_completes_at_once():
    result, image = _reassign(_image(), (0, [1, 2]))
    p = image.topics.by_name["t"].partition(0)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas, p.leader_epoch) == ([1, 2], [1, 2], [], [], 1)


def test_cancel_reverts_to_the_original_replicas():
    image = _reassign(_image(), (0, [4, 5, 1]))[1]
    image = _isr_update(image, [1, 2, 3, 4])[1]
    result, image = _reassign(image, (0, None))
    assert _errors(result) == [(0, 0, None)]
    p = image.topics.by_name["t"].partition(0)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas) == ([1, 2, 3], [1, 2, 3], [], [])
    result, _ = _reassign(image, (0, None))
    assert _errors(result) == [(0, 85, "No partition reassignment is in progress.")]


def test_errors():
    image = _image()
    result, _ = _reassign(image, (7, [1]))
    assert _errors(result) == [(7, 3, "Unable to find partition t:7.")]
    result, _ = _reassign(image, (0, [1]), name="zz")
    assert _errors(result) == [(0, 3, "Unable to find a topic named zz.")]
    result, _ = _reassign(image, (0, [1, 9]), (1, [1, 1]))
    assert _errors(result) == [
        (0, 39, "The manual partition assignment includes broker 9, but no such broker is registered."),
        (1, 39, "The manual partition assignment includes the broker 1 more than once.")]
    assert result.records == []


def test_same_replicas_is_a_no_op_success():
    result, _ = _reassign(_image(), (0, [1, 2, 3]))
    assert _errors(result) == [(0, 0, None)] and result.records == []
    assert replay(_image(), result.records).topics.by_name["t"].partition(0).partition_epoch == 0


def test_adding_and_removing_are_sorted_and_replicas_are_target_then_removing():
    result, image = _reassign(_image(), (0, [5, 4, 1]))
    change = result.records[0].message
    assert (change.replicas, change.adding_replicas, change.removing_replicas) == ([5, 4, 1, 2, 3], [4, 5], [2, 3])


def test_completion_needs_every_target_replica_in_the_isr_not_only_the_adding_ones():
    image = _isr_update(_image(), [1, 2])[1]                      # 3 falls out of the ISR
    image = _reassign(image, (0, [3, 4, 1]))[1]                   # adding [4], removing [2]
    result, image = _isr_update(image, [1, 2, 4])
    p = image.topics.by_name["t"].partition(0)
    assert (p.adding_replicas, p.removing_replicas) == ([4], [2])  # 3 is still missing
    result, image = _isr_update(image, [1, 2, 4, 3])
    p = image.topics.by_name["t"].partition(0)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas) == ([3, 4, 1], [1, 4, 3], [], [])


def test_cancel_that_would_need_an_unclean_election():
    from kraftsman.controller.quorum.alter_configs import config_record
    image = _reassign(_image(), (0, [4]))[1]                      # replicas [4,1,2,3], adding [4]
    change = M("PartitionChangeRecord", topic_id=image.topics.by_name["t"].topic_id, partition_id=0, isr=[4], leader=4)
    image = replay(image, [ApiMessageAndVersion(change, 0)])
    result, _ = _reassign(image, (0, None))
    assert _errors(result) == [(0, 39, "Unable to revert partition assignment for t:0 because it would require an "
                                       "unclean leader election.")]
    image = replay(image, [config_record(2, "t", "unclean.leader.election.enable", "true")])
    result, image = _reassign(image, (0, None))
    p = image.topics.by_name["t"].partition(0)
    assert (p.replicas, p.isr, p.leader, p.adding_replicas, p.removing_replicas) == ([1, 2, 3], [1], 1, [], [])


def test_v1_without_replication_factor_change_refuses_a_new_replica_count():
    """KIP-860 (AlterPartitionReassignments v1, Kafka 4.1): AllowReplicationFactorChange false keeps the count."""
    parts = [S("AlterPartitionReassignmentsRequest", "ReassignablePartition", partition_index=0, replicas=[1, 2]),
             S("AlterPartitionReassignmentsRequest", "ReassignablePartition", partition_index=1, replicas=[3, 4, 5])]
    request = M("AlterPartitionReassignmentsRequest", allow_replication_factor_change=False,
                topics=[S("AlterPartitionReassignmentsRequest", "ReassignableTopic", name="t", partitions=parts)])
    result, image = run(alter_partition_reassignments, _image(), request, version=1)
    assert _errors(result) == [(0, 38, "The replication factor is changed from 3 to 2"), (1, 0, None)]
    assert result.response.allow_replication_factor_change is False
    assert _list(image) == [("t", 1, [3, 4, 5, 1, 2], [4, 5], [1, 2])]
