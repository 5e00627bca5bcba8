"""CreateTopics, DeleteTopics and CreatePartitions: records, image after replay, Kafka's errors and texts.

Expected messages are Kafka 3.9's ReplicationControlManager / ControllerApis / Topic.validate strings; record
shapes (TopicRecord, ConfigRecords, then PartitionRecords v1 with the brokers' directories, epochs 0) are those
of real Kafka 3.9 logs (fixtures kraft-real, e.g. __consumer_offsets in real-time-data-streaming-pipeline).
"""
from __future__ import annotations

import pytest

from kraftsman.controller.image.partitions import UNASSIGNED
from kraftsman.controller.quorum.partitions import MIGRATING
from kraftsman.controller.quorum.topics import create_partitions, create_topics, delete_topics
from kraftsman.storage.protocol.uuids import ONE_UUID, ZERO_UUID, Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .replication_fixtures import M, S, broker, cluster, create_request, dir_id, record_types, replay, run


def _one(result):
    [topic] = result.response.topics
    return topic


def test_create_writes_topic_configs_then_partitions_and_the_image_follows():
    image = cluster(1, 2, 3)
    result, after = run(create_topics, image, create_request(("orders", 3, 2, {"cleanup.policy": "compact"})))
    assert record_types(result) == ["TopicRecord", "ConfigRecord"] + ["PartitionRecord"] * 3
    topic = _one(result)
    assert (topic.error_code, topic.error_message, topic.num_partitions, topic.replication_factor) == (0, None, 3, 2)
    created = after.topics.by_name["orders"]
    assert created.topic_id == topic.topic_id
    for pid in range(3):
        p = created.partition(pid)
        assert len(p.replicas) == 2 and p.isr == p.replicas and p.leader == p.replicas[0]
        assert (p.leader_epoch, p.partition_epoch, p.leader_recovery_state) == (0, 0, 0)
        assert p.directories == [dir_id(r) for r in p.replicas]
    assert after.configs.resources[(2, "orders")] == {"cleanup.policy": "compact"}
    sources = {c.name: c.config_source for c in topic.configs}
    assert sources["cleanup.policy"] == 1 and sources["retention.ms"] == 5


@pytest.mark.parametrize("mv,version,dirs", [(14, 0, []), (17, 1, None), (21, 1, None), (25, 2, None)])
def test_partition_record_version_and_directories_follow_metadata_version(mv, version, dirs):
    result, _ = run(create_topics, cluster(1, mv=mv), create_request(("t", 1, 1)))
    record = result.records[-1]
    assert record.version == version
    assert record.message.directories == (dirs if dirs is not None else [dir_id(1)])


def test_directory_is_unassigned_for_several_dirs_and_migrating_for_none():
    image = cluster(broker(1, dirs=2), broker(2, dirs=0))
    msg = run(create_topics, image, create_request(("t", 1, 2)))[0].records[-1].message
    assert dict(zip(msg.replicas, msg.directories)) == {1: UNASSIGNED, 2: MIGRATING}


def test_isr_and_leader_skip_fenced_replicas():
    image = cluster(broker(1, fenced=True), broker(2), broker(3))
    result, after = run(create_topics, image, create_request(("t", 6, 3)))
    for p in after.topics.by_name["t"].partitions.values():
        assert 1 in p.replicas and 1 not in p.isr and p.leader == p.isr[0] and p.leader != 1


def test_defaults_come_from_the_controller_config():
    result, after = run(create_topics, cluster(1, 2, 3), create_request(("t", -1, -1)),
                        num_partitions=4, default_replication_factor=3)
    assert (_one(result).num_partitions, _one(result).replication_factor) == (4, 3)
    assert len(after.topics.by_name["t"].partitions) == 4


