"""Kafka's automatic leader balancing, live: a real 3-voter quorum with leader.imbalance.check.interval.seconds=2,
three simulated Kafka 3.9 brokers (ServingBroker: replicas, ISR, AlterPartition); a broker restarted with a
controlled shutdown loses its leaderships, rejoins the ISRs, and the active controller moves every partition back to
its preferred replica by itself (no kafka-leader-election), as Kafka's electPreferred task does.
"""
from __future__ import annotations

import pytest

from kraftsman.cli.demo.local_quorum import free_ports
from kraftsman.controller.client.broker_apis.serving import ServingBroker

from ...controller.server.quorum_fixtures import loop_fixture, running_quorum, wait_for
from .test_rolling_restart_recipe import _create_topics, _leaders, _unfenced

loop = loop_fixture()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    base = tmp_path_factory.mktemp("balance")
    with running_quorum(base / "quorum", loop, extra={"leader.imbalance.check.interval.seconds": "2"}) as quorum:
        ports = dict(zip((4, 5, 6), free_ports(3)))
        brokers = {i: ServingBroker(i, quorum.addresses(), quorum.cluster_id, port=ports[i], heartbeat_interval_ms=500,
                                    properties={"log.dirs": str(base / f"b{i}")}) for i in ports}
        try:
            for broker in brokers.values():
                loop.run(broker.start(30), timeout=40)
            wait_for(lambda: _unfenced(brokers) == set(brokers))
            yield quorum, brokers
        finally:
            for broker in brokers.values():
                loop.run(broker.close())


def test_leaderships_go_back_to_preferred_replicas_after_a_restart_without_an_election_tool(cluster, loop):
    quorum, brokers = cluster
    _create_topics(quorum)
    wait_for(lambda: len(_leaders(brokers)) == 9 and all(lead == pref for lead, pref in _leaders(brokers).values()))
    restarted = brokers[5]
    assert loop.run(restarted.stop(), timeout=40)                     # controlled shutdown: leaderships move away
    wait_for(lambda: all(lead != 5 for lead, _ in _leaders(brokers).values()), timeout=30)
    assert any(pref == 5 for _, pref in _leaders(brokers).values())   # so some partitions are now imbalanced
    loop.run(restarted.start(30), timeout=40)
    wait_for(lambda: all(lead == pref for lead, pref in _leaders(brokers).values()), timeout=60)
