"""The fixture cluster of shared/fixtures/kafka-admin-3.9, brought up for tests: kraftsman controllers 1-3 on
127.0.0.1:31001-31003 and simulated Kafka 3.9 brokers 4 and 5 (broker_apis.ServingBroker) on 127.0.0.1:31014 and
:31015, cluster id MkU3OEVBNTcwNTJENDM2Qg, StandardAuthorizer with super.users=User:ANONYMOUS, and each node's
settings from the fixture's cluster.md.

Rules:
- The ports are fixed (they appear verbatim in the fixture's commands and outputs), so only one fixture cluster
  can run on a machine at a time: start() first takes an exclusive lock (LOCK_FILE, waiting up to `lock_wait_s`
  for another test run's cluster to stop, and saying so), then checks that every port is free and fails with a
  one-line message naming the busy one.
- Controllers are real processes (kafka-controller, through LocalQuorum); brokers run in this process, on a
  LoopThread; every helper below is blocking and sends what a tool would send, to a broker's listener
  (so writes are forwarded to the controller as Kafka's brokers forward them).
- After each write the helpers wait until every running broker's image holds it (sync()), so the next read,
  through either broker, sees it, as it would a moment later on a real cluster.
- State helpers: topics (create with an exact assignment, delete, more partitions), topic / broker / cluster
  default configs, ACLs, client quotas, SCRAM credentials, elections, reassignments with throttles, data written
  into a partition, brokers stopped (SIGTERM), killed and started again, and waits on partition state.
  The fixture's recorded history (which case runs on which state) is admin_cluster_history; comparing a run with
  a case, masking what the fixture README names as varying, is admin_cluster_compare.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import socket
import time
from pathlib import Path

from kraftsman.cli.demo.local_quorum import LocalQuorum
from kraftsman.controller.client.broker_apis.serving import ServingBroker
from kraftsman.controller.client.controller_client import find_leader
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import error_name

from .loop_thread import LoopThread

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures" / "kafka-admin-3.9"
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
CONTROLLER_PORTS = {1: 31001, 2: 31002, 3: 31003}
BROKER_PORTS = {4: 31014, 5: 31015}
UNUSED_PORT = 31999
BOOTSTRAP_SERVER, BOOTSTRAP_CONTROLLER = "127.0.0.1:31014", "127.0.0.1:31001"
LOCK_FILE = Path("/tmp/kraftsman-fixture-admin-cluster.lock")
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SECURITY = {"authorizer.class.name": AUTHORIZER, "allow.everyone.if.no.acl.found": "true",
            "super.users": "User:ANONYMOUS"}
# cluster.md's controller properties (LocalQuorum writes node.id, listeners, voters, log.dirs), and Raft timings
# short enough for tests (they do not show in any output)
CONTROLLER_PROPERTIES = {**SECURITY, "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                         "controller.quorum.election.timeout.ms": "500", "controller.quorum.fetch.timeout.ms": "1000",
                         "controller.quorum.election.backoff.max.ms": "300"}
# cluster.md's broker properties; node.id, listeners and log.dirs are added per broker
BROKER_PROPERTIES = {
    "process.roles": "broker", "inter.broker.listener.name": "PLAINTEXT", **SECURITY,
    "controller.quorum.voters": "1@127.0.0.1:31001,2@127.0.0.1:31002,3@127.0.0.1:31003",
    "controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "auto.create.topics.enable": "false", "auto.leader.rebalance.enable": "false",
    "offsets.topic.replication.factor": "2", "offsets.topic.num.partitions": "3",
    "transaction.state.log.replication.factor": "2", "transaction.state.log.min.isr": "1", "num.partitions": "1",
    "default.replication.factor": "1", "broker.session.timeout.ms": "9000", "broker.heartbeat.interval.ms": "2000"}
# what a Kafka 3.9 group coordinator gives __consumer_offsets (the configs kafka-topics --describe shows)
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"}
SET, DELETE = 0, 1
TOPIC, BROKER = 2, 4
PREFERRED, UNCLEAN = 0, 1


class FixtureClusterError(RuntimeError):
    """The fixture cluster cannot start or a helper's request failed; the message is one line."""


class FixtureQuorum(LocalQuorum):
    """LocalQuorum on the fixture's fixed controller ports."""

    def __init__(self, base):
        super().__init__(base, 3, cluster_id=CLUSTER_ID, extra=CONTROLLER_PROPERTIES)
        self.ports = dict(CONTROLLER_PORTS)


