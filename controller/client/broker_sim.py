"""Simulated brokers: register, heartbeat, follow the metadata log as observers, shut down (a test and bench tool).

Rules:
- A SimulatedBroker speaks to the controllers exactly as a Kafka broker's lifecycle manager does:
  BrokerRegistration (v4), then BrokerHeartbeat (v1) every heartbeat interval with its current
  metadata offset; it asks to be unfenced once registered and reports controlled shutdown.
- Its metadata offset comes from a real observer Fetch (v17) of `__cluster_metadata` from the
  raft leader (records are counted, not stored); `fetch=False` reports the offset the controller
  needs instead (benchmarks of many brokers).
- It is as strict as a Kafka broker's Raft client: a Fetch answer's high watermark of -1 (a new leader that
  has not committed in its epoch yet) is skipped, and one below the last it took is fatal: the broker
  stops, as Kafka's exits, and `fatal` keeps Kafka's text ("Non-monotonic update of high watermark ...").
- crash() stops every task without a word, as a SIGKILL would; stop() shuts down politely; restart() is a new
  process on the same broker id: a new incarnation id and start time, registered again (retried while the
  controller still holds the old incarnation's live session: DUPLICATE_BROKER_REGISTRATION).
- Its registration tells the controller when it started (kraftsman's tagged StartTimeMs); the controller keeps
  it in the metadata. With send_start_time=False it sends none, as a Kafka broker (the controller then records
  the registration time).
- Counters (heartbeats sent, late heartbeats, errors) let benchmarks check that no lease was missed.
- `log_dirs` log directories (random ids) are registered, as a JBOD broker does (KIP-858); 1 by default.
  assign_replicas() sends AssignReplicasToDirs as a broker does once a replica's log lives in a directory;
  fail_directory() marks one offline as Kafka's BrokerLifecycleManager.propagateDirectoryFailure does: every
  heartbeat from then on lists it in OfflineLogDirs (v1), and one is sent at once; restart() registers
  the directories still online.
- `security` (a wire.secure_connect.ClientSecurity) makes every connection log in (TLS, SASL) as a broker
  configured for a secured controller listener does; None is PLAINTEXT.
- Its PLAINTEXT listener is registered at `host`:`port`; broker_apis serves it (ServingBroker), taking the metadata
  through `metadata_sink`. The metadata Fetch names its log directory (ReplicaDirectoryId), as Kafka's does.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time

from kraftsman.controller.raft import messages as raft_msg
from kraftsman.controller.raft.records import InvalidRecords, split_batches
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import METADATA_TOPIC_ID, Uuid, random_uuid

from .controller_client import ActiveControllerClient

log = logging.getLogger("kraftsman.broker_sim")
Reg = codec.message_class("BrokerRegistrationRequest")
Heartbeat = codec.message_class("BrokerHeartbeatRequest")
Fetch = codec.message_class("FetchRequest")
Assign = codec.message_class("AssignReplicasToDirsRequest")
FEATURES = (("metadata.version", 1, 21), ("kraft.version", 0, 1))


class _Fatal(Exception):
    """Signal what makes a Kafka broker exit: the fetch loop ends and the broker crashes."""


class SimulatedBroker:
    """One simulated broker."""

    def __init__(self, broker_id: int, controllers, cluster_id: str, *, rack: str | None = None,
                 heartbeat_interval_ms: int = 2000, fetch: bool = True, port: int | None = None,
                 timeout_ms: int = 10_000, security=None, log_dirs: int = 1, host: str = "localhost",
                 send_start_time: bool = True):
        self.broker_id, self.cluster_id, self.rack, self.host = broker_id, cluster_id, rack, host
        # controllers: {node id: (host, port)}, or a list of (host, port)
        controllers = dict(controllers) if isinstance(controllers, dict) else dict(enumerate(controllers))
        self.controller_ids = list(controllers)
        self.controllers = list(controllers.values())
        self.heartbeat_interval_ms, self.fetch_enabled = heartbeat_interval_ms, fetch
        self.send_start_time = send_start_time
        self.port = port if port is not None else 19000 + broker_id
        self.security = security
        client_class = ActiveControllerClient if security is None else _SecureControllerClient
        self.client = client_class(self.controllers, client_id=f"broker-{broker_id}", timeout_ms=timeout_ms)
        self.client.security = security
        self.incarnation_id = random_uuid()
        self.start_time_ms = int(time.time() * 1000)
        self.directory_ids = [Uuid(os.urandom(16)) for _ in range(log_dirs)]  # JBOD: several log dirs
        self.directory_id = self.directory_ids[0]
        self.offline_directories: list[Uuid] = []
        self.broker_epoch = -1
        self.fenced = True
        self.caught_up = False
        self.should_shut_down = False
        self.metadata_offset = -1
        self.high_watermark = -1
        self.fatal: str | None = None
        self.heartbeats = self.late_heartbeats = self.errors = 0
        self._tasks: list[asyncio.Task] = []
        self._leader = 0
        self._leader_epoch = 0
        self.metadata_sink = None  # takes each metadata Fetch answer too (broker_apis.image_follower)

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Register, then heartbeat and fetch in the background."""
        await self.register()
        self._start_tasks()

    def _start_tasks(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._heartbeat_loop()))
        if self.fetch_enabled:
            self._tasks.append(loop.create_task(self._fetch_loop()))

    async def register(self) -> int:
        """Send BrokerRegistration; return the error code (0 and a broker epoch on success)."""
        body = Reg(broker_id=self.broker_id, cluster_id=self.cluster_id, incarnation_id=self.incarnation_id,
                   listeners=[Reg.Listener(name="PLAINTEXT", host=self.host, port=self.port, security_protocol=0)],
                   features=[Reg.Feature(name=n, min_supported_version=lo, max_supported_version=hi)
                             for n, lo, hi in FEATURES],
                   rack=self.rack, is_migrating_zk_broker=False, log_dirs=list(self.directory_ids),
                   previous_broker_epoch=self.broker_epoch,
                   start_time_ms=self.start_time_ms if self.send_start_time else -1)
        response = await self.client.request("BrokerRegistration", 4, body)
        if response.error_code == 0:
            self.broker_epoch = response.broker_epoch
        return response.error_code

    async def heartbeat(self, want_shut_down: bool = False):
        """Send one BrokerHeartbeat and record what the controller said."""
        offset = self.metadata_offset if self.fetch_enabled else 1 << 62
        body = Heartbeat(broker_id=self.broker_id, broker_epoch=self.broker_epoch,
                         current_metadata_offset=max(offset, 0), want_fence=False, want_shut_down=want_shut_down,
                         offline_log_dirs=list(self.offline_directories))
        response = await self.client.request("BrokerHeartbeat", 1, body)
        self.heartbeats += 1
        if response.error_code == 0:
            self.fenced, self.caught_up = response.is_fenced, response.is_caught_up
            self.should_shut_down = response.should_shut_down
        else:
            self.errors += 1
        return response

    async def fail_directory(self, directory: Uuid):
        """Mark a log directory offline (a failed disk) and tell the controller at once; return its answer."""
        if directory not in self.directory_ids:
            raise ValueError(f"broker {self.broker_id} has no log directory {directory}")
        if directory not in self.offline_directories:
            self.offline_directories.append(directory)
        return await self.heartbeat()

    async def assign_replicas(self, directory: Uuid, topic_id: Uuid, partitions):
        """Send AssignReplicasToDirs: this broker's replicas of `partitions` of a topic live in `directory`."""
        body = Assign(broker_id=self.broker_id, broker_epoch=self.broker_epoch, directories=[Assign.DirectoryData(
            id=directory, topics=[Assign.TopicData(topic_id=topic_id, partitions=[
                Assign.PartitionData(partition_index=p) for p in partitions])])])
        return await self.client.request("AssignReplicasToDirs", 0, body)

    async def _heartbeat_loop(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self.heartbeat_interval_ms / 1000
        while True:
            started = loop.time()
            try:
                await self.heartbeat()
            except Exception as e:  # keep beating: the controller may be failing over
                self.errors += 1
                log.debug("broker %d heartbeat failed: %s", self.broker_id, e)
            elapsed = loop.time() - started
            if elapsed > interval:
                self.late_heartbeats += 1
            await asyncio.sleep(max(interval - elapsed, 0))

    async def controlled_shutdown(self, timeout_s: float = 30) -> bool:
        """Ask to shut down until the controller says ShouldShutDown; stop heartbeating then."""
        self._cancel()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while loop.time() < deadline:
            response = await self.heartbeat(want_shut_down=True)
            if response.error_code == 0 and response.should_shut_down:
                return True
            await asyncio.sleep(self.heartbeat_interval_ms / 4000)
        return False

    async def restart(self, *, clean: bool = True, timeout_s: float = 30) -> int:
        """Stop (a controlled shutdown when `clean`, else a crash) and start again as a new incarnation; return
        the registration's error code (0 once registered)."""
        if clean:
            await self.controlled_shutdown(timeout_s)
        self.crash()
        return await self.start_again(clean=clean, timeout_s=timeout_s)

    async def start_again(self, *, clean: bool = True, timeout_s: float = 30) -> int:
        """Start a stopped broker as a new incarnation (after a clean stop it sends its last broker epoch);
        return the registration's error code."""
        self.incarnation_id, self.start_time_ms = random_uuid(), int(time.time() * 1000)
        self.directory_ids = [d for d in self.directory_ids if d not in self.offline_directories] or self.directory_ids
        self.offline_directories = []   # a new process registers the directories it could open
        self.fenced, self.caught_up, self.should_shut_down = True, False, False
        self.metadata_offset = self.high_watermark = -1
        self.broker_epoch = self.broker_epoch if clean else -1     # Kafka sends the epoch after a clean stop
        loop = asyncio.get_running_loop()
        deadline, code = loop.time() + timeout_s, -1
        while code != 0 and loop.time() < deadline:
            code = await self.register()
            if code != 0:
                await asyncio.sleep(self.heartbeat_interval_ms / 1000)
        if code == 0:
            self._start_tasks()
        return code

    def crash(self) -> None:
        """Stop at once, as a killed process."""
        self._cancel()

    async def stop(self) -> None:
        """Stop tasks and close connections."""
        self._cancel()
        await self.client.close()

    def _cancel(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()

    # ------------------------------------------------------------ observer fetch
    def _fetch_body(self, offset: int, epoch: int):
        part = Fetch.FetchPartition(partition=0, current_leader_epoch=self._leader_epoch, fetch_offset=offset,
                                    last_fetched_epoch=epoch, log_start_offset=-1, partition_max_bytes=1 << 20,
                                    replica_directory_id=self.directory_id)
        return Fetch(cluster_id=self.cluster_id, replica_id=-1,
                     replica_state=Fetch.ReplicaState(replica_id=self.broker_id, replica_epoch=self.broker_epoch),
                     max_wait_ms=500, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                     topics=[Fetch.FetchTopic(topic=raft_msg.TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[part])])

    async def _fetch_loop(self) -> None:
        offset, epoch, conn = 0, 0, None
        while True:
            try:
                if conn is None:
                    host, port = self.controllers[self._leader % len(self.controllers)]
                    conn = await _open(host, port, self.security, f"broker-{self.broker_id}-fetcher", 5000)
                response = await conn.request("Fetch", 17, self._fetch_body(offset, epoch), timeout_ms=5000)
                if self.metadata_sink is not None:
                    await self.metadata_sink.on_fetch(conn, response)
                try:
                    offset, epoch, moved = self._on_fetch(response, offset, epoch)
                except _Fatal:
                    self.crash()
                    return
                if moved:
                    await _close(conn)
                    conn = None
            except (OSError, asyncio.TimeoutError, ConnectionError, EOFError, InvalidRecords):
                if conn is not None:
                    await _close(conn)
                conn = None
                self._leader += 1
                await asyncio.sleep(0.1)

    def _on_fetch(self, response, offset: int, epoch: int) -> tuple[int, int, bool]:
        part = response.responses[0].partitions[0] if response.responses else None
        if part is None or response.error_code:
            return offset, epoch, True
        leader = part.current_leader
        moved = leader.leader_epoch > self._leader_epoch
        self._leader_epoch = max(self._leader_epoch, leader.leader_epoch)
        if part.error_code:
            self._point_at(leader.leader_id)
            return offset, min(epoch, self._leader_epoch), True
        if part.snapshot_id is not None and part.snapshot_id.end_offset >= 0:
            return part.snapshot_id.end_offset, part.snapshot_id.epoch, False
        if part.diverging_epoch is not None and part.diverging_epoch.end_offset >= 0:
            return part.diverging_epoch.end_offset, part.diverging_epoch.epoch, False
        for batch in split_batches(part.records or b""):
            offset, epoch = batch.next_offset, batch.epoch
        self._take_high_watermark(min(offset, part.high_watermark) if part.high_watermark >= 0 else -1)
        return offset, epoch, moved and leader.leader_id >= 0 and self._point_at(leader.leader_id) is None

    def _take_high_watermark(self, high_watermark: int) -> None:
        """Move the metadata offset to a Fetch answer's high watermark as Kafka's follower state does."""
        if high_watermark < 0:
            return
        if high_watermark < self.high_watermark:
            self.fatal = f"Non-monotonic update of high watermark from {self.high_watermark} to {high_watermark}"
            log.error("broker %d exits: %s", self.broker_id, self.fatal)
            raise _Fatal(self.fatal)
        self.high_watermark = self.metadata_offset = high_watermark

    def _point_at(self, leader_id: int) -> None:
        if leader_id in self.controller_ids:
            self._leader = self.controller_ids.index(leader_id)
        else:
            self._leader += 1


class _SecureControllerClient(ActiveControllerClient):
    """Route controller RPCs as ActiveControllerClient does, over connections that log in with `security`."""

    security = None

    async def _connection(self, index: int):
        conn = self._conns.get(index)
        if conn is None or getattr(conn, "closed", False):
            host, port = self.addresses[index]
            conn = self._conns[index] = await _open(host, port, self.security, self.client_id, self.timeout_ms)
        return conn


async def _open(host: str, port: int, security, client_id: str, timeout_ms: int):
    """Open a Connection: PLAINTEXT as before, or logged in through secure_connect."""
    from kraftsman.controller.wire.connection import Connection

    if security is None:
        return await Connection.open(host, port, client_id=client_id, timeout_ms=timeout_ms)
    from kraftsman.controller.wire.secure_connect import open_connection

    return await open_connection(host, port, security, client_id=client_id, timeout_ms=timeout_ms)


async def _close(conn) -> None:
    result = conn.close()
    if asyncio.iscoroutine(result):
        await result
