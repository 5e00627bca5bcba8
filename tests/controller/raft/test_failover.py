"""Failover liveness in simulated time: the leader of three voters crashes, and the two survivors, whose
fetches the leader answered in the same tick, elect a new leader after the fetch timeout rather than
after a split vote's election timeouts."""
from __future__ import annotations

import random

from raft_harness import Cluster

FETCH_TIMEOUT_MS, ELECTION_TIMEOUT_MS, TICK_MS = 2000, 1000, 20


def failover_time(seed: int, max_delay_ms: int = 10) -> int | None:
    """Return the time (ms) from the leader's crash to the next leader, or None within 10 s."""
    rng = random.Random(seed)
    c = Cluster(seed, (1, 2, 3), (), 0, tick_ms=TICK_MS, retry_backoff_ms=TICK_MS,
                fetch_timeout_ms=FETCH_TIMEOUT_MS, election_timeout_ms=ELECTION_TIMEOUT_MS)
    c.delay = lambda: rng.randint(0, max_delay_ms)
    crash_at, crashed_at = 3000 + rng.randint(0, 500), None
    while c.now < crash_at + 10_000:
        c.now += TICK_MS
        c.tick()
        due = [m for m in c.net.queue if m[0] <= c.now]
        c.net.queue = [m for m in c.net.queue if m[0] > c.now]
        for _, _, env in sorted(due, key=lambda m: m[:2]):
            c.deliver(env)
        leader = c.leader()
        if crashed_at is None and leader is not None and c.now >= crash_at:
            c.crash(leader)
            crashed_at = c.now
        elif crashed_at is not None and leader is not None:
            return c.now - crashed_at
    return None


def test_survivors_whose_fetch_timers_fire_together_do_not_split_the_vote():
    """Split pre-vote (election.py): when both survivors time out in the same tick and grant each other's
    pre-vote, both run and refuse each other's vote; with the third voter down only their election
    timeouts end it. A leader must follow the fetch timeout (plus ticks and round trips) instead."""
    times = [failover_time(seed) for seed in range(100)]
    late = [t for t in times if t is None or t > FETCH_TIMEOUT_MS + ELECTION_TIMEOUT_MS // 2]
    assert not late, f"{len(late)}/100 failovers waited for an election timeout: {sorted(late, key=str)[:10]}"
