"""RaftConfig.high_watermark_linger_ms: a high watermark alone waits (up to the linger) for the next records."""
from __future__ import annotations

import pytest
from raft_harness import Cluster

TICK = 10


def _leader_cluster(linger_ms: int) -> tuple[Cluster, int]:
    """Return a 3-voter cluster with an elected leader and every follower parked at the log end."""
    c = Cluster(1, tick_ms=TICK, high_watermark_linger_ms=linger_ms)
    for _ in range(400):
        c.advance_clock()
        c.deliver_all()
        leader = c.leader()
        if leader is not None and c.boxes[leader].node.high_watermark == c.boxes[leader].node.log.end_offset:
            c.advance_clock(2 + linger_ms // TICK)  # parked fetches owed the last high watermark get it
            c.deliver_all()
            return c, leader
    raise AssertionError("no leader")


def _fetch_responses(c: Cluster) -> int:
    return sum(1 for _, text, env in c.trace if text == "deliver" and env.name == "FetchResponse")


def _commit(c: Cluster, leader: int, value: bytes) -> int:
    """Propose one record, deliver until quiet without ticking; return the fetch responses it took."""
    before = _fetch_responses(c)
    c.propose(leader, [value])
    c.deliver_all()
    return _fetch_responses(c) - before


def _follower_hws(c: Cluster, leader: int) -> list[int]:
    return [b.node.high_watermark for n, b in sorted(c.boxes.items()) if n != leader]


def test_without_linger_a_commit_costs_each_follower_two_fetch_rounds():
    c, leader = _leader_cluster(0)
    assert _commit(c, leader, b"a") == 4  # records, then the high watermark alone, for each of 2 followers
    hw = c.boxes[leader].node.high_watermark
    assert _follower_hws(c, leader) == [hw, hw]  # Kafka's behaviour: followers learn it at once


def test_with_linger_the_next_records_carry_the_high_watermark():
    c, leader = _leader_cluster(50)
    assert _commit(c, leader, b"a") == 2
    first = c.boxes[leader].node.high_watermark
    assert _follower_hws(c, leader) == [first - 1, first - 1]  # owed, not sent yet
    assert _commit(c, leader, b"b") == 2
    assert all(hw >= first for hw in _follower_hws(c, leader))
    assert c.boxes[leader].node.high_watermark == first + 1


@pytest.mark.parametrize("linger_ms", [TICK, 50])
def test_with_linger_a_quiet_leader_sends_the_high_watermark_once_the_linger_ran_out(linger_ms):
    c, leader = _leader_cluster(linger_ms)
    _commit(c, leader, b"a")
    hw = c.boxes[leader].node.high_watermark
    ticks = 0
    while _follower_hws(c, leader) != [hw, hw]:
        c.advance_clock()
        c.deliver_all()
        ticks += 1
    assert ticks == max(1, linger_ms // TICK)