LONG = "x" * 250
ERRORS = [
    (("", 1, 1), 17, "Topic name is invalid: the empty string is not allowed"),
    ((".", 1, 1), 17, "Topic name is invalid: '.' is not allowed"),
    ((LONG, 1, 1), 17, f"Topic name is invalid: the length of '{LONG}' is longer than the max allowed length 249"),
    (("a b", 1, 1), 17, "Topic name is invalid: 'a b' contains one or more characters other than ASCII "
                        "alphanumerics, '.', '_' and '-'"),   # as Kafka 3.9 (admin fixture topics-create-invalid-name)
    (("ex.ists", 1, 1), 17, "Topic 'ex.ists' collides with existing topic: ex_ists"),
    (("ex_ists", 1, 1), 36, "Topic 'ex_ists' already exists."),
    (("t", 0, 1), 37, "Number of partitions was set to an invalid non-positive value."),
    (("t", -2, 1), 37, "Number of partitions was set to an invalid non-positive value."),
    (("t", 1, 0), 38, "Replication factor must be larger than 0, or -1 to use the default value."),
    (("t", 1, 4), 38, "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be "
                      "reached because only 3 broker(s) are registered."),
    (("t", 1, 1, {"retention.ms": "abc"}), 40, "Invalid value abc for configuration retention.ms: Not a number of "
                                               "type LONG"),
    (("t", 1, 1, {"no.such": "1"}), 40, "Unknown topic config name: no.such"),
    (("t", 1, 1, {"min.insync.replicas": "0"}), 40, "Invalid value 0 for configuration min.insync.replicas: Value "
                                                    "must be at least 1"),
    (("t", 1, 1, {"retention.ms": None}), 40, "Null value not supported for topic configs: retention.ms"),
]


