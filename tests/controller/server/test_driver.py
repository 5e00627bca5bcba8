"""RaftDriver without sockets: activation, proposals, commit waiters, snapshots, deactivation."""
from __future__ import annotations

import random

from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft import snapshot as S
from kraftsman.controller.raft.config import RaftConfig
from kraftsman.controller.raft.core import RaftNode
from kraftsman.controller.raft.log import MemoryLog
from kraftsman.controller.server.driver import NotController, RaftDriver
from kraftsman.controller.server.metadata_state import MetadataState
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion

FeatureLevel = codec.message_class("FeatureLevelRecord")
TopicRecord = codec.message_class("TopicRecord")


def _driver(voters=(1,), linger_ms=0, log=None, **kw):
    node = RaftNode(RaftConfig(node_id=1, voters=voters, tick_ms=50, high_watermark_linger_ms=linger_ms),
                    MemoryLog() if log is None else log, random.Random(1))
    sent, saved, events = [], [], []
    driver = RaftDriver(node, MetadataState(), send=sent.append, persist_quorum_state=lambda d, v: saved.append(d),
                        on_activate=lambda: events.append("active"), on_deactivate=lambda: events.append("inactive"),
                        **kw)
    return driver, sent, saved, events


def _until_active(driver, limit=200, after_tick=None):
    for _ in range(limit):
        if driver.is_active:
            return
        driver.tick()
        if after_tick is not None:
            after_tick()
    raise AssertionError("never became active")


def _background_jobs():
    """Return (jobs, the driver's background hook queueing them, run(): run the queued jobs in order, each
    followed by its done())."""
    jobs = []

    def run():
        while jobs:
            fn, done = jobs.pop(0)
            fn()
            done()
    return jobs, lambda fn, done, what: jobs.append((fn, done)), run


def _topic(name: str, n: int = 0):
    return ApiMessageAndVersion(TopicRecord(name=name, topic_id=bytes([n + 1] * 16)), 0)


def test_single_voter_activates_and_persists_its_vote():
    driver, _, saved, events = _driver()
    _until_active(driver)
    assert events == ["active"]
    assert saved and saved[-1].leader_id == 1
    assert driver.state.offset > driver.node.leader_state.epoch_start_offset


def test_proposal_commits_and_reaches_the_committed_image():
    driver, _, _, _ = _driver()
    _until_active(driver)
    outcome = []
    driver.propose([ApiMessageAndVersion(FeatureLevel(name="metadata.version", feature_level=21), 0), _topic("a")],
                   outcome.append)
    assert "a" in driver.state.pending.topics.by_name  # handlers see proposed records at once
    assert "a" not in driver.state.committed.topics.by_name
    driver.flush_proposals()
    driver.tick()
    assert outcome == [None]
    assert driver.state.committed.features.metadata_version == 21
    assert "a" in driver.state.committed.topics.by_name


def test_next_offset_counts_queued_records():
    driver, _, _, _ = _driver()
    _until_active(driver)
    end = driver.node.log.end_offset
    driver.propose([_topic("a"), _topic("b", 1)], lambda e: None)
    assert driver.next_offset() == end + 2
    driver.flush_proposals()
    assert driver.node.log.end_offset == end + 2


def test_propose_on_a_standby_fails_with_not_controller():
    driver, _, _, _ = _driver(voters=(1, 2, 3))
    outcome = []
    driver.propose([_topic("a")], outcome.append)
    assert len(outcome) == 1 and isinstance(outcome[0], NotController)


def test_losing_leadership_fails_waiters_and_drops_pending():
    driver, _, _, events = _driver()
    _until_active(driver)
    outcome = []
    driver.propose([_topic("a")], outcome.append)
    driver.node.resign()  # a graceful step-down (EndQuorumEpoch) before the proposal was flushed
    driver.process()
    assert events == ["active", "inactive"]
    assert len(outcome) == 1 and isinstance(outcome[0], NotController)
    assert "a" not in driver.state.pending.topics.by_name


def test_snapshot_written_when_bytes_exceed_the_limit_and_holds_the_image():
    driver, _, _, _ = _driver(snapshot_max_bytes=200)
    _until_active(driver)
    for i in range(5):
        driver.propose([_topic(f"t{i}", i)], lambda e: None)
        driver.flush_proposals()
        driver.tick()
    snap = driver.node.log.latest_snapshot()
    assert snap is not None and snap.snapshot_id.end_offset > 0
    assert driver.node.log.start_offset == 0  # metadata.max.retention.* (Kafka's defaults) keep the log below it
    restored = MetadataState()
    restored.load_snapshot(snap)
    names = set(restored.committed.topics.by_name)
    assert names and names <= {f"t{i}" for i in range(5)}
    assert len(S.read_values(snap.data)) == len(names)


