"""Unit tests of the pure pieces: quorum math, the in-memory log, voter sets, snapshots, quorum-state."""
from __future__ import annotations

import random

import pytest

from kraftsman.controller.raft import quorum
from kraftsman.controller.raft import records as R
from kraftsman.controller.raft import snapshot as S
from kraftsman.controller.raft.config import RaftConfig
from kraftsman.controller.raft.core import NotLeaderError, RaftNode
from kraftsman.controller.raft.log import MemoryLog, SnapshotId
from kraftsman.controller.raft.state import CANDIDATE, LEADER, UNATTACHED, QuorumState, TransitionError
from kraftsman.controller.raft.voters import VoterHistory, VoterNode, VoterSet
from kraftsman.storage.protocol import codec


@pytest.mark.parametrize("n,need", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3)])
def test_majority(n, need):
    assert quorum.majority(n) == need


def test_vote_result():
    assert quorum.vote_result([1, 2, 3], {1, 2}, set()) == quorum.WON
    assert quorum.vote_result([1, 2, 3], {1}, {2}) == quorum.PENDING
    assert quorum.vote_result([1, 2, 3], {1}, {2, 3}) == quorum.LOST
    assert quorum.vote_result([1, 2, 3, 4], {1, 2}, {3}) == quorum.PENDING
    assert quorum.vote_result([1, 2, 3, 4], {1, 2}, {3, 4}) == quorum.LOST


def test_high_watermark_needs_majority_and_current_epoch():
    offsets = {1: 10, 2: 7, 3: 3}
    assert quorum.majority_offset([1, 2, 3], offsets) == 7
    assert quorum.next_high_watermark([1, 2, 3], offsets, epoch_start_offset=5, current=0) == 7
    # nothing of an older epoch is committed by counting: the majority offset must pass the epoch start
    assert quorum.next_high_watermark([1, 2, 3], offsets, epoch_start_offset=7, current=0) == 0
    # never backwards
    assert quorum.next_high_watermark([1, 2, 3], offsets, epoch_start_offset=0, current=9) == 9
    # unknown replicas count as 0
    assert quorum.majority_offset([1, 2, 3, 4, 5], {1: 9, 2: 9}) == 0


def _log_with(epochs):
    log = MemoryLog()
    for epoch, n in epochs:
        log.append(R.data_batch([b"v"] * n, log.end_offset, epoch))
    return log


def test_memory_log_epoch_lookup_and_truncation():
    log = _log_with([(1, 2), (1, 1), (3, 2), (4, 1)])  # offsets: e1 0-2, e3 3-4, e4 5
    assert (log.start_offset, log.end_offset, log.last_epoch()) == (0, 6, 4)
    assert log.end_offset_for_epoch(1) == (1, 3)
    assert log.end_offset_for_epoch(2) == (1, 3)
    assert log.end_offset_for_epoch(3) == (3, 5)
    assert log.end_offset_for_epoch(9) == (4, 6)
    assert log.epoch_at(4) == 3
    assert log.truncate_to(4) == 3  # inside a batch: the whole batch goes
    assert log.last_epoch() == 1 and log.end_offset_for_epoch(3) == (1, 3)
    with pytest.raises(ValueError):
        log.append(R.data_batch([b"v"], 7, 5))


def test_memory_log_snapshot_prefix_delete_and_crash():
    log = _log_with([(1, 2), (2, 2), (2, 2)])
    log.flush()
    log.store_snapshot(S.build_snapshot(SnapshotId(4, 2), [b"state"]))
    log.delete_before(4)
    assert (log.start_offset, log.end_offset, log.epoch_at(3)) == (4, 6, 2)
    assert log.read(4, 1)[0].base_offset == 4
    log.append(R.data_batch([b"lost"], 6, 2))
    log.crash()
    assert log.end_offset == 6


def test_batches_round_trip_the_record_batch_format():
    batch = R.data_batch([b"a", b"bb" * 100], 5, 7, timestamp=123)
    again = R.split_batches(batch.data + batch.data[:0])[0]
    assert (again.base_offset, again.epoch, again.count, again.values()) == (5, 7, 2, [b"a", b"bb" * 100])
    corrupt = bytearray(batch.data)
    corrupt[-1] ^= 1
    with pytest.raises(R.InvalidRecords):
        R.split_batches(bytes(corrupt))


def test_voter_set_record_round_trip_and_history():
    vs = VoterSet([VoterNode(1, bytes(range(16)), (("CONTROLLER", "h", 9093),)), VoterNode(2)])
    record = codec.decode("VotersRecord", 0, codec.encode("VotersRecord", 0, vs.to_record()))
    assert VoterSet.from_record(record) == vs
    history = VoterHistory(VoterSet.static([1, 2, 3]))
    history.add(10, VoterSet.static([1, 2, 3, 4]))
    assert history.pending(10) and not history.pending(11)
    assert history.at(10).ids() == {1, 2, 3} and history.at(11).ids() == {1, 2, 3, 4}
    history.truncate(10)
    assert history.latest().ids() == {1, 2, 3}


def test_snapshot_carries_voters_and_assembles_in_order():
    vs = VoterSet.static([1, 2, 3])
    snap = S.build_snapshot(SnapshotId(10, 2), [b"x" * 50] * 5, vs, kraft_version=1)
    assert S.read_control(snap.data) == (1, vs)
    asm = S.Assembly(SnapshotId(10, 2))
    assert not asm.accept(SnapshotId(10, 2), len(snap.data), 7, snap.data[7:20])  # wrong position
    for pos in range(0, len(snap.data), 64):
        assert asm.accept(SnapshotId(10, 2), len(snap.data), pos, snap.data[pos:pos + 64])
    assert asm.complete and asm.snapshot() == snap


def test_state_table_rejects_invalid_transitions():
    st = QuorumState()
    with pytest.raises(TransitionError):
        st.move(LEADER)
    st.move(CANDIDATE, 1, voted_id=1)
    with pytest.raises(TransitionError):
        st.move(UNATTACHED, 0)


def test_quorum_state_data_versions():
    st = QuorumState(5, LEADER, 1, 1)
    v0, version0 = st.to_data(0, [1, 2, 3])
    assert version0 == 0 and [v.voter_id for v in v0.current_voters] == [1, 2, 3]
    v1, version1 = st.to_data(1)
    assert version1 == 1
    assert codec.to_json("QuorumStateData", 1, v1) == (
        '{"leaderId":1,"leaderEpoch":5,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}')
    assert QuorumState.from_data(v0).persisted() == (5, 1, 1, bytes(16))


def test_single_voter_elects_itself_and_commits_after_flush():
    node = RaftNode(RaftConfig(node_id=1, voters=(1,)), MemoryLog(), random.Random(1))
    with pytest.raises(NotLeaderError):
        node.propose([b"x"])
    for _ in range(40):
        node.tick()
    assert node.role == LEADER and node.epoch == 1
    node.propose([b"a", b"b"])
    rd = node.ready()
    assert rd.flush and rd.quorum_state is not None and node.high_watermark == 0
    node.log.flush()
    node.advance(rd)
    assert node.high_watermark == 3
    assert [b.base_offset for b in node.ready().committed] == [0, 1]
