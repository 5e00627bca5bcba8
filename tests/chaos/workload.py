"""The chaos workload: steady CreateTopics (and a few DeleteTopics) plus simulated brokers heartbeating.

Rules:
- Every attempt uses a fresh topic name, so a create that committed without an answer never turns into
  TOPIC_ALREADY_EXISTS later: an acknowledged create is exactly one with error code 0 and a topic id.
- Writes go straight to the voters' real listeners (not through the fault proxy) with
  ActiveControllerClient, as a broker's or an admin client's forwarding manager would; a standby forwards
  to the active controller over the (faulty) voter links.
- Each acknowledged write records when it was sent and acknowledged (time.monotonic()), so recovery is
  measured from the fault's injection and heal times.
- Loops end when stop() is called; every request has a timeout.
"""
from __future__ import annotations

import asyncio
import random
import time

from kraftsman.controller.client.broker_sim import SimulatedBroker
from kraftsman.controller.client.controller_client import ActiveControllerClient, ControllerUnavailable
from kraftsman.storage.protocol import codec

Create = codec.message_class("CreateTopicsRequest")
Delete = codec.message_class("DeleteTopicsRequest")
BROKER_IDS = (101, 102, 103)
REQUEST_TIMEOUT_MS = 5_000


class Workload:
    """Writers and brokers on one asyncio loop (run() it in a LoopThread)."""

    def __init__(self, quorum, seed: int, *, writers: int = 3, pace_s: float = 0.03, delete_every: int = 10):
        self.quorum, self.rng = quorum, random.Random(seed)
        self.writers, self.pace_s, self.delete_every = writers, pace_s, delete_every
        self.acked: dict[str, bytes] = {}             # name -> topic id of acknowledged creates
        self.ack_log: list[tuple[float, float, str]] = []  # (sent, acknowledged, what)
        self.unacked: set[str] = set()                # creates without an answer: may or may not exist
        self.deleted: set[str] = set()                # acknowledged deletes: must be gone
        self.delete_unknown: set[str] = set()         # deletes without an answer
        self.errors: dict[str, int] = {}
        self.brokers: list[SimulatedBroker] = []
        self._stopping = False
        self._tasks: list[asyncio.Task] = []

    # ------------------------------------------------------------ lifecycle
    async def start(self, timeout_s: float = 60) -> None:
        """Register the brokers, wait until they are unfenced, then start the writers."""
        addresses = self.quorum.addresses()
        for i, broker_id in enumerate(BROKER_IDS):
            sim = SimulatedBroker(broker_id, addresses, self.quorum.cluster_id, heartbeat_interval_ms=500,
                                  fetch=(i == 0), timeout_ms=REQUEST_TIMEOUT_MS)
            await sim.start()
            self.brokers.append(sim)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while any(b.fenced for b in self.brokers):
            if loop.time() > deadline:
                raise TimeoutError("simulated brokers were not unfenced in time")
            await asyncio.sleep(0.1)
        for w in range(self.writers):
            self._tasks.append(loop.create_task(self._writer(w)))

    async def stop(self) -> None:
        """Stop the writers (waiting for their last request) and the brokers."""
        self._stopping = True
        await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), REQUEST_TIMEOUT_MS / 1000 + 10)
        for b in self.brokers:
            await b.stop()

    # ------------------------------------------------------------ queries (any thread)
    def first_ack_after(self, t: float) -> float | None:
        """Return when the first write sent at or after `t` was acknowledged (None: none yet)."""
        times = [acked for sent, acked, _ in list(self.ack_log) if sent >= t]
        return min(times) if times else None

    @property
    def acknowledged_writes(self) -> int:
        return len(self.ack_log)

    # ------------------------------------------------------------ writers
    def _client(self, w: int, turn: int) -> ActiveControllerClient:
        """A client that tries the controllers from the (w + turn)-th on: writers spread over the voters,
        and a writer whose controller failed starts the next attempt elsewhere."""
        addresses = list(self.quorum.addresses().values())
        k = (w + turn) % len(addresses)
        return ActiveControllerClient(addresses[k:] + addresses[:k], client_id=f"chaos-writer-{w}",
                                      timeout_ms=REQUEST_TIMEOUT_MS)

    async def _writer(self, w: int) -> None:
        turn = 0
        client = self._client(w, turn)
        try:
            n = 0
            while not self._stopping:
                n += 1
                if self.delete_every and n % self.delete_every == 0 and self._deletable():
                    ok = await self._delete(client, self.rng.choice(self._deletable()))
                else:
                    ok = await self._create(client, f"chaos-w{w}-{n}")
                if not ok:
                    await client.close()
                    turn += 1
                    client = self._client(w, turn)
                await asyncio.sleep(self.pace_s)
        finally:
            await client.close()

    def _deletable(self) -> list[str]:
        return sorted(set(self.acked) - self.deleted - self.delete_unknown)

    def _error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    async def _create(self, client, name: str) -> bool:
        body = Create(topics=[Create.CreatableTopic(name=name, num_partitions=self.rng.randint(1, 3),
                                                    replication_factor=self.rng.choice((1, 2)))],
                      timeout_ms=REQUEST_TIMEOUT_MS)
        sent = time.monotonic()
        self.unacked.add(name)
        try:
            response = await client.request("CreateTopics", 7, body, timeout_ms=REQUEST_TIMEOUT_MS)
        except (ControllerUnavailable, OSError, asyncio.TimeoutError, ConnectionError, EOFError) as e:
            self._error(type(e).__name__)
            await asyncio.sleep(0.1)
            return False
        result = response.topics[0]
        if result.error_code != 0:
            self._error(f"create error {result.error_code}")
            await asyncio.sleep(0.1)
            return False
        self.unacked.discard(name)
        self.acked[name] = bytes(result.topic_id)
        self.ack_log.append((sent, time.monotonic(), f"create {name}"))
        return True

    async def _delete(self, client, name: str) -> bool:
        body = Delete(topic_names=[name], timeout_ms=REQUEST_TIMEOUT_MS)
        sent = time.monotonic()
        self.delete_unknown.add(name)
        try:
            response = await client.request("DeleteTopics", 4, body, timeout_ms=REQUEST_TIMEOUT_MS)
        except (ControllerUnavailable, OSError, asyncio.TimeoutError, ConnectionError, EOFError) as e:
            self._error(type(e).__name__)
            return False
        code = response.responses[0].error_code
        if code != 0:
            self._error(f"delete error {code}")
            return False
        self.delete_unknown.discard(name)
        self.deleted.add(name)
        self.ack_log.append((sent, time.monotonic(), f"delete {name}"))
        return True
