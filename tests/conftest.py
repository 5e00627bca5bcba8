"""Shared pytest fixtures: where ../shared is, skipping cleanly when it is absent."""
from __future__ import annotations

from pathlib import Path

import pytest

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
