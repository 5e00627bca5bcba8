"""Shared pytest fixtures: where ../shared is, skipping cleanly when it is absent; `history`, the fixture cluster
of kafka-admin-3.9 walked through its recorded history (one per test module that asks for it: admin_golden).

Under pytest-xdist, a module goes to one worker whole (as `--dist loadscope`): many modules start one quorum or
cluster for all their tests and walk it through a story in file order (test_acls_processes creates, then deletes,
then reads a follower's image), so spreading their tests over workers would break the story and start the
cluster once per worker. An explicit `--dist` other than `load` is kept."""
from __future__ import annotations

from pathlib import Path

import pytest

from .admin_golden import history  # noqa: F401 (a fixture: the admin tools' golden tests and test_admin_cluster)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
KRAFT_REAL = SHARED / "fixtures" / "kraft-real"
# the fixture cluster's case checks assert in a helper module: show their comparisons as in a test
pytest.register_assert_rewrite("tests.admin_cluster_checks")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Return xdist's by-module scheduler in place of its default (`load`), which splits modules."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    return LoadScopeScheduling(config, log)


@pytest.fixture(scope="session")
def kraft_real() -> Path:
    """Return the real-Kafka fixture folder, or skip when ../shared is absent."""
    if not (KRAFT_REAL / "data").is_dir():
        pytest.skip(f"real Kafka fixtures not found at {KRAFT_REAL} (../shared is absent)")
    return KRAFT_REAL


@pytest.fixture(autouse=True)
def _kraftsman_logger_restored():
    """Give every test the `kraftsman` logger as it found it: kafka-controller run in-process (a storage test does)
    points it at its own stderr and stops its propagation, which would hide later tests' records from caplog."""
    import logging

    logger = logging.getLogger("kraftsman")
    saved = logger.handlers[:], logger.level, logger.propagate
    yield
    logger.handlers[:], logger.level, logger.propagate = saved
