"""The fixture cluster (tests/admin_cluster) walked through shared/fixtures/kafka-admin-3.9's whole history, case by
case: the kafka-cluster and kafka-metadata-quorum cases run and must match the recording; every case of an admin
tool kraftsman does not have yet that asks the cluster anything is checked through the RPCs its tool would send
(admin_cluster_checks); the rest are passed with their effects applied by the state helpers (the cases of the admin
tools kraftsman has run for real in their golden tests, tests/cli/<tool>/test_golden.py).

Fixed ports: the module waits for any other fixture cluster on this machine to stop (admin_cluster's lock).
"""
from __future__ import annotations

import io
import time

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment

from .admin_cluster import FIXTURES
from .admin_cluster_checks import CHECKS
from .admin_cluster_compare import compare, load_case, normalize
from .admin_cluster_history import CASES
from .admin_golden import landed

TOOLS = {"kafka-cluster", "kafka-metadata-quorum"}
# kraftsman's kafka-cluster has verbs Kafka 3.9's lacks (list-endpoints, describe-brokers, wait, health: README), so
# Kafka 3.9's argparse refusals cannot match; the exit code must, and list-endpoints must list the live brokers.
TOOL_ADDITIONS = {"cluster-list-endpoints-bootstrap-server", "cluster-no-subcommand"}
if not FIXTURES.is_dir():
    pytest.skip(f"admin fixtures not found at {FIXTURES} (../shared is absent)", allow_module_level=True)


def run_tool(tool: str, argv: list[str]) -> tuple[int, str, str]:
    """Run an existing kraftsman tool in-process as the fixture's command line names it."""
    from kraftsman.cli.cluster import tool as cluster_tool
    from kraftsman.cli.quorum import tool as quorum_tool

    run = {"kafka-cluster": cluster_tool.run, "kafka-metadata-quorum": quorum_tool.run}[tool]
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, argv, Environment(stdout=out, stderr=err), prog=tool)
    return status, out.getvalue(), err.getvalue()


def _check_addition(name: str, status: int, out: str, err: str) -> None:
    if name == "cluster-no-subcommand":
        assert (status, out, err.splitlines()[0].startswith("usage: kafka-cluster ")) == (1, "", True)
        assert "{cluster-id,unregister,list-endpoints," in err
        return
    rows = [line.split() for line in out.splitlines()[1:]]
    assert status == 0 and [(r[0], r[1], r[2]) for r in rows] == [("4", "127.0.0.1", "31014"),
                                                                 ("5", "127.0.0.1", "31015")]


def test_every_case_of_the_fixture_is_in_the_history():
    from .admin_cluster_compare import case_names

    assert sorted(CASES) == case_names() and len(CASES) == 77


# a case of a tool kraftsman has is run for real by that tool's golden test (tests/cli/<tool>/test_golden.py,
# admin_golden): its raw-RPC check stops here
CHECKED = [c for c in CASES if load_case(c).tool in TOOLS or (c in CHECKS and not landed(load_case(c).tool))]


@pytest.mark.parametrize("name", CHECKED)
def test_case(history, name):
    case = load_case(name)
    history.prepare(name)
    if case.tool in TOOLS:
        status, out, err = run_tool(case.tool, case.argv)
        history.done(name, ran=True)
        if name in TOOL_ADDITIONS:
            _check_addition(name, status, out, err)
            return
        assert compare(case, out, err, status) == []
        return
    applied = CHECKS[name](history.cluster, case)
    history.done(name, ran=applied)


def test_the_history_ends_on_the_fixtures_final_state(history):
    """After the last case, the cluster holds what topics-describe-final-all printed (replicas, leaders, ISR sets)."""
    case = load_case("topics-describe-final-all")
    history.prepare(CASES[-1])
    history.done(CASES[-1], ran=False)
    rows = {}
    for line in normalize(case.tool, case.argv, case.stdout).splitlines():
        if line.startswith("\tTopic: "):
            fields = dict(f.split(": ", 1) for f in line.strip("\t").split("\t"))
            rows[(fields["Topic"], int(fields["Partition"]))] = (fields["Leader"], fields["Replicas"], fields["Isr"])
    cluster = history.cluster
    for (topic, index), (leader, replicas, isr) in rows.items():
        p = cluster.partition(topic, index)
        assert (str(p.leader), ",".join(map(str, p.replicas)), ",".join(map(str, sorted(p.isr)))) == \
            (leader, replicas, isr), (topic, index)


def test_state_helpers_not_covered_by_a_case(history):
    """A SIGKILLed broker is fenced once its session times out (9 s) and comes back; a quota and a broker config are
    removed; the recorded log sizes are the data written."""
    cluster, ops = history.cluster, history.ops
    ops.quotas({"client-id": "c1"}, remove=["producer_byte_rate", "consumer_byte_rate"])
    ops.broker_configs(None, delete=["log.cleaner.threads"])
    cluster.wait(lambda image: not image.client_quotas.entities.get((("client-id", "c1"),)) and
                 "log.cleaner.threads" not in image.configs.resources.get((4, ""), {}), "quota and config removed")
    moved = cluster.broker(4).image.topics.by_name["t-move"].topic_id
    assert cluster.broker(4).replicas.logs[(moved, 1)].size >= 9_000_000
    # a loaded machine can delay a simulated heartbeat past the session; the broker then comes back unfenced, and
    # the kill must start from that state for the timing below to show the session timeout
    cluster.wait_unfenced(5)
    cluster.kill_broker(5)
    started = time.monotonic()
    cluster.wait(lambda image: image.cluster.brokers[5].record.fenced, "broker 5 fenced after its session", 30)
    assert time.monotonic() - started > 5   # fenced by the session timeout, not at once
    cluster.start_broker(5)
    ops.wait_full_isr()
