"""ElectLeaders and the fence / unfence / controlled-shutdown hooks (Kafka 3.9 PartitionChangeBuilder rules).

The expected PartitionChangeRecords are the shapes real Kafka controllers wrote (kraft-real dump-logs):
a follower fenced -> {"isr": rest}; the leader fenced -> {"isr": rest, "leader": next}; the last ISR member
fenced -> {"leader": -1} with the ISR kept; that broker unfenced -> {"leader": it}.
"""
from __future__ import annotations

from kraftsman.controller.quorum.partition_elections import (
    elect_leaders,
    on_broker_fenced,
    on_broker_unfenced,
    on_controlled_shutdown,
)
from kraftsman.controller.quorum.topics import create_topics

from .replication_fixtures import M, S, broker, cluster, context, replay, run


def _topic(replicas_list, brokers=(1, 2, 3)):
    """Create topic 't' with manual assignments; return the image."""
    items = [S("CreateTopicsRequest", "CreatableReplicaAssignment", partition_index=i, broker_ids=r)
             for i, r in enumerate(replicas_list)]
    request = M("CreateTopicsRequest", topics=[S("CreateTopicsRequest", "CreatableTopic", name="t",
                                                 num_partitions=-1, replication_factor=-1, assignments=items)])
    return run(create_topics, cluster(*brokers), request)[1]


def _set_broker(image, broker_id, **state):
    """Return the image with broker `broker_id` re-registered in another state (same epoch)."""
    return replay(image, [broker(broker_id, **state)])


def _changes(records):
    out = []
    for r in records:
        m = r.message
        out.append({k: getattr(m, k) for k in ("partition_id", "isr", "leader", "replicas")
                    if getattr(m, k) not in (None, -2) or k == "partition_id"})
    return out


def test_fencing_a_follower_shrinks_the_isr_only():
    image = _set_broker(_topic([[1, 2, 3]]), 2, fenced=True)
    records = on_broker_fenced(context(image), 2)
    assert _changes(records) == [{"partition_id": 0, "isr": [1, 3]}]
    p = replay(image, records).topics.by_name["t"].partition(0)
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (1, 0, 1)


def test_fencing_the_leader_moves_leadership_and_bumps_the_leader_epoch():
    image = _set_broker(_topic([[1, 2, 3]]), 1, fenced=True)
    records = on_broker_fenced(context(image), 1)
    assert _changes(records) == [{"partition_id": 0, "isr": [2, 3], "leader": 2}]
    p = replay(image, records).topics.by_name["t"].partition(0)
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (2, 1, 1)


def test_fencing_the_last_isr_member_leaves_no_leader_and_keeps_the_isr_then_unfencing_elects_it():
    image = _set_broker(_topic([[1]]), 1, fenced=True)
    records = on_broker_fenced(context(image), 1)
    assert _changes(records) == [{"partition_id": 0, "leader": -1}]
    image = replay(image, records)
    assert image.topics.by_name["t"].partition(0).isr == [1]
    image = _set_broker(image, 1, fenced=False)
    records = on_broker_unfenced(context(image), 1)
    assert _changes(records) == [{"partition_id": 0, "leader": 1}]
    p = replay(image, records).topics.by_name["t"].partition(0)
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (1, 2, 2)


def test_unfencing_does_not_elect_a_broker_outside_the_isr():
    image = _set_broker(_topic([[1, 2]]), 1, fenced=True)
    image = replay(image, on_broker_fenced(context(image), 1))        # isr [2], leader 2
    image = _set_broker(image, 2, fenced=True)
    image = replay(image, on_broker_fenced(context(image), 2))        # leader -1, isr [2]
    image = _set_broker(image, 1, fenced=False)
    assert on_broker_unfenced(context(image), 1) == []


def test_controlled_shutdown_removes_the_broker_like_fencing():
    image = _set_broker(_topic([[1, 2], [2, 1]]), 1, shutdown=True)
    records = on_controlled_shutdown(context(image), 1)
    assert _changes(records) == [{"partition_id": 0, "isr": [2], "leader": 2}, {"partition_id": 1, "isr": [2]}]


