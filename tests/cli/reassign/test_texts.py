"""kafka-reassign-partitions' texts and throttles (cli.reassign.texts, cli.reassign.throttles) against Kafka 3.9's,
the fixture's recorded outputs where it has them."""
from __future__ import annotations

import pytest

from kraftsman.cli.reassign import texts, throttles
from kraftsman.controller.client.admin import PartitionReassignment, TopicDescription
from kraftsman.controller.client.admin import TopicPartitionInfo as PartitionInfo
from kraftsman.controller.client.admin.configs import BROKER, DELETE, SET, TOPIC

from ...admin_cluster_compare import FIXTURES, load_case


def _case(name: str):
    if not FIXTURES.is_dir():
        pytest.skip(f"admin fixtures not found at {FIXTURES} (../shared is absent)")
    return load_case(name)


def _lines(*parts: str) -> str:
    return "".join(p + "\n" for p in parts)


def test_list_texts():
    assert _lines(texts.list_text({})) == _case("reassign-list-none").stdout
    ongoing = {("t-move", 1): PartitionReassignment([5, 4], [5], [4])}
    assert _lines(texts.list_text(ongoing)) == _case("reassign-list-in-progress").stdout
    assert texts.list_text({("a", 0): PartitionReassignment([1, 2])}) == ("Current partition reassignments:\n"
                                                                          "a-0: replicas: 1,2.")


def test_execute_texts_of_the_throttled_case():
    case = _case("reassign-execute-throttled-big")
    targets = {("t-move", 1): [5]}
    out = _lines(texts.current_assignment_text(targets, {("t-move", 1): [4], ("t-move", 0): [4, 5]}),
                 texts.VERIFY_WARNING, "The inter-broker throttle limit was set to 1000 B/s",
                 texts.started_text(targets))
    assert out == case.stdout
    assert texts.started_text({("b", 0): [1], ("a", 10): [1], ("a", 9): [1]}) == ("Successfully started partition "
                                                                                   "reassignments for a-9,a-10,b-0")


def test_verify_and_cancel_texts():
    case = _case("reassign-verify-done")
    topics = {"t-p3r2": TopicDescription("t-p3r2", None, False, [PartitionInfo(0, 4, [4, 5], [4, 5])])}
    states = texts.reassignment_states([(("t-p3r2", 0), [4, 5])], {}, topics)
    brokers, names = texts.clearing_sets([5, 4], [(("t-p3r2", 0), [4, 5])])
    assert _lines(texts.status_text(states), "", texts.clearing_brokers_text(brokers),
                  texts.clearing_topics_text(names)) == case.stdout
    cancel = _case("reassign-cancel")
    brokers, names = texts.clearing_sets([4, 5], [(("t-move", 1), [5])])
    out = (_lines(texts.cancelled_text([("t-move", 1)])) + texts.NO_MOVES +
           _lines(texts.clearing_brokers_text(brokers), texts.clearing_topics_text(names)))
    assert out == cancel.stdout


def test_states_in_progress_different_missing_and_kafkas_index_quirk():
    topics = {"t": TopicDescription("t", None, False, [PartitionInfo(0, 4, [4], [4]), PartitionInfo(1, 5, [5], [5])])}
    ongoing = {("t", 1): PartitionReassignment([5, 4], [4], [5])}
    targets = [(("t", 0), [5]), (("t", 1), [4]), (("gone", 0), [4]), (("t", 7), [4])]
    states = texts.reassignment_states(targets, ongoing, topics | {"gone": object()})
    assert texts.status_text(states).split("\n") == [
        "Status of partition reassignment:",
        "There is no active reassignment of partition gone-0, but replica set is  rather than 4.",
        "There is no active reassignment of partition t-0, but replica set is 4 rather than 5.",
        "Reassignment of partition t-1 is still in progress.",
        "There is no active reassignment of partition t-7, but replica set is  rather than 4."]
    with pytest.raises(Exception) as e:              # Kafka checks size < partition, then looks the index up
        texts.reassignment_states([(("t", 2), [4])], {}, topics)
    assert e.value.java_string() == "java.lang.IndexOutOfBoundsException: Index 2 out of bounds for length 2"


def test_clearing_sets_follow_javas_hash_sets():
    brokers, topics = texts.clearing_sets([17, 4, 5], [(("t-move", 0), [100]), (("t-p3r2", 1), [4])])
    # buckets (hash & 15): 17 -> 1, 4 -> 4, 100 (0x64) -> 4 after 4 (added later), 5 -> 5
    assert brokers == [17, 4, 100, 5]
    assert texts.clearing_brokers_text([4]) == "Clearing broker-level throttles on broker 4"
    assert texts.clearing_topics_text([]) == "Clearing topic-level throttles on topics "


def test_throttles_of_a_move_and_of_ongoing_ones():
    ongoing = {("other", 3): PartitionReassignment([1, 2, 3], [3], [1])}
    targets = {("t", 10): [4, 6], ("t", 2): [5]}
    moves = throttles.proposed_moves(ongoing, targets, {("t", 10): [4, 5], ("t", 2): [4]})
    assert throttles.leader_throttles(moves) == {"other": "3:1,3:2", "t": "10:4,10:5,2:4"}
    assert throttles.follower_throttles(moves) == {"other": "3:3", "t": "10:6,2:5"}
    assert throttles.reassigning_brokers(moves) == [1, 2, 3, 4, 5, 6]
    assert throttles.topic_throttle_changes({"t": moves["t"]}) == {(TOPIC, "t"): [
        ("leader.replication.throttled.replicas", "10:4,10:5,2:4", SET),
        ("follower.replication.throttled.replicas", "10:6,2:5", SET)]}
    assert throttles.broker_rate_changes([4], 1000) == {(BROKER, "4"): [
        ("leader.replication.throttled.rate", "1000", SET), ("follower.replication.throttled.rate", "1000", SET)]}
    assert throttles.clear_broker_changes([5])[(BROKER, "5")][2] == (
        "replica.alter.log.dirs.io.max.bytes.per.second", None, DELETE)
    reorder = throttles.proposed_moves({}, {("t", 0): [5, 4]}, {("t", 0): [4, 5]})
    assert throttles.follower_throttles(reorder) == {"t": ""}           # Kafka sets an empty list then
