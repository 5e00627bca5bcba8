"""ServingBroker: a simulated broker (broker_sim) that also serves Kafka 3.9's client listener, follows the
metadata into an image and keeps partition replicas: the peer the admin tools talk to through --bootstrap-server.

Rules:
- start(): ask the active controller's ApiVersions (the broker's forwardable APIs follow it), register and
  heartbeat (broker_sim), wait until the image holds this broker's registration, then open the listener, as a
  Kafka broker enables request processing once it has caught up with the metadata.
- stop() is a SIGTERM: controlled shutdown (the listener keeps serving meanwhile), then listener, replica
  fetchers and connections close; crash() is a SIGKILL: everything stops at once. start() again after either is a
  new incarnation (start_again), keeping the replica logs, as a restarted broker keeps its disk.
- The image follower feeds the replicas (roles, ISR work) and the fetchers (who to fetch from) on every change.
- `properties` are the broker's server.properties: DescribeConfigs' static layer, the authorizer's presence,
  log.dirs for DescribeLogDirs.
"""
from __future__ import annotations

import asyncio

from ..broker_sim import SimulatedBroker
from . import api_table
from .forwarding import ControllerChannel
from .handlers import BrokerApis
from .image_follower import ImageFollower
from .listener import BrokerListener
from .replica_fetcher import ReplicaFetchers
from .replicas import ReplicaManager


class ServingBroker:
    """One simulated Kafka 3.9 broker with its client listener on host:port."""

    def __init__(self, broker_id: int, controllers, cluster_id: str, *, port: int, host: str = "127.0.0.1",
                 properties: dict[str, str] | None = None, rng=None, **sim_options):
        self.broker_id, self.host, self.port = broker_id, host, port
        self.properties = dict(properties or {})
        self.properties.setdefault("node.id", str(broker_id))
        self.sim = SimulatedBroker(broker_id, controllers, cluster_id, port=port, host=host, **sim_options)
        self.follower = ImageFollower()
        self.sim.metadata_sink = self.follower
        self.channel = ControllerChannel(self.sim.controllers, broker_id)
        log_dir = (self.properties.get("log.dirs") or self.properties.get("log.dir") or "/tmp/kafka-logs").split(",")[0]
        self.replicas = ReplicaManager(broker_id, epoch=lambda: self.sim.broker_epoch, channel=self.channel,
                                       log_dir=log_dir.strip())
        self.fetchers = ReplicaFetchers(self.replicas)
        self.apis = BrokerApis(broker_id, cluster_id, self.properties, follower=self.follower, channel=self.channel,
                               replicas=self.replicas, rng=rng)
        self.controller_apis: dict[int, tuple[int, int]] | None = None
        self.listener = BrokerListener(host, port, self.apis.handle, advertised=self.advertised,
                                       api_versions=self.api_versions)
        self.follower.on_change(self._on_image)
        self.running = False

    # ------------------------------------------------------------ what it advertises
    def advertised(self) -> dict[int, tuple[int, int]]:
        """Return the API table this broker advertises now."""
        return api_table.advertised(self.controller_apis)

    def api_versions(self):
        """Return the ApiVersionsResponse body this broker answers now."""
        return api_table.api_versions_response(self.advertised(), self.follower.image)

    @property
    def image(self):
        """Return the broker's committed metadata image."""
        return self.follower.image

    def _on_image(self, image) -> None:
        if self.running:
            self.replicas.on_image(image)
            self.fetchers.on_image(image)

    # ------------------------------------------------------------ lifecycle
    async def start(self, timeout_s: float = 30) -> None:
        """Register (or register again after stop/crash) and open the listener once caught up."""
        if self.controller_apis is None:
            self.controller_apis = await self.channel.controller_api_versions()
        if not self._started:
            await self.sim.start()
            self._started = True
        else:
            code = await self.sim.start_again(clean=self._clean_stop, timeout_s=timeout_s)
            if code:
                raise RuntimeError(f"broker {self.broker_id} could not register again: error {code}")
        await self._caught_up(timeout_s)
        self.running = True
        self._on_image(self.follower.image)
        await self.listener.start()

    async def _caught_up(self, timeout_s: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self._registered(self.follower.image):
            if loop.time() > deadline:
                raise TimeoutError(f"broker {self.broker_id} did not catch up with the metadata in {timeout_s:g} s")
            await asyncio.sleep(0.05)

    def _registered(self, image) -> bool:
        registration = image.cluster.brokers.get(self.broker_id)
        return registration is not None and bytes(registration.record.incarnation_id) == bytes(self.sim.incarnation_id)

    _clean_stop, _started = True, False

    async def stop(self, timeout_s: float = 30) -> bool:
        """Shut down as on SIGTERM (controlled shutdown first); return whether the controller agreed in time."""
        agreed = await self.sim.controlled_shutdown(timeout_s)
        self.sim.crash()
        await self._close_front()
        self._clean_stop = True
        return agreed

    async def crash(self) -> None:
        """Stop at once, as on SIGKILL."""
        self.sim.crash()
        await self._close_front()
        self._clean_stop = False

    async def _close_front(self) -> None:
        self.running = False
        await self.listener.close()
        await self.fetchers.close()
        await self.replicas.close()

    async def close(self) -> None:
        """Stop everything (no controlled shutdown) and close every connection."""
        await self.crash()
        await self.sim.stop()
        await self.channel.close()

    # ------------------------------------------------------------ data
    def append(self, topic: str, partition: int, nbytes: int) -> None:
        """Write `nbytes` to a partition this broker leads (a producer's data, for sizes and reassignments)."""
        self.replicas.append(topic, partition, nbytes)
