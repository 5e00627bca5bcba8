"""Metadata log retention: which snapshots and log prefix to delete, as Kafka 3.9's KafkaMetadataLog.maybeClean.

Rules:
- Nothing is deleted when a snapshot is written alone: the log and every snapshot stay until the log plus
  the snapshots exceed metadata.max.retention.bytes, or a snapshot's LastContainedLogTimestamp is older
  than metadata.max.retention.ms (a negative setting turns that rule off). A follower behind the newest
  snapshot but within retention thus catches up from the log instead of fetching a snapshot.
- Snapshots go oldest first, and only one whose successor exists: the newest snapshot always stays.
  Dropping snapshot i moves the log start to snapshot i+1 (delete_before_snapshot); the log then
  deletes the segments wholly below the new start, never more (Kafka's underlying log has no
  retention.ms or retention.bytes of its own). The first snapshot that may stay ends the pass.
- By size, each step counts the log as it is then (segments already deleted no longer count) plus the
  snapshots not yet dropped; by time, `now` is the node's clock (wall clock in a server).
- The core runs a pass after each snapshot it stores and, as KafkaRaftClient's cleaner, once every
  CLEAN_INTERVAL_MS from tick(). Sans-I/O: the log answers sizes and timestamps; time comes from the caller.
"""
from __future__ import annotations

CLEAN_INTERVAL_MS = 60_000  # KafkaRaftClient's RaftMetadataLogCleanerManager delay


def maybe_clean(log, now: int, retention_max_bytes: int, retention_millis: int) -> bool:
    """Apply both rules, size first; return whether anything was deleted."""
    cleaned = clean_by_size(log, retention_max_bytes)
    return clean_by_time(log, now, retention_millis) or cleaned


def clean_snapshots(log, should_clean) -> bool:
    """Walk the snapshots oldest first: while `should_clean(snapshot)`, move the log start to the next one."""
    ids = log.snapshot_ids()
    cleaned = False
    for snapshot_id, next_id in zip(ids, ids[1:]):
        if not should_clean(snapshot_id) or not log.delete_before_snapshot(next_id):
            break
        cleaned = True
    return cleaned


def clean_by_size(log, retention_max_bytes: int) -> bool:
    """Drop old snapshots while the log and the snapshots kept exceed `retention_max_bytes`."""
    if retention_max_bytes < 0:
        return False
    sizes = {sid: log.snapshot_size(sid) for sid in log.snapshot_ids()}
    kept = sum(size for size in sizes.values() if size is not None)

    def too_big(snapshot_id) -> bool:
        nonlocal kept
        size = sizes.get(snapshot_id)
        if size is None or log.size_in_bytes() + kept <= retention_max_bytes:
            return False
        kept -= size
        return True
    return clean_snapshots(log, too_big)


def clean_by_time(log, now: int, retention_millis: int) -> bool:
    """Drop old snapshots whose last contained record is more than `retention_millis` old."""
    if retention_millis < 0:
        return False

    def too_old(snapshot_id) -> bool:
        timestamp = log.snapshot_timestamp(snapshot_id)
        return timestamp is not None and now - timestamp > retention_millis
    return clean_snapshots(log, too_old)


def clean(node) -> bool:
    """Run a pass on a RaftNode's log with its settings and clock."""
    cfg = node.cfg
    return maybe_clean(node.log, node.now, cfg.retention_max_bytes, cfg.retention_millis)


def on_tick(node) -> bool:
    """Run a pass when the node's clock crosses a multiple of CLEAN_INTERVAL_MS (KafkaRaftClient's cleaner)."""
    if node.now // CLEAN_INTERVAL_MS == (node.now - node.cfg.tick_ms) // CLEAN_INTERVAL_MS:
        return False
    return clean(node)
