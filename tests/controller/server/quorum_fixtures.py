"""Shared pieces for tests on a real controller quorum: a background event loop, a quorum of controller
processes, simulated brokers, and waiting for a condition.

Test modules take a `loop` fixture from loop_fixture() (module scope) and build their own `quorum`/`brokers`
fixtures with running_quorum() and running_brokers(), so each module keeps its own settings.
"""
from __future__ import annotations

import contextlib
import time

import pytest

from kraftsman.cli.demo.local_quorum import LocalQuorum, free_ports
from kraftsman.controller.client.controller_client import describe_quorum, find_leader  # noqa: F401

from ...loop_thread import LoopThread  # noqa: F401  (re-exported to the test modules)

FAST = {"controller.quorum.election.timeout.ms": "500", "controller.quorum.fetch.timeout.ms": "1000",
        "controller.quorum.election.backoff.max.ms": "300", "broker.session.timeout.ms": "3000",
        "broker.heartbeat.interval.ms": "500", "metadata.log.max.record.bytes.between.snapshots": "4000",
        "metadata.log.segment.bytes": "16384"}


def loop_fixture():
    """Return a module-scoped fixture yielding a LoopThread (a test module assigns it: loop = loop_fixture())."""
    @pytest.fixture(scope="module")
    def loop():
        runner = LoopThread()
        yield runner
        runner.close()
    return loop


def wait_for(predicate, timeout: float = 20, interval: float = 0.1):
    """Return the first truthy value of predicate(), polled until `timeout` seconds, else fail the test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not reached in time")


@contextlib.contextmanager
def running_quorum(base, loop: LoopThread, voters: int = 3, extra=None, quorum_class=None, **options):
    """Format and start `voters` controller processes under `base` (a LocalQuorum, or `quorum_class` built with
    `options`), yield once a leader is elected and every controller has applied the bootstrap metadata, stop them."""
    q = (quorum_class or LocalQuorum)(base, voters, extra=FAST if extra is None else extra, **options)
    q.format()
    q.start()
    try:
        q.wait_listening()
        loop.run(find_leader(q.addresses()))
        for address in q.addresses().values():  # each has applied the bootstrap metadata (else reads refuse)
            wait_for(lambda: finalized_features(address, loop).get("metadata.version"))
        yield q
    finally:
        q.stop()



@contextlib.contextmanager
def stopped_follower(quorum, loop: LoopThread, timeout: float = 30):
    """Yield the id of a follower stopped with SIGTERM (exit 0) once its log reached the leader's high
    watermark, so that its files hold everything committed so far; start it again afterwards, and return once it
    has applied the metadata again (a controller still replaying refuses DescribeCluster, as Kafka's does)."""
    leader, part = loop.run(find_leader(quorum.addresses()))
    follower = next(i for i in quorum.ids if i != leader)
    target = part.high_watermark

    def caught_up() -> bool:
        _, now = loop.run(find_leader(quorum.addresses()))
        return {v.replica_id: v.log_end_offset for v in now.current_voters}[follower] >= target
    wait_for(caught_up, timeout=timeout)
    try:
        status = quorum.terminate(follower)
        assert status == 0, quorum.log_tail(follower, 60)  # a hung stop shows its SIGQUIT stacks here
        yield follower
    finally:
        quorum.start(follower)
        quorum.wait_listening()
        address = quorum.addresses()[follower]   # serving again: it has applied the metadata (else it refuses)
        wait_for(lambda: finalized_features(address, loop).get("metadata.version"))


def finalized_features(address, loop: LoopThread) -> dict[str, int]:
    """Return the finalized feature levels a controller advertises in ApiVersions (its committed image)."""
    from kraftsman.controller.wire.connection import Connection
    from kraftsman.storage.protocol import codec

    async def ask():
        conn = await Connection.open(*address, client_id="test", timeout_ms=5000)
        try:
            body = codec.message_class("ApiVersionsRequest")(client_software_name="t", client_software_version="1")
            return await conn.request("ApiVersions", 3, body, timeout_ms=5000)
        finally:
            await conn.close()
    return {f.name: f.max_version_level for f in loop.run(ask()).finalized_features}


@contextlib.contextmanager
def running_brokers(quorum, loop: LoopThread, broker_ids, *, unfenced: bool = True, rack_of=None, **options):
    """Start a SimulatedBroker per id (heartbeat every 500 ms unless told; rack_of(id) names its rack), wait
    until all are unfenced if asked, yield them as a list, stop them."""
    from kraftsman.controller.client.broker_sim import SimulatedBroker

    options.setdefault("heartbeat_interval_ms", 500)
    sims = [SimulatedBroker(b, quorum.addresses(), quorum.cluster_id, rack=rack_of(b) if rack_of else None,
                            **options) for b in broker_ids]
    try:
        for sim in sims:
            loop.run(sim.start())
        if unfenced:
            wait_for(lambda: all(not s.fenced for s in sims))
        yield sims
    finally:
        for sim in sims:
            loop.run(sim.stop())



class SecureListenerQuorum(LocalQuorum):
    """A LocalQuorum whose voters also listen on a second listener named SECURE (its protocol, SASL and TLS
    settings come from the quorum's `extra` properties)."""

    def __init__(self, base, voters: int, **kw):
        super().__init__(base, voters, **kw)
        self.secure_ports = dict(zip(self.ids, free_ports(voters)))

    def secure_bootstrap(self) -> str:
        """Return the SECURE listeners as a bootstrap list."""
        return ",".join(f"127.0.0.1:{p}" for p in self.secure_ports.values())

    def properties(self, node_id: int) -> dict[str, str]:
        ports = self.ports[node_id], self.secure_ports[node_id]
        return super().properties(node_id) | {
            "listeners": "CONTROLLER://127.0.0.1:{},SECURE://127.0.0.1:{}".format(*ports)}