def broker_properties(broker_id: int, base: Path) -> dict[str, str]:
    """Return broker `broker_id`'s server.properties, as cluster.md gives them (log.dirs under `base`)."""
    port = BROKER_PORTS[broker_id]
    return {"node.id": str(broker_id), "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "log.dirs": str(base / "cluster" / f"b{broker_id}" / "data"), **BROKER_PROPERTIES}


def busy_port() -> int | None:
    """Return the first fixture port something listens on, or None."""
    for port in (*CONTROLLER_PORTS.values(), *BROKER_PORTS.values()):
        with contextlib.closing(socket.socket()) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return port
    return None


class AdminCluster:
    """The fixture cluster under `base`; start() it, use the helpers, stop() it."""

    def __init__(self, base, loop: LoopThread | None = None, *, lock_wait_s: float = 900):
        self.base = Path(base)
        self.loop = loop or LoopThread("admin-cluster")
        self._own_loop = loop is None
        self.lock_wait_s = lock_wait_s
        self.quorum = FixtureQuorum(self.base / "controllers")
        self.brokers: dict[int, ServingBroker] = {}
        self._lock = None

    # ------------------------------------------------------------ lifecycle
    def start(self) -> AdminCluster:
        """Take the machine-wide lock, start the controllers, then brokers 4 and 5; return once both are unfenced."""
        self._take_lock()
        port = busy_port()
        if port is not None:
            self._release_lock()
            raise FixtureClusterError(f"the fixture cluster needs 127.0.0.1:{port}, which something else listens on "
                                      "(fixed ports 31001-31003, 31014, 31015: one fixture cluster at a time)")
        try:
            self.quorum.format()
            self.quorum.start()
            self.quorum.wait_listening()
            self.loop.run(find_leader(self.quorum.addresses()))
            for broker_id in BROKER_PORTS:
                self.brokers[broker_id] = ServingBroker(
                    broker_id, self.quorum.addresses(), CLUSTER_ID, port=BROKER_PORTS[broker_id], host="127.0.0.1",
                    properties=broker_properties(broker_id, self.base), heartbeat_interval_ms=2000)
            for broker_id in BROKER_PORTS:
                self.start_broker(broker_id)
        except BaseException:
            self.stop()   # nothing left running, the ports and the lock free
            raise
        return self

    def _take_lock(self) -> None:
        LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(LOCK_FILE, "a+")  # noqa: SIM115 - held until stop()
        deadline = time.monotonic() + self.lock_wait_s
        while True:
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self._release_lock()
                    raise FixtureClusterError(f"another fixture cluster held {LOCK_FILE} for {self.lock_wait_s:g} s "
                                              "(fixed ports: one fixture cluster at a time)") from None
                time.sleep(1)

    def _release_lock(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def stop(self) -> None:
        """Stop the brokers and the controllers, release the lock."""
        try:
            for broker in self.brokers.values():
                self.loop.run(broker.close())
            self.quorum.stop()
        finally:
            if self._own_loop:
                self.loop.close()
            self._release_lock()

    def __enter__(self) -> AdminCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------ brokers
    def broker(self, broker_id: int) -> ServingBroker:
        """Return simulated broker `broker_id`."""
        return self.brokers[broker_id]

    def running(self) -> list[ServingBroker]:
        """Return the brokers whose listener serves."""
        return [b for b in self.brokers.values() if b.listener.serving]

    def start_broker(self, broker_id: int, timeout_s: float = 60) -> None:
        """Start (or start again) a broker; return once the controller unfenced it and the others know it."""
        self.loop.run(self.brokers[broker_id].start(timeout_s), timeout=timeout_s + 5)
        self.wait_unfenced(broker_id, timeout_s)

    def wait_unfenced(self, broker_id: int, timeout_s: float = 30) -> None:
        """Wait until every running broker's image has `broker_id` registered and unfenced."""
        self.wait(lambda image: _unfenced(image, broker_id), f"broker {broker_id} unfenced", timeout_s)

    def stop_broker(self, broker_id: int) -> None:
        """Stop a broker as SIGTERM does (controlled shutdown: leaders move away, it leaves the ISRs, fenced)."""
        broker = self.brokers[broker_id]
        if not self.loop.run(broker.stop(), timeout=40):
            raise FixtureClusterError(f"broker {broker_id}'s controlled shutdown did not finish")
        deadline = time.monotonic() + 30
        while broker_id in self.unfenced_brokers():
            if time.monotonic() > deadline:
                raise FixtureClusterError(f"timed out waiting for broker {broker_id} to be fenced")
            time.sleep(0.1)
        if self.running():
            self.wait(lambda image: _fenced(image, broker_id), f"broker {broker_id} fenced", 30)

    def kill_broker(self, broker_id: int) -> None:
        """Stop a broker as SIGKILL does (the controller fences it once its session times out)."""
        self.loop.run(self.brokers[broker_id].crash())

    # ------------------------------------------------------------ waiting
    def unfenced_brokers(self) -> set[int]:
        """Return the brokers the active controller counts as unfenced (its DescribeCluster, broker endpoints)."""
        from kraftsman.controller.wire.connection import Connection

        leader, _ = self.loop.run(find_leader(self.quorum.addresses()))

        async def ask():
            conn = await Connection.open(*self.quorum.addresses()[leader], client_id="fixture-cluster",
                                         timeout_ms=5000)
            try:
                return await conn.request("DescribeCluster", 1, message("DescribeClusterRequest", endpoint_type=1))
            finally:
                await conn.close()
        return {b.broker_id for b in self.loop.run(ask()).brokers}

    def leader_high_watermark(self) -> int:
        """Return the metadata log's high watermark at the active controller."""
        return self.loop.run(find_leader(self.quorum.addresses()))[1].high_watermark

    def sync(self, timeout_s: float = 20) -> None:
        """Wait until every running broker's image holds everything committed so far."""
        target = self.leader_high_watermark()
        deadline = time.monotonic() + timeout_s
        while any(b.follower.offset < target for b in self.running()):
            if time.monotonic() > deadline:
                behind = {b.broker_id: b.follower.offset for b in self.running()}
                raise FixtureClusterError(f"brokers did not reach metadata offset {target}: {behind}")
            time.sleep(0.02)

    def wait(self, predicate, what: str, timeout_s: float = 30) -> None:
        """Wait until predicate(image) holds on every running broker's image (the active image when none runs)."""
        deadline = time.monotonic() + timeout_s
        while True:
            images = [b.image for b in self.running()] or [b.image for b in self.brokers.values()]
            if images and all(predicate(image) for image in images):
                return
            if time.monotonic() > deadline:
                raise FixtureClusterError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def partition(self, topic: str, index: int, broker_id: int | None = None):
        """Return a partition's registration as a running broker's image has it (None when absent)."""
        broker = self.brokers[broker_id] if broker_id is not None else self.running()[0]
        t = broker.image.topics.by_name.get(topic)
        return None if t is None else t.partition(index)

    def wait_partition(self, topic: str, index: int, what: str, check, timeout_s: float = 30) -> None:
        """Wait until check(partition registration) holds on every running broker."""
        def holds(image):
            t = image.topics.by_name.get(topic)
            return t is not None and index in t.partitions and check(t.partition(index))
        self.wait(holds, f"{topic}-{index}: {what}", timeout_s)

    # ------------------------------------------------------------ requests through a broker
    def request(self, api: str, version: int, body, broker_id: int | None = None):
        """Send one request to a broker's listener (the first running one by default); return the answer."""
        from kraftsman.controller.wire.connection import Connection

        broker = self.brokers[broker_id] if broker_id is not None else self.running()[0]

        async def exchange():
            conn = await Connection.open(broker.host, broker.port, client_id="fixture-cluster", timeout_ms=10_000)
            try:
                await conn.negotiate()
                return await conn.request(api, version, body, timeout_ms=70_000)
            finally:
                await conn.close()
        return self.loop.run(exchange(), timeout=80)

    def _write(self, api: str, version: int, body, broker_id: int | None = None):
        response = self.request(api, version, body, broker_id)
        _raise_errors(api, response)
        self.sync()
        return response


def _unfenced(image, broker_id: int) -> bool:
    registration = image.cluster.brokers.get(broker_id)
    return registration is not None and not registration.record.fenced


def _fenced(image, broker_id: int) -> bool:
    registration = image.cluster.brokers.get(broker_id)
    return registration is not None and registration.record.fenced


def _raise_errors(api: str, response) -> None:
    """Raise FixtureClusterError naming every error code (and message) in `response`."""
    found = []
    stack = [response]
    while stack:
        message = stack.pop()
        code = getattr(message, "error_code", 0)
        if code:
            found.append(f"{error_name(code, '{code}')}: {getattr(message, 'error_message', None)}")
        for name in getattr(message, "_fields", ()):
            value = getattr(message, name)
            if isinstance(value, list):
                stack.extend(v for v in value if hasattr(v, "_fields"))
    if found:
        raise FixtureClusterError(f"{api} failed: {'; '.join(found)}")


def salted(password: str, salt: bytes, iterations: int, hash_name: str = "sha256") -> bytes:
    """Return RFC 5802's SaltedPassword (what AlterUserScramCredentials carries)."""
    return hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)


def message(spec: str, **fields):
    """Build a request of spec `spec`."""
    return codec.message_class(spec)(**fields)


def scratch_dir(base: Path, name: str) -> Path:
    """Return (created) a per-case scratch directory under `base`."""
    path = base / "scratch" / name
    os.makedirs(path, exist_ok=True)
    return path
