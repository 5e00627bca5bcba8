"""Mixed quorums of Kafka 3.9-speaking voters (Vote v0-1, no pre-vote) and kraftsman voters elect either kind.

Kafka 3.9 cannot take a pre-vote (KIP-996 came with Vote v2 in Kafka 4.0). kraftsman's voters campaign with one,
and used to drop it when the peer spoke only v1: with a Kafka 3.9 vote needed, they could never lead. Now the
transport answers such a pre-vote with UNSUPPORTED_VERSION and the prospective runs a real election at once, as
Kafka 4.0 does (raft_harness emulates the transport for `kafka39` nodes)."""
from __future__ import annotations

import random

import pytest
from raft_harness import Cluster

TICK, FETCH_TIMEOUT, ELECTION_TIMEOUT = 10, 2000, 1000


def _step(c: Cluster, rng: random.Random) -> None:
    c.now += TICK
    c.tick()
    due = [m for m in c.net.queue if m[0] <= c.now]
    c.net.queue = [m for m in c.net.queue if m[0] > c.now]
    for _, _, env in sorted(due, key=lambda m: m[:2]):
        c.deliver(env)


def _failover(seed: int, kafka39: tuple) -> tuple[int, int]:
    """Elect a leader, crash it, and return (the next leader, ms from the crash to its election)."""
    rng = random.Random(seed)
    c = Cluster(seed, (1, 2, 3), (), 0, kafka39=kafka39, tick_ms=TICK, retry_backoff_ms=TICK,
                fetch_timeout_ms=FETCH_TIMEOUT, election_timeout_ms=ELECTION_TIMEOUT)
    c.delay = lambda: rng.randint(0, 2) * TICK
    while c.leader() is None and c.now < 20_000:
        _step(c, rng)
    first = c.leader()
    assert first is not None, f"seed {seed}: no first leader"
    for _ in range(rng.randint(0, 100)):
        _step(c, rng)
    c.crash(first)
    crashed_at = c.now
    while c.now < crashed_at + 20_000:
        _step(c, rng)
        leader = c.leader()
        if leader is not None and leader != first:
            return leader, c.now - crashed_at
    raise AssertionError(f"seed {seed}: no leader after the crash of {first}")


@pytest.mark.parametrize("kafka39", [(1, 2), (1,)])
def test_either_kind_of_voter_takes_over_within_the_election_timeout(kafka39):
    """Voters without pre-vote campaign at once when their fetch timer fires, so two survivors can split a vote
    (Kafka 3.9 quorums do too) and the next round waits out a random election timeout: 95% of failovers end
    within fetch + 2 election timeouts (the longest first round), every one within 10 s."""
    results = [_failover(seed, kafka39) for seed in range(100)]
    winners = {leader for leader, _ in results}
    assert winners & set(kafka39) and winners - set(kafka39), f"only {winners} ever led"
    late = sorted(t for _, t in results if t > FETCH_TIMEOUT + 2 * ELECTION_TIMEOUT)
    assert len(late) <= 5 and (not late or late[-1] <= 10_000), f"{len(late)}/100 late failovers: {late}"


def test_a_kraftsman_voter_needing_a_kafka39_vote_leads():
    """Voters 1 (Kafka 3.9) and 3 (kraftsman) up, 2 down: 3 must be able to lead with 1's vote."""
    led = 0
    for seed in range(30):
        rng = random.Random(seed)
        c = Cluster(seed, (1, 2, 3), (), 0, kafka39=(1, 2), tick_ms=TICK, retry_backoff_ms=TICK)
        c.delay = lambda: rng.randint(0, 2) * TICK
        c.crash(2)
        while c.leader() is None:
            _step(c, rng)
        led += c.leader() == 3
    assert led >= 5, f"the kraftsman voter led in {led}/30 cold starts"


def test_without_the_fallback_a_kraftsman_voter_never_leads(monkeypatch):
    """Mutation check: a prospective that ignores UNSUPPORTED_VERSION (the old behaviour) never wins."""
    from kraftsman.controller.raft import election
    monkeypatch.setattr(election, "_pre_vote_unsupported", lambda node: None)
    for seed in range(10):
        rng = random.Random(seed)
        c = Cluster(seed, (1, 2, 3), (), 0, kafka39=(1, 2), tick_ms=TICK, retry_backoff_ms=TICK)
        c.delay = lambda: rng.randint(0, 2) * TICK
        c.crash(2)
        for _ in range(1000):
            _step(c, rng)
        assert c.leader() != 3
