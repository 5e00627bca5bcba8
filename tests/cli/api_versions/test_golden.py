"""kafka-broker-api-versions against shared/fixtures/kafka-admin-3.9: every apiversions-* case, run on the fixture
cluster at its point of the recorded history, matches Kafka 3.9's stdout, stderr and exit code (masking only what
the fixture's README names as varying: log4j times, stack frames, the order of the broker blocks).

One documented difference: apiversions-bad-address (nothing listens at the bootstrap address) prints Kafka's text
but exits 69, the suite's code for a cluster it cannot reach (README's exit codes), where Kafka's JVM exits 1."""
from __future__ import annotations

import pytest

from ...admin_golden import cases, replay

# case -> the one difference from the recording it is allowed, and why
DOCUMENTED = {"apiversions-bad-address": "exit code 69, expected 1"}       # unreachable: the suite's 69


@pytest.mark.parametrize("name", cases("kafka-broker-api-versions"))
def test_golden(history, name):
    problems = replay(history, name)
    assert problems == ([DOCUMENTED[name]] if name in DOCUMENTED else []), "\n".join(problems)
