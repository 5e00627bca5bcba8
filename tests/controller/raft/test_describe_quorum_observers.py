"""DescribeQuorum forgets an observer that has not fetched for 5 minutes (Kafka's OBSERVER_SESSION_TIMEOUT_MS):
live shells and tools that come and go with random observer ids do not stay listed forever."""
from __future__ import annotations

from raft_harness import Cluster

from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft.reconfig import OBSERVER_SESSION_TIMEOUT_MS

TICK = 100


def _observers(c: Cluster, leader: int) -> list[int]:
    cls = msg.M["DescribeQuorumRequest"]
    c.admin(leader, cls(topics=[cls.TopicData(topic_name=msg.TOPIC, partitions=[cls.PartitionData(partition_index=0)])]))
    c.deliver_all()
    reply = [m for m in c.admin_inbox if m.src == leader][-1]
    c.admin_inbox.clear()
    return [o.replica_id for o in reply.body.topics[0].partitions[0].observers]


def test_an_observer_silent_for_five_minutes_leaves_describe_quorum():
    c = Cluster(2, (1, 2, 3), (4, 5), tick_ms=TICK, check_quorum=False)
    while c.leader() is None or c.boxes[4].node.leader_id is None or c.boxes[5].node.leader_id is None:
        c.advance_clock()
        c.deliver_all()
    c.advance_clock(20)
    c.deliver_all()
    leader = c.leader()
    assert _observers(c, leader) == [4, 5]
    c.crash(4)
    last = c.boxes[leader].node.leader_state.replicas[4].last_fetch_ms
    c.advance_clock((last + OBSERVER_SESSION_TIMEOUT_MS - c.now) // TICK - 1)
    c.deliver_all()
    assert _observers(c, leader) == [4, 5]  # silent for a little less than 5 minutes: still listed
    c.advance_clock(2)
    c.deliver_all()
    assert _observers(c, leader) == [5]  # the live observer stays
