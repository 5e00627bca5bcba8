"""A new leader shows no high watermark until it commits in its own epoch (Kafka's LeaderState), so the high
watermark a follower or observer sees never goes back, across failovers and full quorum restarts.

raft_harness.Cluster checks every accepted Fetch response as Kafka's FollowerState does and raises Violation on a
decrease; these tests drive the cases where kraftsman's leaders used to send a lower value (the newest
snapshot's end offset, or the log start offset) right after an election."""
from __future__ import annotations

import pytest
from raft_harness import ADMIN, Cluster, Violation

from kraftsman.controller.raft import messages as msg

TICK = 10


def _run_until(c: Cluster, done, limit: int = 2000) -> None:
    for _ in range(limit):
        c.advance_clock()
        c.deliver_all()
        if done():
            return
    raise AssertionError(f"condition not reached; nodes: {[b.node.describe() for b in c.boxes.values()]}")


def _committed_cluster(records: int = 40) -> tuple[Cluster, int]:
    """Return a 3-voter cluster with observer 4, `records` committed batches and snapshots every 8 (no check
    quorum: a leader cut off from the other voters keeps leading, so the window before its first commit stays open)."""
    c = Cluster(5, (1, 2, 3), (4,), tick_ms=TICK, snapshot_every_records=8, check_quorum=False)
    _run_until(c, lambda: c.leader() is not None)
    leader = c.leader()
    for i in range(records):
        c.propose(leader, [f"v{i}".encode()])
        c.deliver_all()
    end = c.boxes[leader].node.log.end_offset
    _run_until(c, lambda: all(b.node.high_watermark == end for b in c.boxes.values()))
    return c, leader


def _describe_quorum(c: Cluster, nid: int):
    """Deliver one DescribeQuorum to `nid` at once and return its partition answer."""
    c.admin(nid, msg.M["DescribeQuorumRequest"](topics=[msg.M["DescribeQuorumRequest"].TopicData(
        topic_name=msg.TOPIC, partitions=[msg.M["DescribeQuorumRequest"].PartitionData(partition_index=0)])]))
    queued, c.net.queue = c.net.queue, [m for m in c.net.queue if m[2].src != ADMIN]
    c.deliver([m for m in queued if m[2].src == ADMIN][-1][2])
    reply = [m for m in c.net.queue if m[2].dst == ADMIN][-1]
    c.net.queue.remove(reply)
    return reply[2].body.topics[0].partitions[0]


def _elect_without_commit(c: Cluster) -> int:
    """Tick and deliver one message at a time until a leader exists; return it before anything more happens."""
    for _ in range(5000):
        if c.leader() is not None:
            return c.leader()
        c.advance_clock()
        due = sorted(c.net.queue)
        c.net.queue = []
        for i, (_, _, env) in enumerate(due):
            c.deliver(env)
            if c.leader() is not None:
                c.net.queue.extend(due[i + 1:])
                break
    raise AssertionError("no leader")


def _answers_from(c: Cluster, src: int, dst: int) -> list[int]:
    """Return the high watermarks of the Fetch responses `src` sent `dst` in its current epoch (from the trace)."""
    epoch = c.boxes[src].node.epoch
    parts = [env.body.responses[0].partitions[0] for _, text, env in c.trace
             if text == "deliver" and env.name == "FetchResponse" and (env.src, env.dst) == (src, dst)]
    return [p.high_watermark for p in parts if p.current_leader.leader_epoch == epoch and not p.error_code]


def _full_restart_with_the_new_leader_cut_off(c: Cluster) -> tuple[int, int]:
    """Restart voters 1-3 together; once one leads, cut it off from the other voters (so it cannot commit) and
    run until the observer fetched from it three times. Return (leader, the observer's high watermark before)."""
    seen = c.boxes[4].seen_hw
    for nid in (1, 2, 3):
        c.crash(nid)
    for nid in (1, 2, 3):
        c.restart(nid)
        assert c.boxes[nid].node.high_watermark < seen  # each restarted voter knows less than the observer saw
    leader = _elect_without_commit(c)
    c.net.partition([[leader, 4], sorted({1, 2, 3} - {leader})])
    _run_until(c, lambda: len(_answers_from(c, leader, 4)) >= 3)
    return leader, seen


def test_a_full_restart_from_snapshots_never_lowers_the_observers_high_watermark():
    c, _ = _committed_cluster()
    observer = c.boxes[4]
    assert all(c.boxes[n].log.latest_snapshot() is not None for n in (1, 2, 3))  # they restart from snapshots
    leader, seen = _full_restart_with_the_new_leader_cut_off(c)
    assert c.boxes[leader].node.high_watermark < seen
    assert set(_answers_from(c, leader, 4)) == {-1}  # no high watermark before the first commit of its epoch
    assert _describe_quorum(c, leader).high_watermark == -1  # Kafka's DescribeQuorum too
    c.net.heal()
    _run_until(c, lambda: observer.node.high_watermark > seen)  # every Fetch response checked on the way
    assert observer.seen_hw > seen


def test_a_single_failover_shows_no_high_watermark_before_the_new_leaders_first_commit():
    c, old = _committed_cluster(10)
    c.crash(old)
    leader = _elect_without_commit(c)
    assert _describe_quorum(c, leader).high_watermark == -1
    _run_until(c, lambda: c.boxes[leader].node.high_watermark > c.boxes[leader].node.leader_state.epoch_start_offset)
    assert _describe_quorum(c, leader).high_watermark == c.boxes[leader].node.high_watermark


def test_the_strict_follower_check_catches_a_leader_that_shows_its_old_high_watermark(monkeypatch):
    """Mutation check: a leader that answers with the high watermark it knew before its first commit."""
    from kraftsman.controller.raft.leader import LeaderState
    monkeypatch.setattr(LeaderState, "shown_high_watermark", lambda self, hw: hw)
    c, _ = _committed_cluster()
    with pytest.raises(Violation, match="non-monotonic update of high watermark"):
        _full_restart_with_the_new_leader_cut_off(c)