def test_unclean_topic_config_lets_a_fenced_out_replica_lead():
    image = _set_broker(_topic([[1, 2]]), 1, fenced=True)
    image = replay(image, on_broker_fenced(context(image), 1))        # isr [2], leader 2
    image = replay(image, [M_config("t", "unclean.leader.election.enable", "true")])
    image = _set_broker(image, 2, fenced=True)
    image = replay(image, on_broker_fenced(context(image), 2))        # no acceptable replica: leader -1
    assert image.topics.by_name["t"].partition(0).leader == -1
    image = _set_broker(image, 1, fenced=False)
    records = on_broker_unfenced(context(image), 1)
    assert _changes(records) == [{"partition_id": 0, "isr": [1], "leader": 1}]
    assert records[0].message.leader_recovery_state == 1


def M_config(topic, key, value):
    from kraftsman.controller.quorum.alter_configs import config_record
    return config_record(2, topic, key, value)


# ---------------------------------------------------------------- ElectLeaders


def _elect(election_type, partitions, version=2):
    tps = None if partitions is None else [S("ElectLeadersRequest", "TopicPartitions", topic=t, partitions=p)
                                           for t, p in partitions]
    return M("ElectLeadersRequest", election_type=election_type, topic_partitions=tps)


def _results(result):
    return {(r.topic, p.partition_id): (p.error_code, p.error_message)
            for r in result.response.replica_election_results for p in r.partition_result}


def test_preferred_election_returns_leadership_to_the_first_replica():
    image = _set_broker(_topic([[1, 2], [2, 1]]), 1, fenced=True)
    image = replay(image, on_broker_fenced(context(image), 1))
    image = _set_broker(image, 1, fenced=False)
    # broker 1 is back but out of the ISR: not available as preferred leader yet
    result, image = run(elect_leaders, image, _elect(0, [("t", [0, 1])]))
    assert _results(result) == {("t", 0): (80, "The preferred leader was not available."),
                                ("t", 1): (84, "Leader election not needed for topic partition.")}
    image = replay(image, [M_isr(image, 0, [2, 1])])
    result, image = run(elect_leaders, image, _elect(0, [("t", [0]), ("nope", [0])]))
    assert _results(result) == {("t", 0): (0, None), ("nope", 0): (3, "No such topic as nope")}
    assert image.topics.by_name["t"].partition(0).leader == 1


def M_isr(image, partition_id, isr):
    from kraftsman.storage.records.metadata import ApiMessageAndVersion
    topic = image.topics.by_name["t"]
    return ApiMessageAndVersion(M("PartitionChangeRecord", topic_id=topic.topic_id, partition_id=partition_id,
                                  isr=isr), 0)


def test_all_partitions_election_omits_partitions_that_need_none():
    image = _topic([[1, 2], [2, 1]])
    result, _ = run(elect_leaders, image, _elect(0, None))
    assert _results(result) == {} and result.records == []


def test_unclean_election():
    image = _set_broker(_topic([[1, 2]]), 1, fenced=True)
    image = replay(image, on_broker_fenced(context(image), 1))
    image = _set_broker(image, 2, fenced=True)
    image = replay(image, on_broker_fenced(context(image), 2))        # leader -1, isr [2]
    result, _ = run(elect_leaders, image, _elect(1, [("t", [0])]))
    assert _results(result) == {("t", 0): (83, "Eligible topic partition leaders are not available.")}
    image = _set_broker(image, 1, fenced=False)
    result, after = run(elect_leaders, image, _elect(1, [("t", [0, 5])]))
    assert _results(result) == {("t", 0): (0, None), ("t", 5): (3, "No such partition as t-5")}
    p = after.topics.by_name["t"].partition(0)
    assert (p.leader, p.isr, p.leader_recovery_state) == (1, [1], 1)
    result, _ = run(elect_leaders, after, _elect(1, [("t", [0])]))
    assert _results(result)[("t", 0)][0] == 84


def test_v0_is_always_preferred():
    image = _topic([[1, 2]])
    result, _ = run(elect_leaders, image, _elect(1, [("t", [0])]), version=0)
    assert _results(result)[("t", 0)][0] == 84
