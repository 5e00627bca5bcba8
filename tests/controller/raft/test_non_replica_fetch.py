"""A Fetch from a negative replica id (a non-replica: kafka-cluster's reads, the live shell) is served and leaves
nothing behind on the leader, as Kafka's LeaderState.updateReplicaState ignores it (3.9 and 4.x alike): no observer
row in DescribeQuorum, no replica state, no say in the high watermark or in check quorum."""
from __future__ import annotations

from raft_harness import Cluster

from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft.messages import Envelope
from kraftsman.storage.protocol.errors import Errors

ADMIN = -100


def _stable(observers=()) -> tuple[Cluster, int]:
    c = Cluster(3, (1, 2, 3), observers, tick_ms=100)
    while c.leader() is None or any(c.boxes[o].node.leader_id is None for o in observers):
        c.advance_clock()
        c.deliver_all()
    c.propose(c.leader(), [b"a", b"b"])
    c.advance_clock(10)
    c.deliver_all()
    return c, c.leader()


def _ask(c: Cluster, leader: int, body, cid: int = 7):
    c.net.put(Envelope(ADMIN, leader, cid, body), c.now)
    c.deliver_all()
    replies = [m for m in c.admin_inbox if m.src == leader]
    c.admin_inbox.clear()
    return replies


def _observers(c: Cluster, leader: int) -> list[int]:
    (reply,) = _ask(c, leader, msg.describe_quorum_request())
    return [o.replica_id for o in reply.body.topics[0].partitions[0].observers]


def _fetch(c: Cluster, leader: int, *, replica_id: int = -1, old_field: bool = False, offset: int = 0,
           max_wait_ms: int = 0):
    node = c.boxes[leader].node
    body = msg.fetch_request(None, -1 if old_field else replica_id, node.epoch, offset,
                             node.log.epoch_at(offset - 1) if offset else 0, max_wait_ms, 1 << 20)
    if old_field:                      # v0-v14: the id travels in ReplicaId, ReplicaState keeps its default
        body.replica_id = replica_id
    return body


def test_fetch_replica_id_is_kafkas_rule():
    cls = msg.M["FetchRequest"]
    assert msg.fetch_replica_id(cls(replica_id=5)) == 5
    assert msg.fetch_replica_id(cls(replica_state=cls.ReplicaState(replica_id=6))) == 6
    assert msg.fetch_replica_id(cls()) == -1
    assert msg.fetch_replica_id(cls(replica_id=-2)) == -2      # a debugging consumer: negative, not -1


def test_a_non_replica_fetch_is_served_and_leaves_no_observer_row():
    c, leader = _stable(observers=(4,))
    assert _observers(c, leader) == [4]                 # a real observer (a broker) is listed
    replicas_before = set(c.boxes[leader].node.leader_state.replicas)
    for body in (_fetch(c, leader), _fetch(c, leader, replica_id=-1, old_field=True),
                 _fetch(c, leader, replica_id=-2, old_field=True)):
        (reply,) = _ask(c, leader, body)
        part = reply.body.responses[0].partitions[0]
        assert (reply.body.error_code, part.error_code) == (0, 0) and part.records
        assert part.high_watermark == c.boxes[leader].node.high_watermark > 0
    assert _observers(c, leader) == [4]
    assert set(c.boxes[leader].node.leader_state.replicas) == replicas_before


def test_a_positive_id_still_joins_as_an_observer():
    c, leader = _stable()
    _ask(c, leader, _fetch(c, leader, replica_id=2_000_000_001))
    assert _observers(c, leader) == [2_000_000_001]


def test_kafkas_invalid_fetches_are_refused_and_a_negative_id_is_not_one_of_them():
    c, leader = _stable()
    bad = _fetch(c, leader)
    bad.max_wait_ms = -1
    (reply,) = _ask(c, leader, bad)
    assert reply.body.error_code == Errors.INVALID_REQUEST


def test_parked_non_replica_fetches_are_each_answered_when_records_arrive():
    c, leader = _stable()
    end = c.boxes[leader].node.log.end_offset
    for cid in (7, 8):
        c.net.put(Envelope(ADMIN, leader, cid, _fetch(c, leader, offset=end, max_wait_ms=60_000)), c.now)
    c.deliver_all()
    assert c.admin_inbox == []                           # both wait at the log end
    parked = c.boxes[leader].node.leader_state.parked
    assert {key for key in parked if not isinstance(key, int)} == {("non-replica", 7), ("non-replica", 8)}
    c.propose(leader, [b"c"])
    c.deliver_all()
    answered = sorted(m.correlation_id for m in c.admin_inbox if m.name == "FetchResponse")
    assert answered == [7, 8]
    assert all(m.body.responses[0].partitions[0].records for m in c.admin_inbox)
    c.admin_inbox.clear()
    assert _observers(c, leader) == []
