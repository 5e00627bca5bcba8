"""A rolling restart's verbs against a real 3-voter kraftsman quorum on 127.0.0.1 with simulated brokers (issue 21).

One quorum serves the module and the tests run in file order: start times first, then a broker restart under
`wait`, a SIGKILL failover and a restart of every voter from a snapshot, then `health`'s table, whose last row
(a quorum without a leader) leaves the quorum broken.
"""
from __future__ import annotations

import io
import json
import threading
import time

import pytest

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.controller.client import admin
from kraftsman.controller.client import sync_client as sc
from kraftsman.storage.log.snapshot import list_snapshots

from ...controller.server.quorum_fixtures import find_leader, loop_fixture, running_brokers, running_quorum, wait_for

BROKER_IDS = (301, 302, 303)
loop = loop_fixture()


def kc(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(cluster_tool.run, list(argv), Environment(stdout=out, stderr=err, env={}),
                         prog="kafka-cluster")
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("restart"), loop) as q:
        yield q


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    with running_brokers(quorum, loop, BROKER_IDS, fetch=False) as sims:
        yield {s.broker_id: s for s in sims}


def start_times(quorum, voter: int) -> dict[int, int]:
    """Return {broker id: start time} as one voter's DescribeCluster tells it (that voter's own image)."""
    config = sc.ClientConfig.from_properties({})
    info = admin.Admin([quorum.addresses()[voter]], config, time.monotonic() + 10).describe_cluster(admin.BROKERS)
    return {n.node_id: n.start_time_ms for n in info.nodes}


def every_voter_agrees(quorum, brokers, voters=None) -> bool:
    """Tell whether every voter (a restarted one once it has replayed its metadata) reports the brokers' start
    times."""
    expected = {i: b.start_time_ms for i, b in brokers.items()}
    try:
        return all(start_times(quorum, v) == expected for v in (voters or quorum.ids))
    except (admin.ServerError, sc.ClientError):     # still loading: UNSUPPORTED_VERSION before its image
        return False


def test_every_voter_reports_each_brokers_own_start_time(quorum, brokers):
    wait_for(lambda: every_voter_agrees(quorum, brokers), timeout=15)
    status, out, _ = kc("list-endpoints", "-b", quorum.bootstrap(), "--output", "json")
    assert status == 0
    assert {e["id"]: e["start_time_ms"] for e in json.loads(out)["endpoints"]} == \
        {i: b.start_time_ms for i, b in brokers.items()}


def test_confluent_kafka_describe_cluster_still_works(quorum, brokers):
    from confluent_kafka.admin import AdminClient

    client = AdminClient({"bootstrap.servers": quorum.bootstrap()})     # kept: a dropped client cancels its futures
    result = client.describe_cluster(request_timeout=10).result(15)
    assert result.cluster_id == quorum.cluster_id and result.nodes       # librdkafka decoded the answer


def test_wait_returns_only_after_the_restarted_broker_registered_again_and_was_unfenced(quorum, brokers, loop):
    sim, before = brokers[302], brokers[302].incarnation_id
    t0 = int(time.time() * 1000)
    result = {}
    waiter = threading.Thread(target=lambda: result.update(r=kc(
        "wait", "--id", "302", "--state", "unfenced", "--restarted-after", str(t0), "-C", quorum.bootstrap(),
        "--timeout", "40", "--output", "json")))
    waiter.start()
    time.sleep(1.5)
    assert waiter.is_alive()                        # the running broker started before t0: not yet
    assert loop.run(sim.restart(clean=False)) == 0    # a crash: registered again once its old session expired
    waiter.join(45)
    status, out, err = result["r"]
    assert status == 0, err
    doc = json.loads(out)["broker"]
    assert not doc["fenced"] and not doc["in_controlled_shutdown"] and doc["start_time_ms"] > t0
    assert doc["start_time_ms"] == sim.start_time_ms and sim.incarnation_id != before
    assert doc["incarnation_id"] == str(sim.incarnation_id) or doc["incarnation_id"] != str(before)
    wait_for(lambda: every_voter_agrees(quorum, brokers), timeout=15)