def test_snapshot_is_encoded_in_the_background_and_stored_when_done():
    jobs, background, _ = _background_jobs()
    driver, _, _, _ = _driver(snapshot_max_bytes=200, background=background)

    queued = []

    def run_jobs():
        while jobs:
            if driver._snapshotting:  # due: queued, the event loop goes on, nothing stored yet
                queued.append(driver.node.log.latest_snapshot() is None)
            fn, done = jobs.pop(0)
            fn()
            done()
    _until_active(driver, after_tick=run_jobs)
    for i in range(5):
        driver.propose([_topic(f"t{i}", i)], lambda e: None)
        driver.flush_proposals()
        for _ in range(3):
            driver.tick()
            run_jobs()
    snap = driver.node.log.latest_snapshot()
    assert queued and queued[0] and snap is not None and snap.snapshot_id.end_offset > 0 and not driver._snapshotting
    assert driver.node.log.start_offset == 0  # metadata.max.retention.* (Kafka's defaults) keep the log below it
    restored = MetadataState()
    restored.load_snapshot(snap)
    names = set(restored.committed.topics.by_name)
    assert names and names <= {f"t{i}" for i in range(5)}


def _queued_snapshot(log=None):
    """Return (an active driver with one committed topic, the background job of its own snapshot, and that
    job's done()): the snapshot is due and queued, not encoded or stored yet."""
    jobs, background, run_jobs = _background_jobs()
    driver, _, _, _ = _driver(snapshot_max_bytes=1 << 30, background=background, log=log)
    _until_active(driver, after_tick=run_jobs)
    driver.propose([_topic("a")], lambda e: None)
    driver.flush_proposals()
    for _ in range(3):
        driver.tick()
        run_jobs()
    driver._write_snapshot()
    assert driver._snapshotting and driver.node.log.latest_snapshot() is None and len(jobs) == 1
    fn, done = jobs.pop()
    return driver, fn, done


def test_background_snapshot_older_than_the_latest_is_dropped():
    driver, fn, done = _queued_snapshot()
    fn()
    driver._write_snapshot(process=False)  # a snapshot the raft asked for meanwhile, stored at once
    newer = driver.node.log.latest_snapshot()
    done()
    assert not driver._snapshotting and driver.node.log.latest_snapshot() is newer


class _PreparingLog(MemoryLog):
    """A MemoryLog that, like FileLog, can write a snapshot's file before storing it; notes who did what."""

    def __init__(self):
        super().__init__()
        self.prepared, self.discarded = [], []

    def prepare_snapshot(self, snapshot) -> None:
        self.prepared.append(snapshot.snapshot_id)

    def discard_prepared_snapshot(self, snapshot_id) -> None:
        self.discarded.append(snapshot_id)


def test_background_snapshot_file_is_written_by_the_job_and_only_stored_on_the_driver_thread():
    log = _PreparingLog()
    _, fn, done = _queued_snapshot(log)
    fn()  # the background thread: encodes and writes (fsyncs) the file
    sid = log.prepared[-1] if log.prepared else None
    assert sid is not None and log.latest_snapshot() is None
    done()  # the driver's thread: stores it (FileLog: a rename)
    assert log.latest_snapshot().snapshot_id == sid and log.discarded == []


def test_background_snapshot_dropped_as_stale_discards_its_written_file():
    log = _PreparingLog()
    driver, fn, done = _queued_snapshot(log)
    fn()
    driver._write_snapshot(process=False)  # a snapshot the raft asked for meanwhile, stored at once
    done()
    assert log.discarded == log.prepared and len(log.prepared) == 1


def test_adopted_committed_image_equals_a_replay_of_the_log():
    from kraftsman.storage.records.metadata import write_metadata_record

    driver, _, _, _ = _driver()
    _until_active(driver)
    for i in range(4):
        driver.propose([_topic(f"x{i}", i)], lambda e: None)
        if i % 2:
            driver.flush_proposals()
            driver.tick()
    driver.flush_proposals()
    driver.tick()
    assert driver.state.committed is driver.state.pending  # adopted, not replayed again
    replayed = MetadataState()
    for batch in driver.node.log.read(0, 1 << 30):
        replayed.apply_batch(batch)
    assert replayed.offset == driver.state.offset
    ours = [write_metadata_record(r) for r in driver.state.committed.write()]
    theirs = [write_metadata_record(r) for r in replayed.committed.write()]
    assert ours == theirs and len(ours) == 4


