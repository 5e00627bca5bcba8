"""A 3-voter quorum with three simulated Kafka 3.9 brokers (ServingBroker: client listener, replicas, ISR,
AlterPartition) as brokers 4, 5 and 6, and what the leader-election tests read from them."""
from __future__ import annotations

import contextlib

from kraftsman.cli.demo.local_quorum import free_ports
from kraftsman.controller.client.broker_apis.serving import ServingBroker

from ...controller.server.quorum_fixtures import running_quorum, wait_for

BROKER_IDS = (4, 5, 6)


@contextlib.contextmanager
def serving_cluster(base, loop, extra=None):
    """Yield (quorum, {broker id: ServingBroker}) once every broker is unfenced; close the brokers after."""
    with running_quorum(base / "quorum", loop, extra=extra) as quorum:
        ports = dict(zip(BROKER_IDS, free_ports(len(BROKER_IDS))))
        brokers = {i: ServingBroker(i, quorum.addresses(), quorum.cluster_id, port=ports[i], heartbeat_interval_ms=500,
                                    properties={"log.dirs": str(base / f"b{i}")}) for i in ports}
        try:
            for broker in brokers.values():
                loop.run(broker.start(30), timeout=40)
            wait_for(lambda: unfenced(brokers) == set(brokers))
            yield quorum, brokers
        finally:
            for broker in brokers.values():
                loop.run(broker.close())


def unfenced(brokers) -> set[int]:
    """Return the brokers a running broker's image holds as unfenced."""
    image = next(iter(brokers.values())).image
    return {i for i, r in image.cluster.brokers.items() if not r.record.fenced}


def leaders(brokers) -> dict[tuple[str, int], tuple[int, int]]:
    """Return {(topic, partition): (leader, preferred replica)} as a running broker's image has them."""
    image = next(iter(brokers.values())).image
    return {(t.name, i): (t.partition(i).leader, t.partition(i).replicas[0])
            for t in image.topics.by_id.values() for i in t.partitions}


def create_topics(quorum) -> None:
    """Create orders (6 partitions, 3 replicas) and audit (3 partitions, 2 replicas) through the controllers."""
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})
    for future in client.create_topics([NewTopic("orders", 6, 3), NewTopic("audit", 3, 2)],
                                       request_timeout=20).values():
        future.result(30)
