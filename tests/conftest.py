"""Shared pytest fixtures: where ../shared is, skipping cleanly when it is absent; `history`, the fixture cluster
of kafka-admin-3.9 walked through its recorded history (one per test module that asks for it: admin_golden)."""
from __future__ import annotations

from pathlib import Path

import pytest

from .admin_golden import history  # noqa: F401 (a fixture: the admin tools' golden tests and test_admin_cluster)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
KRAFT_REAL = SHARED / "fixtures" / "kraft-real"
# the fixture cluster's case checks assert in a helper module: show their comparisons as in a test
pytest.register_assert_rewrite("tests.admin_cluster_checks")


@pytest.fixture(scope="session")
def kraft_real() -> Path:
    """Return the real-Kafka fixture folder, or skip when ../shared is absent."""
    if not (KRAFT_REAL / "data").is_dir():
        pytest.skip(f"real Kafka fixtures not found at {KRAFT_REAL} (../shared is absent)")
    return KRAFT_REAL
