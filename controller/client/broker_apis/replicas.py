"""The simulated broker's partition replicas, leader side: logs, Fetch from followers, the ISR and DescribeLogDirs
(Kafka 3.9's ReplicaManager and Partition, reduced to what the admin tools observe).

Rules:
- The image decides roles: a partition whose replicas hold this broker gets a log (kept across restarts, as a
  disk would; dropped when the broker stops being a replica); the leader takes writes (append) and answers Fetch.
- A follower's Fetch offset is its log end. The leader's high watermark is the smallest log end in the ISR.
- ISR expansion (Partition.maybeExpandIsr): a follower outside the ISR whose log end reached the high watermark,
  registered, unfenced, not shutting down and fetching with its current broker epoch (KIP-903), is added at the
  end of the ISR by AlterPartition v3 (broker epochs, the image's leader and partition epochs), one request per
  partition at a time. A leader elected uncleanly (RECOVERING) first sends AlterPartition with RECOVERED.
  The ISR never shrinks here: fenced and shut-down brokers leave it through the controller.
- Fetch: NOT_LEADER_OR_FOLLOWER for a partition this broker does not lead, UNKNOWN_TOPIC_ID for an unknown id,
  OFFSET_OUT_OF_RANGE past the log end; followers read to the log end, consumers to the high watermark; a
  throttled out-of-ISR partition gets no records while the leader quota is exceeded (replica_quotas); with
  nothing to send the answer waits up to max_wait_ms (at most 1 s) for new data.
- DescribeLogDirs lists the broker's one log directory (the first of log.dirs) with each replica's size and its
  lag (high watermark - log end, at least 0); total and usable bytes are unknown (-1).
"""
from __future__ import annotations

import asyncio
import logging
import time

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E

from . import replica_quotas
from .partition_log import PartitionLog, ReplicationQuota

log = logging.getLogger("kraftsman.broker_sim")
RECOVERING, RECOVERED = 1, 0
MAX_WAIT_S = 1.0
_F = codec.message_class("FetchResponse")


