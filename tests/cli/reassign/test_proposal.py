"""--generate's proposal (cli.reassign.proposal): Kafka's AdminUtils.assignReplicasToBrokers, checked with the
fixed-start assignments of Kafka's own tests (AdminRackAwareTest, AdminTest) and with the shape Kafka's random
draws give."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from kraftsman.cli.common.jopt import KafkaError
from kraftsman.cli.reassign import proposal
from kraftsman.controller.client.admin import Node


class Fixed:
    """A Random whose draws are all `value` (Kafka's tests pass a fixed start index, used for both draws)."""

    def __init__(self, value: int):
        self.value = value

    def randrange(self, n: int) -> int:
        return self.value


def test_rack_unaware_from_a_fixed_start():
    got = proposal.assign([(b, None) for b in range(5)], 10, 3, Fixed(0))
    assert got == {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                   5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}


def test_rack_alternated_list_and_rack_aware_assignment():
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert proposal.rack_alternated(racks) == [0, 3, 1, 5, 4, 2]
    assert proposal.rack_alternated({b: r for b, r in racks.items() if b != 5}) == [0, 3, 1, 4, 2]
    got = proposal.assign(list(racks.items()), 7, 3, Fixed(0))
    assert got == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
                   6: [0, 4, 2]}


def test_random_assignments_are_balanced_and_rack_spread():
    rng = random.Random(7)
    for _ in range(50):
        got = proposal.assign([(b, None) for b in (4, 5, 6)], 6, 2, rng)
        assert Counter(r[0] for r in got.values()) == {4: 2, 5: 2, 6: 2}          # leaders spread evenly
        assert all(len(set(r)) == 2 for r in got.values())
    racks = [(1, "a"), (2, "a"), (3, "b"), (4, "b")]
    for _ in range(50):
        got = proposal.assign(racks, 8, 2, rng)
        assert all({dict(racks)[b] for b in r} == {"a", "b"} for r in got.values())


def test_too_few_brokers_and_mixed_racks():
    with pytest.raises(KafkaError) as e:
        proposal.assign([(4, None)], 1, 2, random.Random(1))
    assert e.value.java_string() == ("org.apache.kafka.common.errors.InvalidReplicationFactorException: Replication "
                                   "factor: 2 larger than available brokers: 1.")
    nodes = [Node(4, "h", 1, "r1"), Node(5, "h", 2, None), Node(6, "h", 3, "r2")]
    assert proposal.broker_metadata(nodes, [5, 4, 9], rack_aware=False) == [(4, None), (5, None)]
    with pytest.raises(KafkaError) as e:
        proposal.broker_metadata(nodes, [5, 4], rack_aware=True)
    assert e.value.message == proposal.RACKS_MIXED
    assert proposal.broker_metadata(nodes, [4, 6], rack_aware=True) == [(4, "r1"), (6, "r2")]


def test_propose_keeps_each_topics_partition_count_and_replication_factor():
    current = {("t-move", 0): [4], ("t-move", 1): [4]} | {("t-p3r2", i): [5, 4] for i in range(5)}
    proposed = proposal.propose(current, [(4, None), (5, None)], random.Random(3))
    assert sorted(proposed) == sorted(current)
    assert all(len(proposed[tp]) == len(current[tp]) for tp in current)
    assert {proposed[("t-move", 0)][0], proposed[("t-move", 1)][0]} == {4, 5}      # consecutive partitions rotate
