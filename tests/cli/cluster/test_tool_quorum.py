"""kafka-cluster against a real 3-voter kraftsman quorum on 127.0.0.1 with simulated brokers.

One quorum serves the module; tests run in file order (the unregister tests change the broker set).
"""
from __future__ import annotations

import io
import json
import time

import pytest

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment

from ...controller.server.quorum_fixtures import (
    loop_fixture,
    running_brokers,
    running_quorum,
    stopped_follower,
    wait_for,
)
from ...controller.server.sync_fakes import FakeServer, http_server

BROKER_IDS = (101, 102, 103)
loop = loop_fixture()


def kc(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(cluster_tool.run, list(argv), Environment(stdout=out, stderr=err), prog="kafka-cluster")
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("cluster-tool"), loop) as q:
        yield q


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    with running_brokers(quorum, loop, BROKER_IDS, fetch=False) as sims:
        yield {s.broker_id: s for s in sims}


def active_brokers(quorum) -> set[int]:
    status, out, err = kc("list-endpoints", "-C", quorum.bootstrap(), "--output", "json")
    assert status == 0, err
    status, out, err = kc("list-endpoints", "-b", quorum.bootstrap(), "--output", "json")
    assert status == 0, err
    return {row["id"] for row in json.loads(out)["endpoints"]}


def test_cluster_id_through_both_bootstrap_kinds_is_the_formatted_id(quorum):
    for flag in ("-b", "-C"):
        assert kc("cluster-id", flag, quorum.bootstrap()) == (0, f"Cluster ID: {quorum.cluster_id}\n", "")


def test_list_endpoints_shows_the_controllers_and_the_active_brokers(quorum, brokers):
    status, out, _ = kc("list-endpoints", "-C", quorum.bootstrap())
    assert status == 0
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [(int(r[0]), int(r[2]), r[-1]) for r in rows] == [(i, quorum.ports[i], "controller") for i in quorum.ids]
    assert active_brokers(quorum) == set(BROKER_IDS)


def test_active_broker_is_refused_with_require_fenced(quorum, brokers):
    status, out, err = kc("unregister", "--id", "101", "-C", quorum.bootstrap(), "--require-fenced")
    assert (status, out) == (4, "") and err.count("\n") == 1 and "still active" in err
    assert 101 in active_brokers(quorum)


def test_unknown_broker_is_not_registered(quorum):
    status, out, err = kc("unregister", "--id", "999", "-C", quorum.bootstrap(), "--timeout", "10")
    assert (status, out, err) == (1, "", "BROKER_ID_NOT_REGISTERED: The given broker ID was not registered.\n")
    assert kc("unregister", "--id", "999", "-b", quorum.bootstrap(), "--missing-ok")[0] == 0


def test_fenced_broker_is_unregistered_and_its_record_reaches_a_voters_log(quorum, brokers, loop):
    brokers[103].crash()
    wait_for(lambda: 103 not in active_brokers(quorum), timeout=15)        # session timeout 3 s: fenced
    status, out, err = kc("unregister", "--id", "103", "-C", quorum.bootstrap(), "--require-fenced",
                          "--timeout", "10")
    assert (status, out, err) == (0, "Broker 103 is no longer registered.\n", "")
    status, _, err = kc("unregister", "--id", "103", "-b", quorum.bootstrap())
    assert status == 1 and "BROKER_ID_NOT_REGISTERED" in err                # gone for good
    _assert_unregister_record_in_a_follower_log(quorum, loop, 103)


def _assert_unregister_record_in_a_follower_log(quorum, loop, broker_id):
    from kraftsman.cli.dump_log import tool as dump_log

    with stopped_follower(quorum, loop, timeout=15) as follower:
        segments = sorted(quorum.partition_dir(follower).glob("*.log"))
        out, err = io.StringIO(), io.StringIO()
        status = dump_log.run(["--cluster-metadata-decoder", "--files", ",".join(map(str, segments))],
                              Environment(stdout=out, stderr=err))
    assert status == 0, err.getvalue()
    lines = [line.replace(" ", "") for line in out.getvalue().splitlines()]
    assert any('"UNREGISTER_BROKER_RECORD"' in line and f'"brokerId":{broker_id}' in line for line in lines)


def test_unreachable_and_foreign_servers_exit_69_within_the_timeout(quorum):
    with FakeServer() as gone:
        closed = gone.address
    with http_server() as http:
        for address, text in (("no-such-host.invalid:9093", "cannot resolve host"), (closed, "cannot connect"),
                              (http.address, "does not speak the Kafka protocol")):
            start = time.monotonic()
            status, out, err = kc("unregister", "--id", "101", "-C", address, "--timeout", "5")
            assert (status, out) == (69, "") and text in err and err.count("\n") == 1
            assert time.monotonic() - start < 5.5


def test_one_standby_address_reaches_the_active_controller(quorum, loop):
    from kraftsman.cli.quorum import tool as metadata_quorum

    from ...controller.server.quorum_fixtures import find_leader

    leader, _ = loop.run(find_leader(quorum.addresses()))
    standby = "{}:{}".format(*next(a for i, a in quorum.addresses().items() if i != leader))
    start = time.monotonic()
    status, out, err = kc("unregister", "--id", "999", "-C", standby, "--missing-ok")
    assert (status, out, err) == (0, "Broker 999 is not registered; nothing to do.\n", "")
    out, err = io.StringIO(), io.StringIO()
    status = run_command(metadata_quorum.run, ["--bootstrap-controller", standby, "describe", "--status"],
                         Environment(stdout=out, stderr=err), prog="kafka-metadata-quorum")
    assert (status, err.getvalue()) == (0, "") and f"LeaderId:               {leader}\n" in out.getvalue()
    assert time.monotonic() - start < 5
