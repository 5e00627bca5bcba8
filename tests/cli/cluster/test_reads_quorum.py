"""kafka-cluster's reads on a real 3-voter kraftsman quorum with simulated brokers that fetch (observers in
DescribeQuorum): they leave no trace (issue 31.5), health's verdict after --timeout is the last real check (31.1),
--exit-when-healthy shows progress and --watch stamps each state (31.12), `unregister --dry-run` exits as the real
run does (31.6), `wait --restarted-after` works with brokers that send no start time (31.4).

One quorum serves the module; the tests run in file order and each leaves the brokers registered and unfenced.
"""
from __future__ import annotations

import io
import json
import threading
import time

import pytest

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.cluster.wait import MAX_BACKOFF_S
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.demo.local_quorum import free_ports
from kraftsman.cli.shell.tool import run as shell_run

from ...controller.server.quorum_fixtures import find_leader, loop_fixture, running_brokers, running_quorum, wait_for

BROKER_IDS = (201, 202, 203)
loop = loop_fixture()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def kc(*argv, stderr=None):
    out, err = io.StringIO(), stderr if stderr is not None else io.StringIO()
    status = run_command(cluster_tool.run, list(argv), Environment(stdout=out, stderr=err, env={}),
                         prog="kafka-cluster")
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("reads"), loop) as q:
        yield q


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    with running_brokers(quorum, loop, BROKER_IDS, fetch=True) as sims:   # they fetch: observers of the quorum
        yield {s.broker_id: s for s in sims}


def observers(quorum, loop) -> list[int]:
    """Return the observer ids the leader's DescribeQuorum lists."""
    _, part = loop.run(find_leader(quorum.addresses()))
    return sorted(o.replica_id for o in part.observers)


def back_to_unfenced(quorum, loop, sim) -> None:
    """Register a crashed or unregistered simulated broker again and wait until it is unfenced."""
    assert loop.run(sim.restart(clean=False)) == 0
    wait_for(lambda: kc("wait", "--id", str(sim.broker_id), "--state", "unfenced", "-C", quorum.bootstrap(),
                        "--timeout", "2")[0] == 0, timeout=30)


def test_reads_and_a_live_shell_add_no_observer_row(quorum, brokers, loop):
    wait_for(lambda: observers(quorum, loop) == list(BROKER_IDS), timeout=20)
    c = quorum.bootstrap()
    for _ in range(20):
        assert kc("health", "-C", c)[0] == 0
        assert kc("wait", "--id", "201", "--state", "unfenced", "-C", c)[0] == 0
        assert kc("describe-brokers", "-C", c)[0] == 0
        assert kc("health", "-C", c, "--watch", "--interval", "0.2", "--timeout", "0.6")[0] == 0
    for _ in range(3):                                       # the live shell: its observer thread reads the log
        out = io.StringIO()
        env = Environment(stdout=out, stderr=io.StringIO(), stdin=io.StringIO(), env={})
        assert run_command(shell_run, ["--bootstrap-controller", c, "ls", "/image/cluster/brokers"], env,
                           prog="kafka-metadata-shell") == 0
        assert out.getvalue().split() == [str(b) for b in BROKER_IDS]
    assert observers(quorum, loop) == list(BROKER_IDS)     # only the brokers: no row for any read


def test_describe_brokers_lists_a_fenced_broker_from_describe_cluster(quorum, brokers, loop):
    brokers[203].crash()
    assert kc("wait", "--id", "203", "--state", "fenced", "-C", quorum.bootstrap(), "--timeout", "20")[0] == 0
    for flag in ("-C", "-b"):                                # kraftsman answers DescribeCluster v2 either way
        status, out, _ = kc("describe-brokers", flag, quorum.bootstrap(), "--output", "json")
        doc = json.loads(out)
        assert status == 0 and doc["source"] == "DescribeCluster"
        assert {b["id"]: b["fenced"] for b in doc["brokers"]} == {201: False, 202: False, 203: True}
        assert all(b["epoch"] is not None and b["incarnation_id"] for b in doc["brokers"])
    status, out, _ = kc("list-endpoints", "-b", quorum.bootstrap(), "--include-fenced-brokers")
    assert status == 0 and [line.split()[4] for line in out.splitlines()[1:]] == ["unfenced", "unfenced", "fenced"]


def test_health_after_its_timeout_reports_the_last_real_check_not_a_missing_leader(quorum, brokers, loop):
    c = quorum.bootstrap()
    for timeout in ("2.5", "3", "3.5"):     # the interval runs into the end of --timeout at different points
        status, out, err = kc("health", "-C", c, "--exit-when-healthy", "--interval", "1", "--timeout", timeout,
                              "--output", "json")
        doc = json.loads(out)
        assert status == 5, err
        assert doc["leader_id"] >= 0 and doc["brokers"]["fenced"] == [203], doc
        assert not any("no quorum leader" in r for r in doc["reasons"]) and doc["checked_at"].endswith("Z")
    status, out, _ = kc("health", "-C", c, "--exit-when-healthy", "--interval", "1", "--timeout", "2.5")
    assert status == 5 and "Quorum leader:                  " in out and "none" not in out


