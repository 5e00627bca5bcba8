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
from kraftsman.cli.leader_election import tool as election_tool
from kraftsman.controller.client.broker_apis.serving import ServingBroker

from ...controller.server.quorum_fixtures import loop_fixture, wait_for
from .serving import create_topics, leaders, serving_cluster

README = Path(__file__).resolve().parents[3] / "README.md"
BROKERS = {1: 4, 2: 5, 3: 6}                  # the recipe's broker id -> the test's (serving.BROKER_IDS)
TOOLS = {"kafka-cluster": cluster_tool.run, "kafka-leader-election": election_tool.run}
loop = loop_fixture()


def recipe() -> list[str]:
    """Return the lines of the bash block under "### A rolling restart"."""
    section = README.read_text().split("### A rolling restart", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    with serving_cluster(tmp_path_factory.mktemp("recipe"), loop) as (quorum, brokers):
        yield quorum, brokers


def _run(tool: str, argv: list[str]) -> int:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(TOOLS[tool], argv, Environment(stdout=out, stderr=err), prog=tool)
    assert status == 0, f"{tool} {shlex.join(argv)} exited {status}: {out.getvalue()}{err.getvalue()}"
    return status


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
    create_topics(quorum)
    wait_for(lambda: len(leaders(brokers)) == 9 and all(leader >= 0 for leader, _ in leaders(brokers).values()))
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
    moved = {tp for tp, (leader, preferred) in leaders(brokers).items() if leader != preferred}
    assert moved, "the restarts left every leader in place: the election would prove nothing"
    _line(after_loop[-1], variables, loop, brokers)
    wait_for(lambda: all(leader == preferred for leader, preferred in leaders(brokers).values()), timeout=10)