@pytest.mark.parametrize("topic,code,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_create_errors(topic, code, message):
    image = run(create_topics, cluster(1, 2, 3), create_request(("ex_ists", 1, 1)))[1]
    result, after = run(create_topics, image, create_request(topic))
    assert (_one(result).error_code, _one(result).error_message) == (code, message)
    assert result.records == [] and after.topics.by_name.keys() == {"ex_ists"}


def test_all_fenced_brokers_cannot_host_a_topic():
    result, _ = run(create_topics, cluster(broker(1, fenced=True)), create_request(("t", 1, 1)))
    assert (_one(result).error_code, _one(result).error_message) == (
        38, "Unable to replicate the partition 1 time(s): All brokers are currently fenced.")


def test_duplicate_names_in_one_request_get_one_invalid_request():
    result, after = run(create_topics, cluster(1), create_request(("d", 1, 1), ("ok", 1, 1), ("d", 2, 1)))
    assert [(t.name, t.error_code, t.error_message) for t in result.response.topics] == [
        ("d", 42, "Duplicate topic name."), ("ok", 0, None)]
    assert set(after.topics.by_name) == {"ok"}


def test_one_bad_topic_does_not_stop_the_others():
    result, after = run(create_topics, cluster(1, 2), create_request(("good", 2, 2), ("bad", 1, 3)))
    assert [t.error_code for t in result.response.topics] == [0, 38]
    assert set(after.topics.by_name) == {"good"}


def test_validate_only_answers_without_records():
    result, _ = run(create_topics, cluster(1), create_request(("t", 2, 1), validate_only=True))
    assert result.records == [] and _one(result).error_code == 0 and _one(result).num_partitions == 2


def _manual(*assignments, factor=-1, partitions=-1):
    items = [S("CreateTopicsRequest", "CreatableReplicaAssignment", partition_index=i, broker_ids=ids)
             for i, ids in assignments]
    topic = S("CreateTopicsRequest", "CreatableTopic", name="m", num_partitions=partitions,
              replication_factor=factor, assignments=items)
    return M("CreateTopicsRequest", topics=[topic])


def test_manual_assignment_keeps_the_given_order():
    image = cluster(broker(1), broker(2, fenced=True), broker(3))
    result, after = run(create_topics, image, _manual((0, [2, 3]), (1, [3, 1])))
    p0, p1 = after.topics.by_name["m"].partition(0), after.topics.by_name["m"].partition(1)
    assert (p0.replicas, p0.isr, p0.leader) == ([2, 3], [3], 3)
    assert (p1.replicas, p1.isr, p1.leader) == ([3, 1], [3, 1], 3)


@pytest.mark.parametrize("request_,code,message", [
    (_manual((0, [1]), factor=1), 42, "A manual partition assignment was specified, but replication factor was not "
                                      "set to -1."),
    (_manual((0, [1]), partitions=1), 42, "A manual partition assignment was specified, but numPartitions was not "
                                          "set to -1."),
    (_manual((0, [1]), (0, [2])), 39, "Found multiple manual partition assignments for partition 0"),
    (_manual((0, [1, 9])), 39, "The manual partition assignment includes broker 9, but no such broker is "
                               "registered."),
    (_manual((0, [1, 1])), 39, "The manual partition assignment includes the broker 1 more than once."),
    (_manual((0, [1]), (1, [1, 2])), 39, "The manual partition assignment includes a partition with 2 replica(s), "
                                         "but this is not consistent with previous partitions, which have 1 "
                                         "replica(s)."),
    (_manual((0, [])), 39, "The manual partition assignment includes an empty replica list."),
    (_manual((1, [1])), 39, "partitions should be a consecutive 0-based integer sequence"),
    (_manual((0, [4])), 39, "All brokers specified in the manual partition assignment for partition 0 are fenced or "
                            "in controlled shutdown."),
])
def test_manual_assignment_errors(request_, code, message):
    image = cluster(broker(1), broker(2), broker(4, fenced=True))
    result, _ = run(create_topics, image, request_)
    assert (_one(result).error_code, _one(result).error_message) == (code, message)
    assert result.records == []


def test_too_many_partitions_fail_the_whole_request():
    request = create_request(("a", 5, 1), ("b", -1, 1), ("c", 0, 1))
    result, _ = run(create_topics, cluster(1), request, max_partitions_per_request=7, num_partitions=3)
    assert result.records == []
    assert [(t.name, t.error_code, t.error_message) for t in result.response.topics] == [
        (n, 44, "Excessively large number of partitions per request.") for n in "abc"]
    result, _ = run(create_topics, cluster(1), request, max_partitions_per_request=8, num_partitions=3)
    assert [t.error_code for t in result.response.topics] == [0, 0, 37]


def test_topic_ids_are_random_v4_and_never_reserved():
    result, _ = run(create_topics, cluster(1), create_request(*((f"t{i}", 1, 1) for i in range(50))))
    ids = [Uuid(t.topic_id) for t in result.response.topics]
    assert len(set(ids)) == 50 and not {ZERO_UUID, ONE_UUID} & set(ids)
    assert all(i[6] >> 4 == 4 and i[8] >> 6 == 2 and not str(i).startswith("-") for i in ids)


# ---------------------------------------------------------------- DeleteTopics


def _two_topics():
    return run(create_topics, cluster(1), create_request(("a", 2, 1), ("b", 1, 1)))[1]


def test_delete_by_name_before_v6_and_by_name_or_id_at_v6():
    image = _two_topics()
    result, after = run(delete_topics, image, M("DeleteTopicsRequest", topic_names=["a", "zz"]), version=5)
    assert record_types(result) == ["RemoveTopicRecord"]
    assert set(after.topics.by_name) == {"b"}
    assert {(r.name, r.error_code) for r in result.response.responses} == {("a", 0), ("zz", 3)}
    b_id = image.topics.by_name["b"].topic_id
    states = [S("DeleteTopicsRequest", "DeleteTopicState", name=None, topic_id=Uuid(b_id)),
              S("DeleteTopicsRequest", "DeleteTopicState", name=None, topic_id=Uuid.from_longs(5, 5))]
    result, after = run(delete_topics, image, M("DeleteTopicsRequest", topics=states), version=6)
    rows = {(r.name, r.error_code, r.error_message) for r in result.response.responses}
    assert rows == {("b", 0, None), (None, 100, "This server does not host this topic ID.")}
    assert set(after.topics.by_name) == {"a"}


def test_delete_request_errors():
    image = _two_topics()
    a_id = Uuid(image.topics.by_name["a"].topic_id)
    states = [S("DeleteTopicsRequest", "DeleteTopicState", name=None, topic_id=ZERO_UUID),
              S("DeleteTopicsRequest", "DeleteTopicState", name="a", topic_id=a_id),
              S("DeleteTopicsRequest", "DeleteTopicState", name="b"),
              S("DeleteTopicsRequest", "DeleteTopicState", name="b")]
    result, after = run(delete_topics, image, M("DeleteTopicsRequest", topics=states), version=6)
    assert result.records == []
    assert sorted((r.error_code, r.error_message) for r in result.response.responses) == [
        (42, "Duplicate topic name."), (42, "Neither topic name nor id were specified."),
        (42, "You may not specify both topic name and topic id.")]


def test_delete_disabled():
    image = _two_topics()
    result, _ = run(delete_topics, image, M("DeleteTopicsRequest", topic_names=["a"]), version=2,
                    delete_topic_enable=False)
    assert [(r.error_code, r.error_message) for r in result.response.responses] == [(42, "Topic deletion is disabled.")]
    result, _ = run(delete_topics, image, M("DeleteTopicsRequest", topic_names=["a"]), version=4,
                    delete_topic_enable=False)
    assert [r.error_code for r in result.response.responses] == [73] and result.records == []


# ---------------------------------------------------------------- CreatePartitions


def _grow(name, count, assignments=None, validate_only=False):
    items = None if assignments is None else [S("CreatePartitionsRequest", "CreatePartitionsAssignment", broker_ids=a)
                                               for a in assignments]
    return M("CreatePartitionsRequest", validate_only=validate_only, topics=[
        S("CreatePartitionsRequest", "CreatePartitionsTopic", name=name, count=count, assignments=items)])


def test_create_partitions_adds_partitions_with_the_topic_replication_factor():
    image = run(create_topics, cluster(1, 2, 3), create_request(("t", 2, 2)))[1]
    result, after = run(create_partitions, image, _grow("t", 5), version=3)
    assert [r.error_code for r in result.response.results] == [0]
    topic = after.topics.by_name["t"]
    assert sorted(topic.partitions) == [0, 1, 2, 3, 4]
    assert all(len(topic.partition(i).replicas) == 2 for i in range(5))
    result, after = run(create_partitions, after, _grow("t", 6, [[3, 1]]), version=3)
    assert after.topics.by_name["t"].partition(5).replicas == [3, 1]


@pytest.mark.parametrize("request_,code,message", [
    (_grow("t", 2), 37, "Topic already has 2 partition(s)."),
    (_grow("t", 1), 37, "The topic t currently has 2 partition(s); 1 would not be an increase."),
    (_grow("t", 4, [[1, 2]]), 39, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were "
                                  "specified."),
    (_grow("t", 3, [[1]]), 39, "The manual partition assignment includes a partition with 1 replica(s), but this "
                               "is not consistent with previous partitions, which have 2 replica(s)."),
    (_grow("nope", 3), 3, "This server does not host this topic-partition."),
])
def test_create_partitions_errors(request_, code, message):
    image = run(create_topics, cluster(1, 2, 3), create_request(("t", 2, 2)))[1]
    result, _ = run(create_partitions, image, request_, version=3)
    assert [(r.error_code, r.error_message) for r in result.response.results] == [(code, message)]
    assert result.records == []


def test_create_partitions_validate_only():
    image = run(create_topics, cluster(1, 2), create_request(("t", 1, 1)))[1]
    result, _ = run(create_partitions, image, _grow("t", 3, validate_only=True), version=0)
    assert result.records == [] and result.response.results[0].error_code == 0


def test_deleting_a_topic_drops_its_configs_so_a_new_one_starts_clean():
    image = run(create_topics, cluster(1), create_request(("t", 1, 1, {"retention.ms": "5"})))[1]
    assert image.configs.resources[(2, "t")] == {"retention.ms": "5"}
    image = run(delete_topics, image, M("DeleteTopicsRequest", topic_names=["t"]), version=5)[1]
    assert (2, "t") not in image.configs.resources
    result, image = run(create_topics, image, create_request(("t", 1, 1)))
    assert (2, "t") not in image.configs.resources
    assert {c.name: c.config_source for c in _one(result).configs}["retention.ms"] == 5


def test_collision_names_the_least_existing_topic_and_counts_earlier_topics_of_the_request():
    image = replay(cluster(1), [ApiMessageAndVersion(M("TopicRecord", name=n, topic_id=Uuid.from_longs(7, i)), 0)
                                for i, n in enumerate(("w_b.f", "w.b.f"), start=1)])   # as a Kafka log can hold
    result, _ = run(create_topics, image, create_request(("w.b_f", 1, 1)))
    assert _one(result).error_message == "Topic 'w.b_f' collides with existing topic: w.b.f"
    result, _ = run(create_topics, cluster(1), create_request(("x.y", 1, 1), ("x_y", 1, 1)))
    assert [(t.error_code, t.error_message) for t in result.response.topics] == [
        (0, None), (17, "Topic 'x_y' collides with existing topic: x.y")]
