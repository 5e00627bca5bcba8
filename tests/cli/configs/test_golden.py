"""kafka-configs' golden tests: every kafka-configs case of shared/fixtures/kafka-admin-3.9, run in-process on the fixture
cluster at its point of the recorded history, matches the recording (stdout, stderr, exit code; masked only as the
fixture's README says)."""
from __future__ import annotations

import pytest

from ...admin_golden import cases, replay


@pytest.mark.parametrize("name", cases("kafka-configs"))
def test_golden(history, name):
    problems = replay(history, name)
    assert not problems, "\n".join(problems)