def test_features_epoch_is_the_last_offset_of_the_batch_that_last_set_a_feature():
    driver, _, _, _ = _driver()
    _until_active(driver)
    assert driver.state.features_epoch == -1
    batches = []
    for records in ([_topic("a")], [ApiMessageAndVersion(FeatureLevel(name="metadata.version", feature_level=20), 0),
                                    _topic("b", 1)], [_topic("c", 2)]):
        driver.propose(records, lambda e: None)
        driver.flush_proposals()
        driver.tick()
        batches.append(driver.state.offset - 1)
    assert driver.state.features_epoch == batches[1]  # the leader adopts its pending images
    replayed = MetadataState()
    for batch in driver.node.log.read(0, 1 << 30):
        replayed.apply_batch(batch)
    assert replayed.features_epoch == batches[1]      # a follower replays the same batches
    restored = MetadataState()
    restored.load_snapshot(driver.state.build_snapshot(
        S.SnapshotId(driver.state.offset, driver.state.last_epoch), driver.node.voter_history.at(driver.state.offset),
        0, 0))
    assert restored.features_epoch == driver.state.offset - 1  # a snapshot counts as one change at its end


def test_background_fsync_gates_the_leaders_own_vote_on_the_high_watermark():
    jobs, background, run_jobs = _background_jobs()
    driver, _, _, _ = _driver(background=background)
    _until_active(driver, after_tick=run_jobs)
    assert driver.is_active
    outcome = []
    driver.propose([_topic("a")], outcome.append)
    driver.flush_proposals()
    for _ in range(3):
        driver.tick()
    assert outcome == [] and len(jobs) == 1  # one voter: nothing commits before its own fsync
    driver.propose([_topic("b", 1)], outcome.append)
    driver.flush_proposals()
    driver.tick()
    assert len(jobs) == 1  # one job at a time; the next one starts when it is done
    run_jobs()
    driver.tick()
    run_jobs()
    driver.tick()
    assert outcome == [None, None]
    assert {"a", "b"} <= set(driver.state.committed.topics.by_name)


def _observer_fetch(driver, replies) -> None:
    """Send the leader a fetch from observer 5 at its log end."""
    node = driver.node
    body = msg.fetch_request(node.cfg.cluster_id, 5, node.epoch, node.log.end_offset, node.log.last_epoch(), 500,
                             1 << 20)
    driver.request(msg.Envelope(5, 1, -1, body), replies.append)


def test_a_fetch_owed_only_the_high_watermark_is_answered_by_the_deferred_release():
    deferred, replies = [], []
    driver, _, _, _ = _driver(linger_ms=5, defer=lambda seconds, fn: deferred.append((seconds, fn)))
    _until_active(driver)
    _observer_fetch(driver, replies)
    assert replies == [] and [s for s, _ in deferred] == [0.005]  # parked, owed the high watermark
    driver.process()
    assert len(deferred) == 1  # one release at a time
    deferred.pop()[1]()
    assert [r.responses[0].partitions[0].high_watermark for r in replies] == [driver.node.high_watermark]


def test_records_answer_an_owed_fetch_before_the_release():
    deferred, replies = [], []
    driver, _, _, _ = _driver(linger_ms=5, defer=lambda seconds, fn: deferred.append((seconds, fn)))
    _until_active(driver)
    _observer_fetch(driver, replies)
    driver.propose([_topic("a")], lambda err: None)
    driver.flush_proposals()
    assert len(replies) == 1 and replies[0].responses[0].partitions[0].records  # the records went at once
    deferred.pop()[1]()
    assert len(replies) == 1  # nothing more was owed


def test_without_linger_the_high_watermark_is_answered_at_once():
    deferred, replies = [], []
    driver, _, _, _ = _driver(defer=lambda seconds, fn: deferred.append((seconds, fn)))
    _until_active(driver)
    _observer_fetch(driver, replies)
    assert len(replies) == 1 and deferred == []


def test_a_writes_waiter_is_answered_on_commit_before_the_batch_is_applied():
    driver, _, _, _ = _driver()
    _until_active(driver)
    seen = []
    driver.propose([_topic("a")], lambda err: seen.append((err, driver.state.offset)))
    driver.flush_proposals()
    end = driver.node.log.end_offset
    driver.tick()
    assert seen == [(None, seen[0][1])] and seen[0][1] < end     # answered first ...
    assert driver.state.offset == end and "a" in driver.state.committed.topics.by_name  # ... applied in the same step


def test_the_pending_image_of_a_flushed_batch_is_applied_after_the_sends_and_adopted_on_commit():
    driver, _, _, _ = _driver()
    _until_active(driver)
    state = driver.state
    driver.propose([_topic("a")], lambda e: None)
    applied = []
    real_process = driver.process

    def process():
        applied.append(state._pending._delta is None and state._pending._base is None)
        real_process()
    driver.process = process
    driver.flush_proposals()
    assert applied == [False]                                 # the sends ran before the pending image was applied
    assert state._pending._base is None and state._pending._delta is None   # settled before flush returned
    pending = state.pending
    driver.tick()
    assert state.committed is pending and "a" in pending.topics.by_name
