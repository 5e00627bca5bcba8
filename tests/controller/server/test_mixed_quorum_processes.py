"""A real quorum of two voters that speak only Kafka 3.9's Raft wire (kraftsman.raft.kafka.version=3.9: Vote v0-1,
no pre-vote) and one kraftsman voter: leadership moves to either kind.

Before, the kraftsman voter's pre-vote could not be said to a Vote v1 peer and was dropped, so it never led when
it needed a Kafka 3.9 vote. Now its transport answers the pre-vote with UNSUPPORTED_VERSION and it runs a real
election at once, as Kafka 4.0 does.
"""
from __future__ import annotations

import time

import pytest

from kraftsman.cli.demo.local_quorum import LocalQuorum

from .quorum_fixtures import find_leader, loop_fixture, running_quorum

loop = loop_fixture()
KAFKA39 = (1, 2)
KRAFTSMAN = 3


class MixedQuorum(LocalQuorum):
    """Voters 1 and 2 speak Kafka 3.9's Raft wire; voter 3 is a kraftsman voter."""

    def properties(self, node_id: int) -> dict[str, str]:
        props = super().properties(node_id)
        return props | ({"kraftsman.raft.kafka.version": "3.9"} if node_id in KAFKA39 else {})


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("mixed"), loop, quorum_class=MixedQuorum) as q:
        yield q


def _fail_over(quorum, loop) -> tuple[int, float]:
    """SIGKILL the leader, return (the next leader, seconds until it committed in its epoch), restart the old."""
    leader, _ = loop.run(find_leader(quorum.addresses()))
    started = time.monotonic()
    quorum.kill(leader)
    new, _ = loop.run(find_leader(quorum.addresses(), exclude={leader}, timeout_s=20))
    took = time.monotonic() - started
    quorum.start(leader)
    quorum.wait_listening()
    return new, took


def test_the_kafka39_voters_advertise_vote_v1_only(quorum, loop):
    from kraftsman.controller.wire.connection import Connection
    from kraftsman.storage.protocol import codec

    async def vote_range(address):
        conn = await Connection.open(*address, client_id="test", timeout_ms=5000)
        try:
            body = codec.message_class("ApiVersionsRequest")(client_software_name="t", client_software_version="1")
            answer = await conn.request("ApiVersions", 3, body, timeout_ms=5000)
        finally:
            await conn.close()
        return next(k.max_version for k in answer.api_keys if k.api_key == 52)
    assert [loop.run(vote_range(quorum.addresses()[n])) for n in (1, 2, 3)] == [1, 1, 2]


def test_leadership_moves_to_either_kind_of_voter(quorum, loop):
    leaders, times = [], []
    for _ in range(12):
        new, took = _fail_over(quorum, loop)
        leaders.append(new)
        times.append(took)
        if KRAFTSMAN in leaders and set(leaders) & set(KAFKA39) and len(leaders) >= 3:
            break
    assert KRAFTSMAN in leaders and set(leaders) & set(KAFKA39), f"leaders after each failover: {leaders}"
    assert max(times) < 10, f"failover times (s): {[round(t, 2) for t in times]}"
    log = "".join((quorum.node_dir(KRAFTSMAN) / "controller.log").read_text(errors="replace"))
    assert "cannot take a pre-vote" in log
