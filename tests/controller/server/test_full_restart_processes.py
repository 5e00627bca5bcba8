"""A full restart of a real 3-voter quorum under running brokers that are as strict as Kafka's.

Real Kafka 3.9 brokers exited with "Non-monotonic update of high watermark from 7931 to 7928" after every
kraftsman voter was restarted at once: the new leader answered Fetch with the end of its newest snapshot
before it had committed anything in its own epoch. The simulated brokers here check every Fetch answer as
Kafka's Raft client does (broker_sim: -1 skipped, a decrease fatal), so this test fails on that defect.
"""
from __future__ import annotations

import pytest

from kraftsman.storage.log.snapshot import list_snapshots

from .quorum_fixtures import find_leader, loop_fixture, running_brokers, running_quorum, wait_for

loop = loop_fixture()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("quorum"), loop) as q:
        yield q


def _create_topics(quorum, names, timeout: float = 30) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})
    for future in client.create_topics([NewTopic(n, 2, 3) for n in names], request_timeout=20).values():
        future.result(timeout)


def _newest_snapshot_end(quorum, node_id: int) -> int:
    snapshots = list_snapshots(quorum.partition_dir(node_id))
    return snapshots[-1].end_offset if snapshots else 0


def test_a_full_quorum_restart_keeps_every_strict_broker_running(quorum, loop):
    with running_brokers(quorum, loop, (201, 202, 203)) as brokers:
        _create_topics(quorum, [f"before-{i}" for i in range(40)])  # several snapshots (every 4,000 bytes)
        _create_topics(quorum, ["after-the-last-snapshot"])
        _, part = loop.run(find_leader(quorum.addresses()))
        wait_for(lambda: all(b.high_watermark >= part.high_watermark for b in brokers))
        seen = min(b.high_watermark for b in brokers)
        ends = {n: _newest_snapshot_end(quorum, n) for n in quorum.ids}
        assert 0 < max(ends.values()) < seen, (ends, seen)  # the restarted voters know less than the brokers

        for node in quorum.ids:
            quorum.kill(node)
        for node in quorum.ids:
            quorum.start(node)
        quorum.wait_listening()
        loop.run(find_leader(quorum.addresses()))
        _create_topics(quorum, ["after-the-restart"], timeout=60)
        _, part = loop.run(find_leader(quorum.addresses()))
        wait_for(lambda: all(b.high_watermark >= part.high_watermark or b.fatal for b in brokers), timeout=30)

        assert [b.fatal for b in brokers] == [None, None, None]
        assert all(b.high_watermark > seen for b in brokers)