def test_wait_times_out_with_75_and_an_incarnation_change_is_seen(quorum, brokers):
    status, out, err = kc("wait", "--id", "301", "--state", "fenced", "-C", quorum.bootstrap(), "--timeout", "1.5")
    assert (status, out) == (75, "") and "did not become fenced" in err and err.count("\n") == 1
    status, _, err = kc("wait", "--id", "301", "--state", "unfenced", "-C", quorum.bootstrap(),
                        "--incarnation-changed-from", "nothing-like-it", "--timeout", "10")
    assert status == 0, err
    status, out, err = kc("wait", "--id", "999", "--state", "unregistered", "-b", quorum.bootstrap())
    assert status == 0 and "Broker 999 is not registered" in out     # DescribeCluster v2 lists fenced brokers too


def _create_topics(quorum, names) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})
    for future in client.create_topics([NewTopic(n, 2, 3) for n in names], request_timeout=20).values():
        future.result(30)


def _newest_snapshot_end(quorum, voter: int) -> int:
    """Return the end offset of a voter's newest snapshot, -1 while it has none."""
    snapshots = list_snapshots(quorum.partition_dir(voter))
    return snapshots[-1].end_offset if snapshots else -1


def test_start_times_survive_a_sigkill_failover_and_a_restart_of_every_voter_from_a_snapshot(quorum, brokers, loop):
    _create_topics(quorum, [f"t{i}" for i in range(40)])       # several snapshots (every 4,000 bytes)
    leader, _ = loop.run(find_leader(quorum.addresses()))
    quorum.kill(leader)
    others = [v for v in quorum.ids if v != leader]
    wait_for(lambda: loop.run(find_leader({v: quorum.addresses()[v] for v in others}))[0] != leader, timeout=20)
    wait_for(lambda: every_voter_agrees(quorum, brokers, others), timeout=15)
    quorum.start(leader)
    quorum.wait_listening()
    wait_for(lambda: every_voter_agrees(quorum, brokers), timeout=20)
    newest_registration = max(b.broker_epoch for b in brokers.values())       # a broker epoch is its record's offset
    for v in quorum.ids:        # snapshots are written in the background: the restarted voter's may still be due
        wait_for(lambda: _newest_snapshot_end(quorum, v) > newest_registration, timeout=15)
        assert quorum.terminate(v) == 0
    for v in quorum.ids:
        quorum.start(v)
    quorum.wait_listening()
    loop.run(find_leader(quorum.addresses()))
    wait_for(lambda: every_voter_agrees(quorum, brokers), timeout=30)


def health(quorum, *flags):
    status, out, err = kc("health", "-C", quorum.bootstrap(), "--output", "json", *flags)
    return status, (json.loads(out)["reasons"] if out else [err])


def test_health_exit_codes(quorum, brokers, loop):
    seen = {}
    wait_for(lambda: health(quorum)[0] == 0, timeout=30)
    seen["healthy"] = health(quorum)

    follower = next(v for v in quorum.ids if v != loop.run(find_leader(quorum.addresses()))[0])
    quorum.kill(follower)
    time.sleep(2.5)
    seen["a lagging voter"] = health(quorum, "--max-voter-lag-ms", "1500")
    quorum.start(follower)
    quorum.wait_listening()
    seen["back when healthy"] = health(quorum, "--exit-when-healthy", "--interval", "0.5", "--timeout", "30")

    brokers[303].crash()
    assert kc("wait", "--id", "303", "--state", "fenced", "-C", quorum.bootstrap(), "--timeout", "20")[0] == 0
    seen["a fenced broker"] = health(quorum)
    seen["an under-replicated partition"] = health(quorum, "--allow-fenced", "1")

    leader, _ = loop.run(find_leader(quorum.addresses()))
    for v in quorum.ids:
        if v != leader:
            quorum.kill(v)
    time.sleep(3)                                   # the leader resigns once a majority stops fetching
    seen["no leader (quorum lost)"] = health(quorum, "--timeout", "4")

    table = {case: (status, reasons) for case, (status, reasons) in seen.items()}
    assert table["healthy"] == (0, [])
    assert table["back when healthy"] == (0, [])
    expected = {"a lagging voter": "lagging voters", "a fenced broker": "fenced brokers [303]",
                "an under-replicated partition": "under-replicated partitions", "no leader (quorum lost)": "no quorum"}
    for case, words in expected.items():
        status, reasons = table[case]
        assert status == 5 and any(words in r for r in reasons), (case, table[case])
    assert all("fenced" not in r for r in table["an under-replicated partition"][1])
