"""The simulated broker's metadata image: the committed records of the log its fetcher follows, replayed.

Rules:
- The broker's own metadata Fetch answers (broker_sim's fetch loop) are handed in with on_fetch(); nothing is
  fetched twice. Batches wait in `pending` until the answer's high watermark passes them (Kafka's broker
  publishes committed metadata only); a diverging epoch drops the pending ones past it.
- A SnapshotId in an answer (the leader's log starts after a snapshot) downloads that snapshot with
  FetchSnapshot v1 on the same connection and installs it in place of the image.
- A batch below the next offset expected is one seen before (a restarted fetch loop starts at 0, as a
  restarted broker replays its local log): it is skipped, the image stays.
- `image` is the newest committed image; `offset` the end of what it holds. on_change(image) callbacks run
  after each change, in the fetch loop's task (the replicas and the listener react to leadership changes).
"""
from __future__ import annotations

import logging

from kraftsman.controller.image.batch_loader import ImageBuilder
from kraftsman.controller.image.image import EMPTY
from kraftsman.controller.image.producer_ids import Provenance
from kraftsman.controller.raft import messages as raft_msg
from kraftsman.controller.raft.records import split_batches
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.batch import RecordBatch

log = logging.getLogger("kraftsman.broker_sim")
SNAPSHOT_CHUNK = 8 << 20


class ImageFollower:
    """Replay what a broker's metadata fetcher receives into committed images."""

    def __init__(self, on_fault=None):
        self.builder = ImageBuilder(on_fault=on_fault)
        self.image = EMPTY
        self.pending: list = []
        self.next_offset = 0      # the offset the next new batch starts at
        self.offset = 0           # every committed batch below this is in `image`
        self.high_watermark = -1
        self.listeners: list = []

    def on_change(self, callback) -> None:
        """Call callback(image) whenever the committed image changes."""
        self.listeners.append(callback)

    async def on_fetch(self, conn, response) -> None:
        """Take one metadata Fetch answer (`conn` is the connection it came on)."""
        part = response.responses[0].partitions[0] if response.responses and response.responses[0].partitions \
            else None
        if part is None or response.error_code or part.error_code:
            return
        if part.snapshot_id is not None and part.snapshot_id.end_offset >= 0:
            await self._load_snapshot(conn, part.snapshot_id.end_offset, part.snapshot_id.epoch,
                                      part.current_leader.leader_epoch)
            return
        if part.diverging_epoch is not None and part.diverging_epoch.end_offset >= 0:
            self._truncate(part.diverging_epoch.end_offset)
            return
        for batch in split_batches(part.records or b""):
            if batch.base_offset >= self.next_offset:
                self.pending.append(batch)
                self.next_offset = batch.next_offset
        self.high_watermark = max(self.high_watermark, part.high_watermark)
        self._commit()

    def _truncate(self, end_offset: int) -> None:
        self.pending = [b for b in self.pending if b.next_offset <= end_offset]
        self.next_offset = max(self.offset, self.pending[-1].next_offset if self.pending else 0)

    def _commit(self) -> None:
        done = 0
        for batch in self.pending:
            if batch.next_offset > self.high_watermark:
                break
            done += 1
            if not batch.is_control:
                rb = RecordBatch(batch.data)
                self.builder.load_batch(rb.raft_values(), batch.epoch, rb.max_timestamp)
            self.offset = batch.next_offset
        del self.pending[:done]
        if done:
            self._publish()

    def _publish(self) -> None:
        image = self.builder.image()
        if image is self.image:
            return
        self.image = image
        for callback in self.listeners:
            try:
                callback(image)
            except Exception:  # noqa: BLE001 - one listener's bug must not stop the metadata
                log.exception("metadata listener failed")

    async def _load_snapshot(self, conn, end_offset: int, epoch: int, leader_epoch: int) -> None:
        chunks, position, size = [], 0, None
        while size is None or position < size:
            response = await conn.request("FetchSnapshot", 1, _snapshot_request(end_offset, epoch, leader_epoch,
                                                                                position), timeout_ms=10_000)
            part = response.topics[0].partitions[0] if response.topics and response.topics[0].partitions else None
            if part is None or response.error_code or part.error_code or not part.unaligned_records:
                return  # the next Fetch answer names the snapshot again
            chunks.append(bytes(part.unaligned_records))
            position, size = position + len(chunks[-1]), part.size
        self.builder.start_snapshot()
        for batch in split_batches(b"".join(chunks)):
            if not batch.is_control:
                rb = RecordBatch(batch.data)
                self.builder.load_batch(rb.raft_values(), batch.epoch, rb.max_timestamp)
        self.builder.last = Provenance(end_offset - 1, epoch, self.builder.last.time_ms)
        self.pending.clear()
        self.next_offset = self.offset = end_offset
        self._publish()


def _snapshot_request(end_offset: int, epoch: int, leader_epoch: int, position: int):
    cls = codec.message_class("FetchSnapshotRequest")
    part = cls.PartitionSnapshot(partition=0, current_leader_epoch=leader_epoch, position=position,
                                 snapshot_id=cls.SnapshotId(end_offset=end_offset, epoch=epoch))
    return cls(cluster_id=None, replica_id=-1, max_bytes=SNAPSHOT_CHUNK,
               topics=[cls.TopicSnapshot(name=raft_msg.TOPIC, partitions=[part])])
