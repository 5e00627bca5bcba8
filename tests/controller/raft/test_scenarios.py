"""Data-driven scenario scripts under scenarios/*.txt (regenerate with KRAFTSMAN_REWRITE=1)."""
from __future__ import annotations

from pathlib import Path

import pytest
from raft_scenario import run_file

SCENARIOS = sorted((Path(__file__).resolve().parent / "scenarios").glob("*.txt"))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path):
    mismatches = run_file(path)
    if mismatches:
        cmd, expected, actual = mismatches[0]
        pytest.fail(f"{path.name}: {len(mismatches)} block(s) differ; first: {cmd}\n"
                    f"--- expected\n{expected}\n--- actual\n{actual}\n(KRAFTSMAN_REWRITE=1 regenerates)")