class ReplicaManager:
    """Partition replicas of broker `broker_id`; `epoch()` is its current broker epoch, `channel` sends
    AlterPartition to the active controller."""

    def __init__(self, broker_id: int, *, epoch, channel, log_dir: str = "/tmp/kafka-logs"):
        self.broker_id, self.epoch, self.channel, self.log_dir = broker_id, epoch, channel, log_dir
        self.logs: dict[tuple[bytes, int], PartitionLog] = {}
        self.follower_ends: dict[tuple[bytes, int], dict[int, tuple[int, int]]] = {}  # id -> (log end, epoch)
        self.pending: set[tuple[bytes, int]] = set()
        self.leader_quota = ReplicationQuota()
        self.image = None
        self._data: asyncio.Event | None = None
        self._tasks: set[asyncio.Task] = set()
        self.alter_partitions = 0

    # ------------------------------------------------------------ roles
    def on_image(self, image) -> None:
        """Follow the image: logs for this broker's replicas, ISR work for the partitions it leads."""
        self.image = image
        mine = set()
        for topic in image.topics.by_id.values():
            for index in topic.partitions:
                partition = topic.partition(index)
                if self.broker_id in partition.replicas:
                    key = (topic.topic_id, index)
                    mine.add(key)
                    self.logs.setdefault(key, PartitionLog())
                    if partition.leader == self.broker_id:
                        self._lead(topic, index, partition)
        for key in [k for k in self.logs if k not in mine]:
            del self.logs[key]
            self.follower_ends.pop(key, None)
        self._wake()

    def _lead(self, topic, index: int, partition) -> None:
        key = (topic.topic_id, index)
        self._advance_high_watermark(key, partition)
        if key in self.pending:
            return
        if partition.leader_recovery_state == RECOVERING:
            self._alter(topic, index, partition, list(partition.isr), RECOVERED)
            return
        for replica in partition.replicas:
            if replica not in partition.isr and self._caught_up(key, replica):
                self._alter(topic, index, partition, list(partition.isr) + [replica], RECOVERED)
                return

    def _caught_up(self, key, replica: int) -> bool:
        end, epoch = self.follower_ends.get(key, {}).get(replica, (-1, -1))
        registration = self.image.cluster.brokers.get(replica)
        if registration is None or end < self.logs[key].high_watermark:
            return False
        record = registration.record
        return not record.fenced and not record.in_controlled_shutdown and record.broker_epoch == epoch

    def _advance_high_watermark(self, key, partition) -> None:
        log_ = self.logs[key]
        ends = self.follower_ends.get(key, {})
        known = [log_.log_end_offset] + [ends[r][0] for r in partition.isr if r != self.broker_id and r in ends]
        if len(known) == len([r for r in partition.isr if r == self.broker_id or r in ends]):
            log_.high_watermark = max(log_.high_watermark, min(known))

    # ------------------------------------------------------------ AlterPartition
    def _alter(self, topic, index: int, partition, isr: list[int], recovery: int) -> None:
        key = (topic.topic_id, index)
        self.pending.add(key)
        task = asyncio.get_running_loop().create_task(self._send_alter(topic, index, partition, isr, recovery))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_alter(self, topic, index: int, partition, isr: list[int], recovery: int) -> None:
        cls = codec.message_class("AlterPartitionRequest")
        brokers = self.image.cluster.brokers
        body = cls(broker_id=self.broker_id, broker_epoch=self.epoch(), topics=[cls.TopicData(
            topic_id=topic.topic_id, partitions=[cls.PartitionData(
                partition_index=index, leader_epoch=partition.leader_epoch, leader_recovery_state=recovery,
                partition_epoch=partition.partition_epoch,
                new_isr_with_epochs=[cls.BrokerState(broker_id=b, broker_epoch=brokers[b].record.broker_epoch
                                                     if b in brokers else -1) for b in isr])])])
        try:
            response = await self.channel.send("AlterPartition", 3, body)
            self.alter_partitions += 1
            errors = {p.error_code for t in response.topics for p in t.partitions} | {response.error_code}
            if errors - {0, E.NEW_LEADER_ELECTED}:  # NEW_LEADER_ELECTED: applied, and the leader moved
                log.info("broker %d: AlterPartition of %s-%d answered %s", self.broker_id, topic.name, index, errors)
                await asyncio.sleep(0.2)
        except Exception as e:  # noqa: BLE001 - the next image or fetch tries again
            log.info("broker %d: AlterPartition of %s-%d failed: %s", self.broker_id, topic.name, index, e)
        finally:
            self.pending.discard((topic.topic_id, index))

    # ------------------------------------------------------------ writes
    def append(self, topic_name: str, partition: int, nbytes: int) -> None:
        """Write `nbytes` to a partition this broker leads (ValueError otherwise)."""
        topic = self.image.topics.by_name.get(topic_name) if self.image is not None else None
        state = topic.partition(partition) if topic is not None else None
        key = (topic.topic_id, partition) if topic is not None else None
        if state is None or state.leader != self.broker_id or key not in self.logs:
            raise ValueError(f"broker {self.broker_id} does not lead {topic_name}-{partition}")
        self.logs[key].append(nbytes, state.leader_epoch, int(time.time() * 1000))
        self._advance_high_watermark(key, state)
        self._wake()

    def _wake(self) -> None:
        if self._data is not None:
            self._data.set()
        self._data = None

    async def _new_data(self, timeout: float) -> None:
        if self._data is None:
            self._data = asyncio.Event()
        try:
            await asyncio.wait_for(self._data.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    # ------------------------------------------------------------ Fetch (leader side)
    async def fetch(self, body, version: int):
        """Answer a Fetch (v12-v17 by topic id from v13): replicas and consumers."""
        replica = body.replica_state.replica_id if version >= 15 else body.replica_id
        epoch = body.replica_state.replica_epoch if version >= 15 else -1
        deadline = asyncio.get_running_loop().time() + min(body.max_wait_ms / 1000, MAX_WAIT_S)
        while True:
            response, size = self._read(body, version, replica, epoch)
            remaining = deadline - asyncio.get_running_loop().time()
            if size >= max(body.min_bytes, 1) or remaining <= 0:
                return response
            await self._new_data(remaining)

    def _read(self, body, version: int, replica: int, epoch: int):
        budget, out = body.max_bytes, []
        for wanted in body.topics:
            topic = self._topic(wanted, version)
            parts = []
            for p in wanted.partitions:
                part = self._read_partition(topic, p, replica, epoch, budget)
                budget -= len(part.records or b"")
                parts.append(part)
            out.append(_F.FetchableTopicResponse(topic=wanted.topic if version < 13 else "",
                                                 topic_id=wanted.topic_id if version >= 13 else None,
                                                 partitions=parts))
        size = body.max_bytes - budget
        return _F(throttle_time_ms=0, error_code=0, session_id=0, responses=out), size

    def _topic(self, wanted, version: int):
        topics = self.image.topics if self.image is not None else None
        if topics is None:
            return None
        return topics.by_id.get(bytes(wanted.topic_id)) if version >= 13 else topics.by_name.get(wanted.topic)

    def _read_partition(self, topic, p, replica: int, epoch: int, budget: int):
        part = _F.PartitionData(partition_index=p.partition, high_watermark=-1, last_stable_offset=-1,
                                log_start_offset=-1, aborted_transactions=None, preferred_read_replica=-1,
                                records=b"")
        state = topic.partition(p.partition) if topic is not None else None
        key = (topic.topic_id, p.partition) if topic is not None else None
        if topic is None:
            part.error_code = E.UNKNOWN_TOPIC_ID
            return part
        if state is None or state.leader != self.broker_id or key not in self.logs:
            part.error_code = E.NOT_LEADER_OR_FOLLOWER
            return part
        log_ = self.logs[key]
        if p.fetch_offset > log_.log_end_offset:
            part.error_code = E.OFFSET_OUT_OF_RANGE
        elif replica >= 0:
            self.follower_ends.setdefault(key, {})[replica] = (p.fetch_offset, epoch)
            self._lead(topic, p.partition, state)
            part.records = self._replica_records(topic, p, state, log_, replica, budget)
        else:
            part.records = log_.read(p.fetch_offset, min(p.partition_max_bytes, budget), log_.high_watermark)
        part.high_watermark = part.last_stable_offset = log_.high_watermark
        part.log_start_offset = 0
        return part

    def _replica_records(self, topic, p, state, log_, replica: int, budget: int) -> bytes:
        now = asyncio.get_running_loop().time()
        limited = replica not in state.isr and \
            replica_quotas.throttled(self.image, topic.name, p.partition, self.broker_id, "leader")
        if limited and self.leader_quota.exceeded(now, replica_quotas.rate(self.image, self.broker_id, "leader")):
            return b""
        data = log_.read(p.fetch_offset, min(p.partition_max_bytes, budget), log_.log_end_offset)
        if limited:
            self.leader_quota.record(now, len(data))
        return data

    # ------------------------------------------------------------ DescribeLogDirs
    def describe_log_dirs(self, request):
        """Answer DescribeLogDirs v0-v4 for this broker's one log directory."""
        cls = codec.message_class("DescribeLogDirsResponse")
        wanted = None if request.topics is None else {(t.topic, p) for t in request.topics for p in t.partitions}
        by_topic: dict[str, list] = {}
        names = {t.topic_id: t.name for t in self.image.topics.by_id.values()} if self.image is not None else {}
        for (topic_id, index), log_ in sorted(self.logs.items(), key=lambda kv: (names.get(kv[0][0], ""), kv[0][1])):
            name = names.get(topic_id)
            if name is None or (wanted is not None and (name, index) not in wanted):
                continue
            by_topic.setdefault(name, []).append(cls.DescribeLogDirsPartition(
                partition_index=index, partition_size=log_.size, is_future_key=False,
                offset_lag=max(log_.high_watermark - log_.log_end_offset, 0)))
        topics = [cls.DescribeLogDirsTopic(name=n, partitions=ps) for n, ps in by_topic.items()]
        return cls(throttle_time_ms=0, error_code=0, results=[cls.DescribeLogDirsResult(
            error_code=0, log_dir=self.log_dir, topics=topics, total_bytes=-1, usable_bytes=-1)])

    async def close(self) -> None:
        """Cancel AlterPartition requests in flight."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.pending.clear()
