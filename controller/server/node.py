"""ControllerServer: one KRaft controller process on asyncio; it starts, wires and stops the log, the Raft
driver, the listeners, the peers and the quorum controller.

Rules:
- All state changes happen on the event loop thread; the RaftDriver is called from the tick task,
  from peer responses and from request handlers, never concurrently.
- Requests are routed by dispatch.Dispatcher (refusals, Raft, reads, writes, forwarding); the listeners
  call its handle().
- Proposals are flushed once per event-loop turn (call_soon), so requests that arrive together are
  appended and fsynced together (group commit).
- Every listener of `listeners` is served (the first of controller.listener.names first: Raft peers and
  brokers use it; when it is not PLAINTEXT, peers and forwarded writes log in as client_security reads from
  the same file); each gets its TLS/SASL settings from listener_security (checked when the server is made, so a
  bad key file or login is a ConfigError before anything opens), and with an authorizer
  (authorizer.py) every request is checked against the connection's principal before it is served.
- stop() closes the listener first, then fails pending requests, then closes the log: nothing is
  acknowledged after the process starts shutting down. The network gets STOP_GRACE_S to close; the log
  is closed after that whatever still hangs.
- Peers are reached where peer_endpoints says (configured, voter set, learned from Raft messages). Learned
  addresses are taken before the message reaches the core (which may fetch from the new leader at once);
  the router's map is rebuilt whenever the voter set changes. Raft responses name their leader's endpoint.
- start() sets the process's garbage collector thresholds to GC_THRESHOLDS: a CreateTopics request keeps
  some ten objects per partition alive until it returns; with Python's default (700, 10, 10) they are
  promoted through every generation and the collections cost about as much as the handler itself.
"""
from __future__ import annotations

import asyncio
import gc
import logging
import random
import time

from kraftsman.controller.quorum.context import ControllerContext, ControllerNode
from kraftsman.controller.quorum.feature_levels import supported_features
from kraftsman.controller.raft import reconfig
from kraftsman.controller.raft.core import RaftNode

from . import controller_registration, local_storage
from .config import ControllerConfig
from .dispatch import Dispatcher
from .driver import RaftDriver
from .flusher import Flusher
from .forwarding import WriteForwarder
from .metadata_state import MetadataState
from .peer_endpoints import PeerEndpoints

log = logging.getLogger("kraftsman.server")
TICK_MS = 20
# a high watermark alone reaches parked followers within this, or sooner with the next records: a commit
# then costs each follower one fetch round, not two (each round is a wake-up of every process on this host)
HW_LINGER_MS = 5
STOP_GRACE_S = 5  # SIGTERM: the network gets this long to close before the log is closed regardless
GC_THRESHOLDS = (20_000, 20, 20)  # gen0: allocations; gen1, gen2: collections of the generation below


