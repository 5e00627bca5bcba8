"""Metadata log retention as Kafka 3.9's KafkaMetadataLog.maybeClean (controller/raft/retention.py): which
snapshots survive, where the log start moves, the periodic pass, and what it means for a lagging follower
(it catches up from the log within retention, from a snapshot beyond it)."""
from __future__ import annotations

import random

from raft_harness import Cluster

from kraftsman.controller.raft import records as R
from kraftsman.controller.raft import retention
from kraftsman.controller.raft import snapshot as S
from kraftsman.controller.raft.config import RaftConfig
from kraftsman.controller.raft.core import RaftNode
from kraftsman.controller.raft.log import MemoryLog, SnapshotId

KAFKA_BYTES, KAFKA_MS = 100 * 1024 * 1024, 7 * 24 * 3600 * 1000
DAY = 24 * 3600 * 1000


def _log_with_snapshots(ends=(10, 20, 30, 40), timestamps=None) -> MemoryLog:
    """A log of 45 one-record batches (epoch 1, batch i written at time i * 1 day) with snapshots at `ends`,
    each holding 100 bytes of state and the time of its last record (or `timestamps`)."""
    log = MemoryLog()
    for i in range(45):
        log.append(R.data_batch([b"x" * 20], i, 1, timestamp=i * DAY))
    for k, end in enumerate(ends):
        ts = (end - 1) * DAY if timestamps is None else timestamps[k]
        log.store_snapshot(S.build_snapshot(SnapshotId(end, 1), [b"s" * 100], timestamp=ts))
    return log


def _ends(log) -> list[int]:
    return [sid.end_offset for sid in log.snapshot_ids()]


def test_kafka_defaults_keep_the_log_and_every_snapshot():
    log = _log_with_snapshots()
    assert not retention.maybe_clean(log, 45 * DAY, KAFKA_BYTES, 40 * DAY)  # 45 days of history, 40 allowed ...
    assert log.snapshot_timestamp(SnapshotId(10, 1)) == 9 * DAY
    assert retention.maybe_clean(log, 45 * DAY, KAFKA_BYTES, KAFKA_MS)  # ... 7 days (Kafka's default) are not
    assert _ends(log) == [40] and log.start_offset == 40  # the newest always stays, whatever its age


def test_a_few_snapshots_within_the_default_byte_limit_stay():
    log = _log_with_snapshots()
    size = log.size_in_bytes() + sum(log.snapshot_size(s) for s in log.snapshot_ids())
    assert size < 20_000
    assert not retention.maybe_clean(log, 45 * DAY, KAFKA_BYTES, -1)
    assert (_ends(log), log.start_offset, log.end_offset) == ([10, 20, 30, 40], 0, 45)


def test_by_bytes_the_oldest_snapshots_go_until_log_and_snapshots_fit():
    log = _log_with_snapshots()
    batch, snap = len(log.batches[0].data), log.snapshot_size(SnapshotId(10, 1))
    # dropping snapshot 10 moves the start to 20 (20 batches and one snapshot fewer); then 25 batches + 3 snapshots
    limit = 25 * batch + 3 * snap
    assert retention.maybe_clean(log, 0, limit, -1)
    assert (_ends(log), log.start_offset) == ([20, 30, 40], 20)
    assert log.size_in_bytes() + 3 * snap == limit
    assert [b.base_offset for b in log.read(0, 1 << 30)][:1] == [20] and log.epoch_at(19) == 1
    assert not retention.maybe_clean(log, 0, limit, -1)  # within the limit now: nothing more


def test_by_bytes_zero_keeps_only_the_newest_snapshot_and_the_log_after_it():
    log = _log_with_snapshots()
    assert retention.maybe_clean(log, 0, 0, -1)
    assert (_ends(log), log.start_offset, log.end_offset) == ([40], 40, 45)


def test_by_time_only_snapshots_older_than_the_retention_go():
    log = _log_with_snapshots()  # snapshot timestamps: days 9, 19, 29, 39
    assert retention.maybe_clean(log, 40 * DAY, -1, 15 * DAY)  # 31 and 21 days old go, 11 days stays
    assert (_ends(log), log.start_offset) == ([30, 40], 30)


def test_a_snapshot_that_may_stay_ends_the_pass():
    """Kafka's cleanSnapshots stops at the first snapshot the rule keeps, even if a newer one is older."""
    log = _log_with_snapshots(timestamps=(0, 30 * DAY, 0, 0))
    assert retention.maybe_clean(log, 31 * DAY, -1, 7 * DAY)
    assert _ends(log) == [20, 30, 40]


def test_negative_settings_turn_both_rules_off():
    log = _log_with_snapshots()
    assert not retention.maybe_clean(log, 10 ** 12, -1, -1)
    assert _ends(log) == [10, 20, 30, 40]


