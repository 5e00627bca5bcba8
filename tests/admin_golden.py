"""The golden runner of the admin tools: the cases of shared/fixtures/kafka-admin-3.9 that one tool recorded, each
run in-process on the fixture cluster at its point of the recorded history and compared with the recording.

A tool's golden test (tests/cli/<tool>/test_golden.py) is a few lines:

    from ...admin_golden import cases, replay

    @pytest.mark.parametrize("name", cases("kafka-topics"))     # `history`: tests/conftest.py's fixture
    def test_golden(history, name):
        problems = replay(history, name)
        assert not problems, "\n".join(problems)

Rules:
- cases(tool) lists the tool's cases in the history's order (admin_cluster_history.CASES; pytest keeps the
  parameters' order); the `history` fixture (offered to every test by tests/conftest.py) is one fixture cluster
  per test module, walked from its start.
- replay(history, name): History.prepare (the cases before it that this module does not run are emulated by the
  state helpers), the tool's run(argv, env) behind the suite's boundary with the case's stdin and input files in a
  scratch working directory and no profile, a sync of the brokers' images (so what the case wrote is seen by
  History.done(ran=True), which enforces recorded placements, and by the next case), then
  admin_cluster_compare.compare's differences (empty: it matches).
- landed(tool) tells whether kraftsman has the tool (the registry names its script): test_admin_cluster stops
  checking a landed tool's cases through raw RPCs, its golden test runs them for real.
"""
from __future__ import annotations

import importlib
import io
import os

import pytest

from .admin_cluster import FIXTURES, AdminCluster, scratch_dir
from .admin_cluster_compare import compare, load_case, write_inputs
from .admin_cluster_history import CASES, History

CLUSTER_TOOLS = {"kafka-cluster", "kafka-metadata-quorum"}      # run by test_admin_cluster itself


def landed(tool: str) -> bool:
    """Tell whether kraftsman has the tool `tool` (a console script of its registry)."""
    from kraftsman.cli.app import by_script

    return by_script(tool) is not None


def cases(tool: str) -> list[str]:
    """Return the fixture's cases of `tool`, in the order of the recorded history (none without ../shared)."""
    if not FIXTURES.is_dir():
        return []
    return [name for name in CASES if load_case(name).tool == tool]


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Yield a History over a fresh fixture cluster (one per test module; the cluster lock serialises them)."""
    if not FIXTURES.is_dir():
        pytest.skip(f"admin fixtures not found at {FIXTURES} (../shared is absent)")
    cluster = AdminCluster(tmp_path_factory.mktemp("golden-cluster"))
    cluster.start()
    try:
        yield History(cluster)
    finally:
        cluster.stop()


def run_case(name: str, directory) -> tuple[int, str, str]:
    """Run case `name`'s command in-process in `directory` (its input files there); return (status, out, err)."""
    from kraftsman.cli.app import by_script
    from kraftsman.cli.common.boundary import run_command
    from kraftsman.cli.common.environment import Environment

    case = load_case(name)
    write_inputs(case, directory)
    module = importlib.import_module(by_script(case.tool).module)
    out, err = io.StringIO(), io.StringIO()
    stdin = io.StringIO((case.stdin or b"").decode())
    env = Environment(stdout=out, stderr=err, stdin=stdin, cwd=str(directory),
                      env={"XDG_CONFIG_HOME": str(directory), "HOME": str(directory)})
    before = os.getcwd()
    os.chdir(directory)
    try:
        status = run_command(module.run, list(case.argv), env, prog=case.tool)
    finally:
        os.chdir(before)
    return status, out.getvalue(), err.getvalue()


def replay(history: History, name: str) -> list[str]:
    """Run case `name` at its point of the history; return its differences from the recording (see Rules)."""
    history.prepare(name)
    status, out, err = run_case(name, scratch_dir(history.cluster.base, name))
    history.cluster.sync()
    history.done(name, ran=True)
    return compare(load_case(name), out, err, status)