class ControllerServer:
    """A running controller; start() then serve until stop()."""

    def __init__(self, config: ControllerConfig, *, seed: int | None = None):
        from .listener_security import check

        check(config)        # bad TLS/SASL settings: one ConfigError before anything is opened
        self.config = config
        self.rng = random.Random(seed)
        self.identity = None
        self.driver: RaftDriver | None = None
        self.listener = None
        self.listeners: list = []
        self.authorizer = None
        self.client_security = None  # how this controller logs in to the others' controller listener
        self.router = None
        self.quorum = None
        self._tasks: list[asyncio.Task] = []
        self._flush_scheduled = False
        self._stopping = False
        self.forwarder = None  # forwarding.WriteForwarder, once started
        self._flusher = None  # flusher.Flusher: the fsync thread, once the first fsync job comes
        self.endpoints = None  # peer_endpoints.PeerEndpoints, once the node is open
        self._heard_endpoints = None  # the NodeEndpoints a Raft response carried last (_endpoints_news)
        self.failure: str | None = None  # why the node stopped itself (a failed disk, a driver bug)
        self.registration = None  # controller_registration.SelfRegistration, once the listeners are bound
        self.stopped = asyncio.Event()    # set once stop() is done, whoever called it
        self.dispatch = Dispatcher(self)  # routes every request the listeners read

    # ------------------------------------------------------------ start-up
    def open_node(self) -> RaftNode:
        """Read the storage and build the raft node (no sockets yet)."""
        from kraftsman.storage.log.dir_lock import lock_directory
        from kraftsman.storage.log.metadata_log import FileLog

        cfg = self.config
        self.identity = local_storage.read_identity(cfg)
        self.endpoints = PeerEndpoints(cfg, self.advertised_host())
        self._lock = lock_directory(cfg.metadata_log_dir)
        cfg.partition_dir.mkdir(parents=True, exist_ok=True)
        self.log_store = FileLog.open(cfg.partition_dir, segment_bytes=cfg.segment_bytes)
        saved = local_storage.read_quorum_state(cfg.partition_dir)
        raft_cfg = cfg.raft_config(self.identity.cluster_id, self.identity.directory_id, self.advertised_host(),
                                   tick_ms=TICK_MS, high_watermark_linger_ms=HW_LINGER_MS)
        node = RaftNode(raft_cfg, self.log_store, self.rng, saved, now=int(time.time() * 1000))
        self.driver = RaftDriver(
            node, MetadataState(self.config.kafka_version), send=self._send_raft,
            persist_quorum_state=lambda data, v: local_storage.write_quorum_state(cfg.partition_dir, data, v),
            snapshot_max_bytes=cfg.snapshot_max_bytes, snapshot_interval_ms=cfg.snapshot_interval_ms,
            on_activate=self._on_activate, on_deactivate=self._on_deactivate, background=self._background,
            defer=lambda seconds, fn: asyncio.get_running_loop().call_later(seconds, fn))
        return node

    def _background(self, fn, done, what: str = "job") -> None:
        """Run fn() in another thread, then done() on the event loop; a failed `what` (fsync, snapshot) stops
        the node. Fsync jobs run on the flusher thread (one hop back), the others in the default thread pool."""
        loop = asyncio.get_running_loop()
        if what == "fsync":
            if self._flusher is None:
                self._flusher = Flusher(loop, self._background_failed)
            self._flusher.submit(fn, done, what)
            return
        future = loop.run_in_executor(None, fn)

        def finished(f) -> None:
            if f.cancelled() or f.exception() is not None:
                self._background_failed(what, "cancelled" if f.cancelled() else f.exception())
                return
            done()
        future.add_done_callback(finished)

    def _background_failed(self, what: str, error) -> None:
        log.error("node %d: background %s failed: %s", self.config.node_id, what, error)
        self._fail(f"background {what} failed")  # a log we cannot make durable must not serve

    def advertised_host(self) -> str:
        host = self.config.controller_listener().host
        return host if host not in ("", "0.0.0.0", "::") else "localhost"

    def peer_endpoints(self) -> dict[int, tuple[str, int]]:
        """Return where to reach each peer (peer_endpoints.PeerEndpoints.table)."""
        return self.endpoints.table(self.driver.node.voters)

    async def start(self) -> None:
        """Open storage, bind the listener, connect to peers and start ticking."""
        from kraftsman.controller.quorum.controller import QuorumController

        from . import raft_wire
        from .client_security import for_peers

        if self.driver is None:
            self.open_node()
        gc.set_threshold(*GC_THRESHOLDS)
        cfg = self.config
        self.quorum = QuorumController(cfg.quorum_config())
        self.client_security = for_peers(cfg)
        self.forwarder = WriteForwarder(cfg.node_id, self.client_security, cfg.request_timeout_ms)
        self.router = self._open_router()
        await self._bind_listeners()
        self.registration = controller_registration.for_listeners(
            cfg.node_id, self.advertised_host(), self.listeners, cfg.controller_listener_names, cfg.security_protocol,
            supported_features(cfg.kafka_version, cfg.unstable_feature_versions))
        self._tasks.append(asyncio.get_running_loop().create_task(self._tick_loop()))
        self._tasks.append(asyncio.get_running_loop().create_task(raft_wire.warm_codecs()))
        for listener in self.listeners:
            log.info("node %d serving %s (%s) on %s:%d (cluster %s)", cfg.node_id, listener.name,
                     cfg.security_protocol(listener.name), listener.host, listener.port, self.identity.cluster_id)
        self.driver.process()

    def _open_router(self):
        """Return the PeerRouter (SecurePeerRouter when peers log in) over the current endpoint map."""
        from .peers import PeerRouter

        cfg = self.config
        self.endpoints.routed_voters = self.driver.node.voters
        if self.client_security is None:
            return PeerRouter(cfg.node_id, self.peer_endpoints(), self._on_peer_response,
                              client_id=f"raft-client-{cfg.node_id}", vote_max_version=self._vote_max_version())
        from .secure_peers import SecurePeerRouter

        return SecurePeerRouter(cfg.node_id, self.peer_endpoints(), self._on_peer_response,
                                client_id=f"raft-client-{cfg.node_id}", security=self.client_security,
                                vote_max_version=self._vote_max_version())

    async def _bind_listeners(self) -> None:
        """Set up the authorizer, then bind every listener, the first controller listener first."""
        from . import authorizer, listener_security
        from .network import Listener

        cfg = self.config
        ep = cfg.controller_listener()
        committed = lambda: self.driver.state.committed  # noqa: E731
        anonymous = any(p in ("PLAINTEXT", "SSL") for p in map(cfg.security_protocol, (e.name for e in cfg.listeners)))
        self.authorizer = authorizer.from_properties(cfg.props, committed, anonymous)
        lookup = listener_security.scram_lookup_from(committed)
        for endpoint in [ep] + [e for e in cfg.listeners if e != ep]:
            listener = Listener(endpoint.name, endpoint.host or "0.0.0.0", endpoint.port, self.dispatch.handle,
                                max_request_size=cfg.socket_request_max_bytes,
                                idle_timeout_ms=cfg.connections_max_idle_ms, api_versions=self.api_versions,
                                max_connections=cfg.max_connections,
                                max_connections_per_ip=cfg.max_connections_per_ip,
                                security=listener_security.for_listener(cfg, endpoint.name, lookup))
            self.listeners.append(listener)
            await listener.start()
        self.listener = self.listeners[0]

    def api_versions(self):
        """Return the ApiVersions data this controller advertises (finalized features from the image, kraft.version
        from the Raft layer: listed when above 0, as Kafka's controllers set it)."""
        from . import api_versions

        state = self.driver.state
        return api_versions.controller_api_versions(state.committed.features, finalized_epoch=state.features_epoch,
                                                    kraft_version=self.driver.node.kraft_version,
                                                    vote_max_version=self._vote_max_version(),
                                                    release=self.config.kafka_version,
                                                    unstable_enabled=self.config.unstable_feature_versions)

    def _vote_max_version(self) -> int | None:
        """Return 1 when this voter speaks Kafka 3.9's Raft wire (kraftsman.raft.kafka.version), else None."""
        return 1 if self.config.raft_kafka_version == "3.9" else None

    # ------------------------------------------------------------ ticking
    async def _tick_loop(self) -> None:
        loop = asyncio.get_running_loop()
        start, done = loop.time(), 0
        while not self._stopping:
            await asyncio.sleep(TICK_MS / 1000)
            due = int((loop.time() - start) * 1000 / TICK_MS) - done
            if due <= 0:
                continue
            done += due
            try:
                self.driver.tick(due)
                self._refresh_peers()
                self._periodic()
                self.registration.send_if_due(self.driver.state.committed, lambda: self.driver.node.now,
                                              self.dispatch.write)
            except Exception:  # a bug: log it and stop serving rather than diverge
                log.exception("node %d: raft driver failed; shutting down", self.config.node_id)
                self._fail("raft driver failed")
                return

    def _periodic(self) -> None:
        if not self.driver.is_active:
            return
        for result in self.quorum.periodic(self.context(0, pending=True)):
            if result.records:
                self.driver.propose(result.records, lambda err: None)
        self.schedule_flush()

    def schedule_flush(self) -> None:
        """Flush the proposals at the end of this event-loop turn (group commit)."""
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if not self._stopping:
            self.driver.flush_proposals()

    # ------------------------------------------------------------ raft traffic
    def _send_raft(self, env) -> None:
        if self.router is not None:
            self.router.send(env)

    def _refresh_peers(self) -> None:
        """Rebuild the router's endpoint map if the voter set changed since it was built."""
        voters = self.driver.node.voters
        if voters is not self.endpoints.routed_voters and self.router is not None:
            self.endpoints.routed_voters = voters
            self.router.update_endpoints(self.peer_endpoints())

    def learn_endpoints(self, body) -> None:
        """Remember node addresses a Raft message carries that we had none for; route to them at once."""
        from . import raft_wire

        found = raft_wire.message_endpoints(body, self.config.controller_listener().name)
        if found and self.router is not None and self.endpoints.learn(found, self.router.endpoints):
            self.endpoints.routed_voters = self.driver.node.voters
            self.router.update_endpoints(self.peer_endpoints())

    def _endpoints_news(self, endpoints) -> bool:
        """Tell whether a response's NodeEndpoints differ from the last ones heard, or the router's map changed
        since (every fetch response names the leader's endpoint: the same one, nearly always)."""
        heard, routed = tuple((e.node_id, e.host, e.port) for e in endpoints), self.router.endpoints
        last = self._heard_endpoints
        if last is not None and last[0] == heard and last[1] is routed:
            return False
        self._heard_endpoints = (heard, routed)
        return True

    def address_of(self, node_id: int) -> tuple[str, int] | None:
        """Return where `node_id` serves the controller listener (this node's advertised address for itself)."""
        if node_id == self.config.node_id:
            port = self.listener.port if self.listener else self.config.controller_listener().port
            return self.advertised_host(), port
        return self.router.endpoints.get(node_id) if self.router is not None else None

    def _on_peer_response(self, env) -> None:
        if self._stopping:
            return
        try:
            endpoints = getattr(env.body, "node_endpoints", None)
            if endpoints and self._endpoints_news(endpoints):
                self.learn_endpoints(env.body)
            self.driver.step(env)
        except Exception:  # as in _tick_loop: a bug or a failed disk (e.g. a snapshot install) stops serving
            log.exception("node %d: raft driver failed; shutting down", self.config.node_id)
            self._fail("raft driver failed")

    # ------------------------------------------------------------ controller traffic
    def context(self, api_version: int, pending: bool = False, listener: str | None = None,
                principal: str = "User:ANONYMOUS") -> ControllerContext:
        d = self.driver
        return ControllerContext(
            image=d.state.pending if pending else d.state.committed, now_ms=d.node.now, api_version=api_version,
            next_offset=d.next_offset(), cluster_id=self.identity.cluster_id, node_id=self.config.node_id,
            leader_id=d.node.leader_id if d.node.leader_id is not None else -1,
            controllers=_Controllers(lambda: self.controller_nodes(listener)), config=self.quorum.config, rng=self.rng,
            kraft_version=d.node.kraft_version, principal=principal,
            kraft_upgrade=lambda level, validate_only: reconfig.upgrade_kraft_version(d.node, level, validate_only))

    def controller_nodes(self, listener: str | None = None) -> tuple[ControllerNode, ...]:
        """Return the voters as clients reach them on `listener` (peer_endpoints.PeerEndpoints)."""
        return self.endpoints.controller_nodes(self.driver.node.voters, self.driver.state.committed,
                                               self.listeners, listener)

    # ------------------------------------------------------------ activation
    def _on_activate(self) -> None:
        ctx = self.context(0, pending=True)
        self.quorum.on_activate(ctx)
        if ctx.image.features.metadata_version is None:
            records = local_storage.bootstrap_transaction(self.config)
            self.driver.propose(records, lambda err: None)
            self.driver.flush_proposals()

    def _on_deactivate(self) -> None:
        if self.quorum is not None:
            self.quorum.on_deactivate()

    # ------------------------------------------------------------ shutdown
    def _fail(self, reason: str) -> None:
        """Stop serving because of `reason` (the process then exits non-zero, as Kafka halts)."""
        if self.failure is None and not self._stopping:
            self.failure = reason
            asyncio.get_running_loop().create_task(self.stop())

    async def stop(self) -> None:
        """Stop serving: close the listener, fail pending work, close peers and the log."""
        if self._stopping:
            return
        self._stopping = True
        try:
            async with asyncio.timeout(STOP_GRACE_S):
                await self._close_network()
        except TimeoutError:
            log.warning("node %d: the network did not close within %d s; closing the log anyway",
                        self.config.node_id, STOP_GRACE_S)
            self._halt_driver()
        try:
            local_storage.close_log(getattr(self, "log_store", None), flush=self.failure is None,
                                    node_id=self.config.node_id)
        finally:
            if getattr(self, "_lock", None) is not None:
                self._lock.close()
            self.stopped.set()
        log.info("node %d stopped", self.config.node_id)

    async def _close_network(self) -> None:
        """Close the listeners, stop the ticks and the Raft driver, then close the peer and forward connections."""
        for listener in self.listeners:
            await listener.close()
        self._halt_driver()
        if self.router is not None:
            await self.router.close()
        if self.forwarder is not None:
            await self.forwarder.close()

    def _halt_driver(self) -> None:
        """Cancel the tick tasks and stop the Raft driver (nothing more reaches the log)."""
        for task in self._tasks:
            task.cancel()
        if self.driver is not None and not self.driver.stopped:
            self.driver.stop()
        if self._flusher is not None:
            self._flusher.close()


class _Controllers:
    """ControllerContext.controllers, worked out when a handler first reads it (most never do: a write's context
    is built for every request)."""

    __slots__ = ("_make", "_nodes")

    def __init__(self, make):
        self._make, self._nodes = make, None

    def _all(self) -> tuple:
        if self._nodes is None:
            self._nodes = tuple(self._make())
        return self._nodes

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