def test_delete_before_snapshot_has_kafkas_guards():
    log = _log_with_snapshots()
    assert not log.delete_before_snapshot(SnapshotId(15, 1))  # not a kept snapshot
    assert log.delete_before_snapshot(SnapshotId(30, 1))
    assert (_ends(log), log.start_offset) == ([30, 40], 30)
    assert not log.delete_before_snapshot(SnapshotId(30, 1))  # not above the log start


def _node(**cfg) -> tuple[RaftNode, MemoryLog]:
    log = _log_with_snapshots()
    node = RaftNode(RaftConfig(node_id=1, voters=(1,), tick_ms=50, **cfg), log, random.Random(1), now=45 * DAY)
    return node, log


def test_the_node_cleans_once_a_minute_from_tick():
    node, log = _node(retention_millis=KAFKA_MS)
    ticks = 0
    while _ends(log) != [40]:
        node.tick()
        ticks += 1
    assert ticks * 50 <= retention.CLEAN_INTERVAL_MS and log.start_offset == 40
    assert not retention.on_tick(node)  # the next pass is a minute away


def test_a_written_snapshot_triggers_a_pass():
    node, log = _node(retention_max_bytes=0)
    node.snapshot_written(S.build_snapshot(SnapshotId(45, 1), [b"s"], timestamp=44 * DAY))
    assert (_ends(log), log.start_offset) == ([45], 45)


def test_a_restart_loads_the_newest_snapshot_not_the_log_below_it():
    node, log = _node()
    rd = node.ready()
    assert rd.load_snapshot.snapshot_id == SnapshotId(40, 1) and log.start_offset == 0
    assert rd.applied_to == 40 and all(b.base_offset >= 40 for b in rd.committed)


# ---------------------------------------------------------------- a lagging follower in the simulation

def _run(c: Cluster, ticks: int) -> None:
    for _ in range(ticks):
        c.advance_clock()
        c.deliver_all()


def _lagging_follower(**retention_settings) -> tuple[Cluster, int, int]:
    """Three voters, snapshots every 5 records; a follower is down while the leader writes 60 records
    (several snapshots), then comes back. Return the cluster, the follower and the leader."""
    c = Cluster(3, (1, 2, 3), tick_ms=50, snapshot_every_records=5, **retention_settings)
    _run(c, 60)
    leader = c.leader()
    follower = next(n for n in (1, 2, 3) if n != leader)
    c.crash(follower)
    for i in range(30):
        c.propose(leader, [b"a%d" % i, b"b%d" % i])
        c.deliver_all()
    assert len(c.boxes[leader].log.snapshot_ids()) >= 2 or retention_settings
    c.restart(follower)
    end = c.boxes[leader].node.log.end_offset
    _run(c, 100)
    assert c.boxes[follower].node.log.end_offset >= end and c.boxes[follower].node.high_watermark >= end
    return c, follower, leader


def test_a_follower_behind_the_newest_snapshot_but_within_retention_fetches_the_log():
    c, follower, leader = _lagging_follower()
    log = c.boxes[leader].log
    assert log.start_offset == 0 and len(log.snapshot_ids()) > 5  # Kafka's defaults: nothing deleted
    assert c.sent["FetchSnapshotRequest"] == 0


def test_a_follower_behind_the_retained_log_fetches_a_snapshot():
    c, follower, leader = _lagging_follower(retention_max_bytes=0)
    assert len(c.boxes[leader].log.snapshot_ids()) == 1
    assert c.sent["FetchSnapshotRequest"] > 0


def test_a_follower_within_a_small_byte_limit_still_fetches_the_log():
    """A limit that keeps a few snapshots' worth of log: the follower was behind the newest snapshot only."""
    c, follower, leader = _lagging_follower(retention_max_bytes=20_000)
    log = c.boxes[leader].log
    assert len(log.snapshot_ids()) >= 2 and log.start_offset == 0
    assert c.sent["FetchSnapshotRequest"] == 0


def test_across_seeds_only_deleting_retention_makes_followers_fetch_snapshots():
    """Seeded runs (raft_simulation.RETENTION by seed % 4): with Kafka's defaults no run fetches a snapshot;
    keeping only the newest snapshot makes some do."""
    from raft_simulation import RETENTION, Simulation

    assert RETENTION[2] == (KAFKA_BYTES, KAFKA_MS)
    by_kind: dict[int, list[int]] = {0: [], 2: []}
    for seed in range(80):
        if seed % 4 in by_kind:
            by_kind[seed % 4].append(Simulation(seed).run()["snapshot_fetches"])
    assert sum(by_kind[2]) == 0
    assert sum(1 for n in by_kind[0] if n) >= 3, by_kind[0]
