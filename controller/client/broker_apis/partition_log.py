"""A simulated broker's partition replica log (record batches in memory) and Kafka's replication quota.

Rules:
- A log is a list of real record batches (v2, one record of zeros each, at most BATCH_BYTES); offsets count
  records, sizes count batch bytes (what DescribeLogDirs reports and quotas meter). `append` writes new batches
  as the partition leader (a producer's data); `append_batches` takes a leader's fetched batches as a follower.
- read(offset, max_bytes, upper) returns whole batches from the one holding `offset`, at least one batch when
  any is below `upper` (Kafka returns a first batch even past the fetch size), never a batch at or past `upper`.
- ReplicationQuota is Kafka's windowed Rate: bytes recorded in the last 11 one-second samples, divided by the time
  they span (at least 10 s); `exceeded(limit)` when that rate is above limit. A first fetch always goes through,
  so a 1000 B/s throttle moves up to one fetch (1 MiB) and then about one fetch per 11 s.
"""
from __future__ import annotations

import bisect

from kraftsman.storage.records.batch import build_batch

BATCH_BYTES = 16 << 10
SAMPLES, SAMPLE_SECONDS = 11, 1.0


class PartitionLog:
    """One replica's log: batches, their base offsets and the byte size."""

    __slots__ = ("batches", "bases", "log_end_offset", "size", "high_watermark")

    def __init__(self):
        self.batches: list[bytes] = []
        self.bases: list[int] = []
        self.log_end_offset = 0
        self.size = 0
        self.high_watermark = 0

    def append(self, nbytes: int, leader_epoch: int, timestamp_ms: int) -> None:
        """Write about `nbytes` of records as new batches (the leader's produce path)."""
        while nbytes > 0:
            value = bytes(max(1, min(nbytes, BATCH_BYTES) - 80))
            batch = build_batch([(None, value)], base_offset=self.log_end_offset, timestamp=timestamp_ms,
                                partition_leader_epoch=leader_epoch)
            self._add(batch, self.log_end_offset, self.log_end_offset + 1)
            nbytes -= len(batch)

    def append_batches(self, data: bytes) -> None:
        """Append fetched batches (each starting at or after the log end) to this follower log."""
        from kraftsman.controller.raft.records import split_batches

        for batch in split_batches(data):
            if batch.base_offset >= self.log_end_offset:
                self._add(bytes(batch.data), batch.base_offset, batch.next_offset)

    def _add(self, batch: bytes, base: int, next_offset: int) -> None:
        self.batches.append(batch)
        self.bases.append(base)
        self.log_end_offset = next_offset
        self.size += len(batch)

    def truncate(self, offset: int) -> None:
        """Drop every batch at or after `offset` (a follower ahead of its new leader)."""
        keep = bisect.bisect_left(self.bases, offset)
        self.batches, self.bases = self.batches[:keep], self.bases[:keep]
        self.size = sum(len(b) for b in self.batches)
        self.log_end_offset = min(self.log_end_offset, offset)
        self.high_watermark = min(self.high_watermark, self.log_end_offset)

    def read(self, offset: int, max_bytes: int, upper: int) -> bytes:
        """Return whole batches from `offset` up to about `max_bytes`, all below offset `upper`."""
        if offset >= min(upper, self.log_end_offset):
            return b""
        index = max(bisect.bisect_right(self.bases, offset) - 1, 0)
        out, total = [], 0
        while index < len(self.batches) and self.bases[index] < upper:
            batch = self.batches[index]
            if out and total + len(batch) > max_bytes:
                break
            out.append(batch)
            total += len(batch)
            index += 1
        return b"".join(out)


class ReplicationQuota:
    """Bytes moved in the last SAMPLES seconds, as Kafka's replication quota rate measures them."""

    def __init__(self):
        self.samples: list[tuple[float, int]] = []

    def record(self, now: float, nbytes: int) -> None:
        """Count `nbytes` moved at `now` (loop seconds)."""
        self._expire(now)
        self.samples.append((now, nbytes))

    def exceeded(self, now: float, limit: float) -> bool:
        """Tell whether the measured rate is above `limit` bytes per second."""
        self._expire(now)
        if not self.samples:
            return False
        span = max(now - self.samples[0][0], (SAMPLES - 1) * SAMPLE_SECONDS)
        return sum(n for _, n in self.samples) / span > limit

    def _expire(self, now: float) -> None:
        horizon = now - SAMPLES * SAMPLE_SECONDS
        while self.samples and self.samples[0][0] <= horizon:
            self.samples.pop(0)
