"""Kafka's automatic leader balancing, live: a real 3-voter quorum with leader.imbalance.check.interval.seconds=2,
three simulated Kafka 3.9 brokers (ServingBroker: replicas, ISR, AlterPartition); a broker restarted with a
controlled shutdown loses its leaderships, rejoins the ISRs, and the active controller moves every partition back to
its preferred replica by itself (no kafka-leader-election), as Kafka's electPreferred task does.
"""
from __future__ import annotations

import pytest

from ...controller.server.quorum_fixtures import loop_fixture, wait_for
from .serving import create_topics, leaders, serving_cluster

loop = loop_fixture()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    with serving_cluster(tmp_path_factory.mktemp("balance"), loop,
                         extra={"leader.imbalance.check.interval.seconds": "2"}) as (quorum, brokers):
        yield quorum, brokers


def test_leaderships_go_back_to_preferred_replicas_after_a_restart_without_an_election_tool(cluster, loop):
    quorum, brokers = cluster
    create_topics(quorum)
    wait_for(lambda: len(leaders(brokers)) == 9 and all(lead == pref for lead, pref in leaders(brokers).values()))
    restarted = brokers[5]
    assert loop.run(restarted.stop(), timeout=40)                     # controlled shutdown: leaderships move away
    wait_for(lambda: all(lead != 5 for lead, _ in leaders(brokers).values()), timeout=30)
    assert any(pref == 5 for _, pref in leaders(brokers).values())   # so some partitions are now imbalanced
    loop.run(restarted.start(30), timeout=40)
    wait_for(lambda: all(lead == pref for lead, pref in leaders(brokers).values()), timeout=60)
