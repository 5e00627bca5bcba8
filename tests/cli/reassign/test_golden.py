"""kafka-reassign-partitions against shared/fixtures/kafka-admin-3.9: every reassign-* case, run on the fixture
cluster at its point of the recorded history, matches Kafka 3.9's stdout, stderr and exit code (masking only what
the fixture's README names as varying)."""
from __future__ import annotations

import pytest

from ...admin_golden import cases, replay


@pytest.mark.parametrize("name", cases("kafka-reassign-partitions"))
def test_golden(history, name):
    problems = replay(history, name)
    assert not problems, "\n".join(problems)
