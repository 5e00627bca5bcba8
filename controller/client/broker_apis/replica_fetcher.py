"""The simulated broker's replica fetchers: one task per leader broker, fetching the partitions it follows
(Kafka 3.9's ReplicaFetcherThread, reduced).

Rules:
- From the image: a partition whose replicas hold this broker and whose leader is another registered broker is
  fetched from that broker's endpoint on the listener, with Fetch v17 by topic id (replica_state: this broker's
  id and broker epoch; 500 ms max wait, 1 MiB per partition, 10 MiB per answer), each from its log end.
- Fetched batches are appended; the follower's high watermark is min(the leader's, its log end). An
  OFFSET_OUT_OF_RANGE answer (the follower is ahead of a new leader) truncates to the leader's high watermark.
- A follower that has not reached the leader's high watermark (of the last answer) on a partition throttled for it
  (follower.replication.throttled.replicas with its id) leaves it out of the request while the follower quota is
  exceeded, and counts what it fetches for it (Kafka's shouldFollowerThrottle: caught up means in sync).
- A failed connection or request waits replica.fetch.backoff.ms (1 s) and tries again; a task ends when this
  broker no longer follows anything on that leader.
"""
from __future__ import annotations

import asyncio
import logging

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E

from . import replica_quotas
from .metadata_reads import endpoint
from .partition_log import ReplicationQuota

log = logging.getLogger("kraftsman.broker_sim")
PARTITION_MAX_BYTES, RESPONSE_MAX_BYTES, MAX_WAIT_MS, BACKOFF_S = 1 << 20, 10 << 20, 500, 1.0
_F = codec.message_class("FetchRequest")


