"""The README's rolling-restart recipe, run as written: a real 3-voter quorum, three simulated Kafka 3.9 brokers
(ServingBroker: client listener, replicas, ISR) restarted one by one, every kafka-cluster and kafka-leader-election
line of the recipe's bash block run in-process; the recipe ends with every partition led by its preferred replica.

The block's `ssh "broker-$id" sudo systemctl restart kafka` is a broker's SIGTERM (controlled shutdown) and start;
the recipe's broker ids 1 2 3 are the test's brokers 4 5 6 (the controllers are nodes 1-3).
"""
from __future__ import annotations

import datetime
import io
import re
import shlex
from pathlib import Path

import pytest

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.demo.local_quorum import free_ports
from kraftsman.cli.leader_election import tool as election_tool
from kraftsman.controller.client.broker_apis.serving import ServingBroker

from ...controller.server.quorum_fixtures import loop_fixture, running_quorum, wait_for

README = Path(__file__).resolve().parents[3] / "README.md"
BROKERS = {1: 4, 2: 5, 3: 6}                  # the recipe's broker id -> the test's
TOOLS = {"kafka-cluster": cluster_tool.run, "kafka-leader-election": election_tool.run}
loop = loop_fixture()


def recipe() -> list[str]:
    """Return the lines of the bash block under "### A rolling restart"."""
    section = README.read_text().split("### A rolling restart", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    base = tmp_path_factory.mktemp("recipe")
    with running_quorum(base / "quorum", loop) as quorum:
        ports = dict(zip(BROKERS.values(), free_ports(3)))
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


def _unfenced(brokers) -> set[int]:
    """Return the brokers a running broker's image holds as unfenced."""
    image = next(iter(brokers.values())).image
    return {i for i, r in image.cluster.brokers.items() if not r.record.fenced}


def _run(tool: str, argv: list[str]) -> int:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(TOOLS[tool], argv, Environment(stdout=out, stderr=err), prog=tool)
    assert status == 0, f"{tool} {shlex.join(argv)} exited {status}: {out.getvalue()}{err.getvalue()}"
    return status


def _leaders(brokers) -> dict[tuple[str, int], tuple[int, int]]:
    """Return {(topic, partition): (leader, preferred replica)} as a running broker's image has them."""
    image = next(iter(brokers.values())).image
    return {(t.name, i): (t.partition(i).leader, t.partition(i).replicas[0])
            for t in image.topics.by_id.values() for i in t.partitions}


def _create_topics(quorum) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})
    for future in client.create_topics([NewTopic("orders", 6, 3), NewTopic("audit", 3, 2)],
                                       request_timeout=20).values():
        future.result(30)


def _restart(loop, broker: ServingBroker) -> None:
    assert loop.run(broker.stop(), timeout=40)
    loop.run(broker.start(30), timeout=40)


def _line(line: str, variables: dict, loop, brokers) -> None:
    """Run one line of the recipe (see the module's docstring)."""
    if line.startswith("before="):
        variables["before"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
        return
    words = shlex.split(re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: variables[m.group(1) or m.group(2)],
                               line.removesuffix("|| exit 1").strip()))
    if words[0] == "ssh":
        _restart(loop, brokers[BROKERS[int(words[1].removeprefix("broker-"))]])
    else:
        if words[0] == "kafka-cluster" and "--id" in words:
            at = words.index("--id") + 1
            words[at] = str(BROKERS[int(words[at])])
        _run(words[0], words[1:])


def test_the_recipe_ends_with_every_partition_on_its_preferred_leader(cluster, loop):
    quorum, brokers = cluster
    _create_topics(quorum)
    wait_for(lambda: len(_leaders(brokers)) == 9 and all(leader >= 0 for leader, _ in _leaders(brokers).values()))
    lines, variables = recipe(), {"C": quorum.bootstrap()}
    assert lines[0].startswith("C=") and lines[1].startswith("for id in ") and "kafka-leader-election" in lines[-1]
    loop_body = lines[2:lines.index("done")]
    for recipe_id in lines[1].removeprefix("for id in ").removesuffix("; do").split():
        variables["id"] = recipe_id
        for line in loop_body:
            _line(line, variables, loop, brokers)
    after_loop = lines[lines.index("done") + 1:]
    for line in after_loop[:-1]:
        _line(line, variables, loop, brokers)
    moved = {tp for tp, (leader, preferred) in _leaders(brokers).items() if leader != preferred}
    assert moved, "the restarts left every leader in place: the election would prove nothing"
    _line(after_loop[-1], variables, loop, brokers)
    wait_for(lambda: all(leader == preferred for leader, preferred in _leaders(brokers).values()), timeout=10)
