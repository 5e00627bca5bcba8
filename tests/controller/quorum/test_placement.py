"""StripedReplicaPlacer semantics (Kafka's RackList/BrokerList), checked against hand-derived properties.

The rotation property comes from a real Kafka 3.9 log (real-time-data-streaming-pipeline, __consumer_offsets
on brokers 1-3): partitions 0-2 got [3,1,2] [1,2,3] [2,3,1] (rotations of one order), partitions 3-5
[3,2,1] [2,1,3] [1,3,2] (rotations of a reshuffled order).
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from kraftsman.controller.quorum.placement import BrokerLayout, PlacementError, place

from .replication_fixtures import broker, cluster


def _rotations(first: list[int]) -> list[list[int]]:
    return [first[k:] + first[:k] for k in range(len(first))]


@pytest.mark.parametrize("seed", range(5))
def test_each_window_of_unfenced_size_is_the_rotations_of_one_order(seed):
    image = cluster(1, 2, 3)
    placements = place(image, random.Random(seed), 6, 3)
    for start in (0, 3):
        window = placements[start:start + 3]
        assert window == _rotations(window[0])
        assert sorted(window[0]) == [1, 2, 3]


def test_replication_factor_below_broker_count_takes_prefixes_of_rotations():
    image = cluster(1, 2, 3, 4)
    placements = place(image, random.Random(7), 4, 2)
    order = placements[0] + [b for b in placements[1] if b not in placements[0]]
    full = order + [b for b in (1, 2, 3, 4) if b not in order]
    assert placements == [r[:2] for r in _rotations(full)]
    assert Counter(p[0] for p in placements) == {1: 1, 2: 1, 3: 1, 4: 1}  # leaders spread evenly


def test_rack_aware_placement_spreads_each_partition_over_racks():
    image = cluster(*(broker(b, rack=f"r{b % 3}") for b in range(1, 7)))
    for replicas in place(image, random.Random(3), 12, 3):
        assert len({f"r{b % 3}" for b in replicas}) == 3
        assert len(set(replicas)) == 3


def test_fenced_brokers_never_lead_and_fill_in_only_when_needed():
    image = cluster(broker(1), broker(2), broker(3, fenced=True))
    for replicas in place(image, random.Random(1), 6, 3):
        assert replicas[0] != 3 and sorted(replicas) == [1, 2, 3]
    for replicas in place(image, random.Random(1), 6, 2):
        assert sorted(replicas) == [1, 2]


def test_brokers_in_controlled_shutdown_are_not_used():
    image = cluster(broker(1), broker(2), broker(3, shutdown=True))
    assert all(3 not in r for r in place(image, random.Random(0), 5, 2))
    with pytest.raises(PlacementError, match="only 2 broker"):
        place(image, random.Random(0), 1, 3)


@pytest.mark.parametrize("brokers,factor,message", [
    ((1, 2), 3, "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered."),
    ((broker(1, fenced=True),), 1, "All brokers are currently fenced."),
    ((1,), 0, "Invalid replication factor 0: the replication factor must be positive."),
    ((), 1, "All brokers are currently fenced."),
])
def test_errors_carry_kafkas_messages(brokers, factor, message):
    with pytest.raises(PlacementError) as e:
        place(cluster(*brokers), random.Random(0), 1, factor)
    assert str(e.value) == message


def test_same_seed_same_placement_other_seed_varies():
    image = cluster(1, 2, 3, 4, 5)
    a = place(image, random.Random(42), 10, 3)
    assert a == place(image, random.Random(42), 10, 3)
    assert any(place(image, random.Random(s), 10, 3) != a for s in range(5))


@pytest.mark.parametrize("seed", range(5))
def test_first_window_rotates_the_sorted_broker_list(seed):
    # Kafka's BrokerList.initialize sorts the brokers (random start offset): the real log's first window
    # [3,1,2] [1,2,3] [2,3,1] is the sorted list [1,2,3] rotated.
    placements = place(cluster(3, 1, 2), random.Random(seed), 3, 3)
    assert sorted(placements) == sorted(_rotations([1, 2, 3]))


def test_leader_from_a_later_rack_lets_the_cursor_rack_contribute_a_fenced_replica():
    # Racks r0 {1 fenced}, r1 {2}, r2 {3}, RF 2. Cursor on r0: leader from r1, then r0's fenced 1 -> [2, 1];
    # cursor r1 -> [2, 3]; cursor r2 -> [3, 1] (Kafka's RackList.place skips the leader's rack once).
    image = cluster(broker(1, rack="r0", fenced=True), broker(2, rack="r1"), broker(3, rack="r2"))
    cycle = [[2, 1], [2, 3], [3, 1]]
    for seed in range(10):
        first, second = place(image, random.Random(seed), 2, 2)
        assert second == cycle[(cycle.index(first) + 1) % 3]


def test_placement_is_pinned_for_racks_fenced_and_shutting_down_brokers():
    # Computed before placement kept one BrokerLayout per request and skipped shuffles of 0/1-element lists:
    # both must leave every draw from the rng, so every placement, as it was.
    image = cluster(*(broker(b, rack=f"r{b % 3}", fenced=(b == 5)) for b in range(1, 10)), broker(12),
                    broker(11, shutdown=True))
    expected = [[4, 8, 12], [2, 12, 6], [12, 9, 7], [3, 1, 8], [4, 2, 12], [8, 12, 6], [12, 9, 7], [3, 1, 2],
                [4, 8, 12], [9, 12, 8], [12, 2, 4], [8, 1, 6]]
    rng = random.Random(2024)
    assert place(image, rng, 12, 3) == expected
    again, layout = random.Random(2024), BrokerLayout.of(image)
    assert place(image, again, 12, 3, layout) == expected and again.getstate() == rng.getstate()
    assert place(image, again, 12, 3, layout) == place(image, rng, 12, 3)  # a layout serves many topics