def test_exit_when_healthy_shows_progress_on_a_terminal_and_watch_stamps_each_state(quorum, brokers, loop):
    c = quorum.bootstrap()
    terminal = _Terminal()
    done = {}
    waiter = threading.Thread(target=lambda: done.update(r=kc("health", "-C", c, "--exit-when-healthy", "--interval",
                                                              "0.5", "--timeout", "60", stderr=terminal)))
    waiter.start()
    time.sleep(2)
    back_to_unfenced(quorum, loop, brokers[203])
    waiter.join(60)
    status, out, _ = done["r"]
    progress = terminal.getvalue()
    assert status == 0 and out.startswith("Healthy:                        true")
    assert "waiting for the cluster to be healthy: fenced brokers [203]" in progress and progress.endswith("\x1b[K")
    status, out, _ = kc("health", "-C", c, "--watch", "--interval", "0.3", "--timeout", "1.5")
    blocks = [b for b in out.split("Checked at:") if b.strip()]
    assert status == 0 and len(blocks) >= 3 and all("Healthy:" in b for b in blocks)
    stamps = [b.split()[0] for b in blocks]
    assert stamps == sorted(stamps) and all(s.endswith("Z") and "T" in s for s in stamps)


def registrations(c: str) -> dict[int, bool]:
    """Return {broker id: fenced} as describe-brokers tells it."""
    return {b["id"]: b["fenced"] for b in json.loads(kc("describe-brokers", "-C", c, "--output", "json")[1])["brokers"]}


@pytest.mark.parametrize("state", ["active", "fenced", "missing"])
@pytest.mark.parametrize("flags", [(), ("--require-fenced",), ("--missing-ok",), ("--require-fenced", "--missing-ok")])
def test_unregister_dry_run_exits_as_the_real_run_does(quorum, brokers, loop, state, flags):
    c, sim = quorum.bootstrap(), brokers[202]
    broker_id = "999" if state == "missing" else "202"
    if state == "fenced":
        sim.crash()
        wait_for(lambda: kc("wait", "--id", "202", "--state", "fenced", "-C", c, "--timeout", "2")[0] == 0, 30)
    before, predictions = registrations(c), []
    for flag in ("-C", "-b"):
        status, out, _ = kc("unregister", "--id", broker_id, flag, c, "--dry-run", *flags, "--output", "json")
        assert json.loads(out)["status"] == status and json.loads(out)["dry_run"] is True
        predictions.append(status)
    assert registrations(c) == before                         # the dry runs changed nothing
    real, _, err = kc("unregister", "--id", broker_id, "-C", c, *flags)
    assert predictions == [real, real], (state, flags, err)
    assert real == {"active": 4 if "--require-fenced" in flags else 0, "fenced": 0,
                    "missing": 0 if "--missing-ok" in flags else 1}[state]
    if state == "fenced" or (state == "active" and real == 0):
        back_to_unfenced(quorum, loop, sim)


def test_wait_restarted_after_with_brokers_that_send_no_start_time(quorum, loop):
    """The controller records the registration time for a broker that sends none; a simulated Kafka 3.9 broker's
    listener (DescribeCluster v1: no start time at all) makes the wait see the restart."""
    from kraftsman.controller.client.broker_apis.serving import ServingBroker

    port = free_ports(1)[0]
    broker = ServingBroker(211, quorum.addresses(), quorum.cluster_id, port=port, heartbeat_interval_ms=500,
                           send_start_time=False)
    loop.run(broker.start())
    try:
        for server in (quorum.bootstrap(), f"127.0.0.1:{port}"):
            # first the steady state, as this server sees it: the broker's own listener (DescribeCluster v1 lists
            # unfenced brokers only) may lag behind the controller; seen missing after t0, it would pass for the
            # restart (a loaded run returned before the broker was stopped)
            assert kc("wait", "--id", "211", "--state", "unfenced", "-b", server, "--timeout", "40")[0] == 0
            t0 = int(time.time() * 1000)
            result = {}
            waiter = threading.Thread(target=lambda: result.update(r=kc(
                "wait", "--id", "211", "--state", "unfenced", "--restarted-after", str(t0), "-b", server,
                "--timeout", "40", "--output", "json")))
            waiter.start()
            time.sleep(1.5)
            assert waiter.is_alive(), (server, t0, result)  # still the broker that started before t0
            loop.run(broker.stop())                       # SIGTERM: controlled shutdown, the listener closes
            # down for longer than the wait's poll interval (at most 1 s), as a real broker's restart is: told no
            # start time, the wait sees a restart only by looking while the broker is gone (a simulated broker
            # came back between two looks, under load, and the wait rightly timed out)
            time.sleep(2 * MAX_BACKOFF_S + 0.5)
            loop.run(broker.start())                      # a new incarnation, registered without a start time
            waiter.join(45)
            status, out, err = result["r"]
            assert status == 0, (server, out, err)
            doc = json.loads(out)["broker"]
            assert not doc["fenced"], doc
            started = doc["start_time_ms"]
            assert (started > t0 if server == quorum.bootstrap() else started == -1), (server, t0, str(doc))
    finally:
        loop.run(broker.close())


def test_wait_explains_a_restart_it_could_not_see(quorum, loop):
    from kraftsman.controller.client.broker_apis.serving import ServingBroker

    port = free_ports(1)[0]
    broker = ServingBroker(212, quorum.addresses(), quorum.cluster_id, port=port, heartbeat_interval_ms=500,
                           send_start_time=False)
    loop.run(broker.start())
    try:
        address = f"127.0.0.1:{port}"
        wait_for(lambda: kc("wait", "--id", "212", "--state", "unfenced", "-b", address, "--timeout", "2")[0] == 0,
                 timeout=20)
        status, out, err = kc("wait", "--id", "212", "--state", "unfenced", "--restarted-after",
                              str(int(time.time() * 1000) - 60_000), "-b", address, "--timeout", "2")
        assert status == 75 and err.count("\n") == 1
        assert "it is unfenced; the server tells no start time, and the wait has not seen the broker restart" in err
    finally:
        loop.run(broker.close())
