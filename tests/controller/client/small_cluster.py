"""A small cluster for admin-call tests on free ports: one kraftsman controller process and one simulated Kafka 3.9
broker (ServingBroker) with the StandardAuthorizer and super.users=User:ANONYMOUS, as the fixture cluster's nodes.

Unlike tests/admin_cluster it takes no lock and no fixed port, so it runs beside other tests.
"""
from __future__ import annotations

import contextlib
import time

from kraftsman.cli.demo.local_quorum import LocalQuorum, free_ports
from kraftsman.controller.client.broker_apis.serving import ServingBroker
from kraftsman.controller.client.controller_client import find_leader

from ..server.quorum_fixtures import FAST, finalized_features, wait_for

SECURITY = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true", "super.users": "User:ANONYMOUS"}
BROKER_ID = 4


class SmallCluster:
    """A 1-voter quorum and broker 4; `server` and `controller` are their bootstrap addresses."""

    def __init__(self, quorum: LocalQuorum, broker: ServingBroker, loop):
        self.quorum, self.broker, self.loop = quorum, broker, loop
        self.server = f"127.0.0.1:{broker.port}"
        self.controller = quorum.bootstrap()

    def sync(self, predicate, timeout: float = 15) -> None:
        """Wait until the broker's image satisfies predicate(image)."""
        wait_for(lambda: predicate(self.broker.image), timeout=timeout)


@contextlib.contextmanager
def small_cluster(base, loop, broker_properties: dict[str, str] | None = None, security: dict[str, str] = SECURITY):
    """Start the controller and broker 4 under `base` (both with the `security` properties); yield a SmallCluster;
    stop both."""
    quorum = LocalQuorum(base, 1, extra={**FAST, **security})
    quorum.format()
    quorum.start()
    broker = None
    try:
        quorum.wait_listening()
        loop.run(find_leader(quorum.addresses()))
        for address in quorum.addresses().values():
            wait_for(lambda: finalized_features(address, loop).get("metadata.version"))
        (port,) = free_ports(1)
        props = {"listeners": f"PLAINTEXT://127.0.0.1:{port}", "log.dirs": str(base / "b4"), **security,
                 **(broker_properties or {})}
        broker = ServingBroker(BROKER_ID, quorum.addresses(), quorum.cluster_id, port=port, properties=props,
                               heartbeat_interval_ms=500)
        loop.run(broker.start())
        started = time.monotonic()
        while broker.sim.fenced and time.monotonic() - started < 20:
            time.sleep(0.05)
        yield SmallCluster(quorum, broker, loop)
    finally:
        if broker is not None:
            loop.run(broker.close())
        quorum.stop()