class ReplicaFetchers:
    """Fetch tasks of `replicas` (a ReplicaManager) toward each leader broker, over `listener`."""

    def __init__(self, replicas, listener: str = "PLAINTEXT"):
        self.replicas, self.listener = replicas, listener
        self.quota = ReplicationQuota()
        self.tasks: dict[int, asyncio.Task] = {}
        self.leader_high_watermarks: dict[tuple[bytes, int], int] = {}  # from the last answer, per partition
        self.fetches = 0

    def followed(self, leader_id: int) -> list:
        """Return (topic, index, partition) of every partition this broker follows on `leader_id`."""
        image, me = self.replicas.image, self.replicas.broker_id
        out = []
        for topic in image.topics.by_id.values():
            for index in topic.partitions:
                p = topic.partition(index)
                if me in p.replicas and p.leader == leader_id != me and (topic.topic_id, index) in self.replicas.logs:
                    out.append((topic, index, p))
        return out

    def on_image(self, image) -> None:
        """Start a task for each leader this broker now follows something on."""
        leaders = {topic.partition(i).leader for topic in image.topics.by_id.values() for i in topic.partitions
                   if self.replicas.broker_id in topic.partition(i).replicas}
        loop = asyncio.get_running_loop()
        for leader in leaders - {self.replicas.broker_id, -1}:
            task = self.tasks.get(leader)
            if leader in image.cluster.brokers and (task is None or task.done()):
                self.tasks[leader] = loop.create_task(self._run(leader))

    async def _run(self, leader_id: int) -> None:
        conn = None
        try:
            while self.followed(leader_id):
                try:
                    if conn is None:
                        conn = await self._connect(leader_id)
                    if not await self._fetch_once(conn, leader_id):
                        await asyncio.sleep(BACKOFF_S)
                except (OSError, asyncio.TimeoutError, ConnectionError, EOFError) as e:
                    log.debug("broker %d: fetch from %d failed: %s", self.replicas.broker_id, leader_id, e)
                    conn = await _closed(conn)
                    await asyncio.sleep(BACKOFF_S)
        finally:
            await _closed(conn)

    async def _connect(self, leader_id: int):
        from kraftsman.controller.wire.connection import Connection

        node = endpoint(self.replicas.image, leader_id, self.listener)
        if node is None:
            raise ConnectionError(f"broker {leader_id} has no {self.listener} endpoint")
        client_id = f"broker-{self.replicas.broker_id}-fetcher-0"
        return await Connection.open(node[0], node[1], client_id=client_id, timeout_ms=5000)

    async def _fetch_once(self, conn, leader_id: int) -> bool:
        """Send one Fetch for what this broker follows on `leader_id`; False when nothing could be asked."""
        wanted = [w for w in self.followed(leader_id) if not self._held(*w)]
        if not wanted:
            return False
        body = self._request(wanted)
        response = await conn.request("Fetch", 17, body, timeout_ms=MAX_WAIT_MS + 5000)
        self.fetches += 1
        by_id = {(bytes(t.topic_id), p.partition_index): p for t in response.responses for p in t.partitions}
        for topic, index, partition in wanted:
            answer = by_id.get((topic.topic_id, index))
            if answer is not None:
                self._apply(topic, index, partition, answer)
        return True

    def _held(self, topic, index: int, partition) -> bool:
        """Tell whether the follower quota keeps this partition out of the next request (one that has caught up
        with the leader's high watermark in the last answer counts as in sync and is never held)."""
        me, image = self.replicas.broker_id, self.replicas.image
        if self._in_sync(topic, index) or not replica_quotas.throttled(image, topic.name, index, me, "follower"):
            return False
        now = asyncio.get_running_loop().time()
        return self.quota.exceeded(now, replica_quotas.rate(image, me, "follower"))

    def _in_sync(self, topic, index: int) -> bool:
        key = (topic.topic_id, index)
        leader_high_watermark = self.leader_high_watermarks.get(key)
        log_ = self.replicas.logs.get(key)
        return leader_high_watermark is not None and log_ is not None and log_.log_end_offset >= leader_high_watermark

    def _request(self, wanted):
        topics: dict[bytes, list] = {}
        for topic, index, partition in wanted:
            log_ = self.replicas.logs[(topic.topic_id, index)]
            topics.setdefault(topic.topic_id, []).append(_F.FetchPartition(
                partition=index, current_leader_epoch=partition.leader_epoch, fetch_offset=log_.log_end_offset,
                last_fetched_epoch=-1, log_start_offset=0, partition_max_bytes=PARTITION_MAX_BYTES))
        return _F(cluster_id=None, replica_id=-1, max_wait_ms=MAX_WAIT_MS, min_bytes=1,
                  max_bytes=RESPONSE_MAX_BYTES, isolation_level=0, session_id=0, session_epoch=-1,
                  replica_state=_F.ReplicaState(replica_id=self.replicas.broker_id,
                                                replica_epoch=self.replicas.epoch()),
                  topics=[_F.FetchTopic(topic="", topic_id=t, partitions=ps) for t, ps in topics.items()],
                  forgotten_topics_data=[], rack_id="")

    def _apply(self, topic, index: int, partition, answer) -> None:
        log_ = self.replicas.logs.get((topic.topic_id, index))
        if log_ is None:
            return
        if answer.error_code == E.OFFSET_OUT_OF_RANGE:
            log_.truncate(max(answer.high_watermark, 0))
            return
        if answer.error_code:
            return
        data = bytes(answer.records or b"")
        in_sync = self._in_sync(topic, index)
        log_.append_batches(data)
        log_.high_watermark = max(log_.high_watermark, min(answer.high_watermark, log_.log_end_offset))
        self.leader_high_watermarks[(topic.topic_id, index)] = answer.high_watermark
        me = self.replicas.broker_id
        if data and not in_sync and replica_quotas.throttled(self.replicas.image, topic.name, index, me, "follower"):
            self.quota.record(asyncio.get_running_loop().time(), len(data))

    async def close(self) -> None:
        """Stop every fetch task."""
        for task in self.tasks.values():
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        self.tasks.clear()


async def _closed(conn) -> None:
    if conn is not None:
        result = conn.close()
        if asyncio.iscoroutine(result):
            await result
    return None
