"""Retention on the files (Kafka 3.9's KafkaMetadataLog): snapshots and segments stay until the raft core's
retention moves the log start; then only segments wholly below it go, with the older snapshots; sizes are the
files' and snapshot times come from their headers; a restart keeps every snapshot."""
from __future__ import annotations

import os

from kraftsman.controller.raft import records as R
from kraftsman.controller.raft import retention
from kraftsman.controller.raft import snapshot as S
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.records.raft_values import Batch, Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId

KAFKA_BYTES, KAFKA_MS = 100 * 1024 * 1024, 7 * 24 * 3600 * 1000
DAY = 24 * 3600 * 1000


def core_snapshot(end_offset, epoch, data):
    return Snapshot(SnapshotId(end_offset, epoch), data)


def open_log(path):
    return FileLog.open(path, batch_type=Batch, snapshot_type=core_snapshot, segment_bytes=250)


def build(path) -> FileLog:
    """12 batches of 108 bytes, two per segment (bases 0, 2, ..., 10), written on days 0..11; snapshots at
    3, 6 and 9 (mid-segment, segment boundary, mid-segment) with the time of their last record."""
    log = open_log(path)
    for i in range(12):
        log.append(R.data_batch([b"v" * 40], i, 1, timestamp=i * DAY))
    for end in (3, 6, 9):
        log.store_snapshot(S.build_snapshot(SnapshotId(end, 1), [b"s" * 50], timestamp=(end - 1) * DAY))
    log.flush()
    return log


def segments(path) -> list[int]:
    return sorted(int(p[:20]) for p in os.listdir(path) if p.endswith(".log"))


def checkpoints(path) -> list[int]:
    return sorted(int(p[:20]) for p in os.listdir(path) if p.endswith(".checkpoint"))


def test_sizes_and_timestamps_come_from_the_files(tmp_path):
    log = build(tmp_path)
    assert log.size_in_bytes() == 12 * 108 == sum(p.stat().st_size for p in tmp_path.glob("*.log"))
    for end in (3, 6, 9):
        sid = SnapshotId(end, 1)
        assert log.snapshot_size(sid) == (tmp_path / f"{end:020d}-{1:010d}.checkpoint").stat().st_size
        assert log.snapshot_timestamp(sid) == (end - 1) * DAY
    assert log.snapshot_size(SnapshotId(4, 1)) is None and log.snapshot_timestamp(SnapshotId(4, 1)) is None
    log.close()


def test_kafka_defaults_delete_nothing(tmp_path):
    log = build(tmp_path)
    assert not retention.maybe_clean(log, 9 * DAY, KAFKA_BYTES, KAFKA_MS)  # the oldest is 7 days old, not more
    assert (segments(tmp_path), checkpoints(tmp_path), log.start_offset) == ([0, 2, 4, 6, 8, 10], [3, 6, 9], 0)
    log.close()


def test_by_bytes_only_segments_wholly_below_the_new_start_go(tmp_path):
    log = build(tmp_path)
    snaps = sum(log.snapshot_size(s) for s in log.snapshot_ids())
    limit = log.size_in_bytes() + snaps - 1  # one byte too many: the oldest snapshot goes
    assert retention.maybe_clean(log, 0, limit, -1)
    assert log.start_offset == 6 and checkpoints(tmp_path) == [6, 9]
    assert segments(tmp_path) == [6, 8, 10]  # [0, 2) and [2, 4) and [4, 6) end at or below 6
    assert [b.base_offset for b in log.read(0, 1 << 20)][0] == 6
    assert retention.maybe_clean(log, 0, 0, -1)  # 0: only the newest snapshot
    assert log.start_offset == 9 and checkpoints(tmp_path) == [9]
    assert segments(tmp_path) == [8, 10]  # [8, 10) holds 9: it stays, partly below the start
    log.close()


def test_by_time_and_a_restart_keeps_the_rest(tmp_path):
    log = build(tmp_path)
    assert retention.maybe_clean(log, 12 * DAY, -1, 5 * DAY)  # snapshots of days 2 and 5 are older than 5 days
    assert (log.start_offset, checkpoints(tmp_path), segments(tmp_path)) == (9, [9], [8, 10])
    log.close()

    again = open_log(tmp_path)  # Kafka's restart rule: the log starts at its first segment again
    assert (again.start_offset, again.end_offset) == (8, 12)
    assert [s.end_offset for s in again.snapshot_ids()] == [9]
    again.close()


def test_a_restart_keeps_every_snapshot_and_the_log_below_them(tmp_path):
    build(tmp_path).close()
    again = open_log(tmp_path)
    assert [s.end_offset for s in again.snapshot_ids()] == [3, 6, 9]
    assert (again.start_offset, again.end_offset, again.latest_snapshot().snapshot_id) == (0, 12, SnapshotId(9, 1))
    again.close()
