"""Seeded simulation of 3- and 5-voter quorums with observers under message loss, duplication,
reordering, delays, partitions and crash/restart; invariants are checked after every event.

KRAFTSMAN_SEEDS=N runs N seeds (default 1000, CI); KRAFTSMAN_SEED_START shifts the range.
A failure prints the seed, its fault plan, the nodes and the last events; replay with
`python tests/controller/raft/raft_simulation.py SEED --trace`.
"""
from __future__ import annotations

import os

import pytest
from raft_simulation import LivenessFailure, Simulation, SimulationFailure, election_time, kafka39

SEEDS = int(os.environ.get("KRAFTSMAN_SEEDS", "1000"))
START = int(os.environ.get("KRAFTSMAN_SEED_START", "0"))
CHUNKS = 10


def _run(seeds) -> list[tuple[str, bool]]:
    """Run `seeds`; return (report, whether only liveness failed) per failing seed."""
    failures = []
    for seed in seeds:
        try:
            Simulation(seed).run()
        except SimulationFailure as e:
            failures.append((str(e), isinstance(e.__cause__, LivenessFailure)))
    return failures


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_seeds_keep_every_invariant(chunk):
    per = -(-SEEDS // CHUNKS)
    lo = START + chunk * per
    hi = min(START + SEEDS, lo + per)
    failures = _run(s for s in range(lo, hi) if not kafka39(s))
    assert not failures, f"{len(failures)} failing seed(s); first:\n{failures[0][0]}"


def test_seeds_with_kafka39_voters_keep_safety_and_mostly_liveness():
    """Mixed quorums (raft_simulation.kafka39): every safety invariant in every seed; a leader that commits in
    the calm phase in at least 95% of seeds (a stale voter without pre-vote can keep disrupting elections)."""
    seeds = [s for s in range(START, START + SEEDS) if kafka39(s)]
    failures = _run(seeds)
    unsafe = [report for report, liveness_only in failures if not liveness_only]
    assert not unsafe, f"{len(unsafe)} seed(s) broke safety; first:\n{unsafe[0]}"
    assert len(failures) <= len(seeds) // 20, f"{len(failures)}/{len(seeds)} without liveness:\n{failures[0][0]}"


def test_messages_survive_the_wire_codec():
    """The same runs with every message encoded and decoded at its KRaft version on the way."""
    for seed in range(20):
        Simulation(seed, wire=True).run()


def test_a_seed_replays_identically():
    a, b = Simulation(7), Simulation(7)
    assert a.run() == b.run()
    assert a.cluster.format_trace() == b.cluster.format_trace()


def test_failure_report_names_the_seed_and_events():
    sim = Simulation(3)
    report = sim.report(AssertionError("boom"))
    assert "seed 3 failed: boom" in report and "raft_simulation.py 3 --trace" in report


@pytest.mark.parametrize("voters", [3, 5])
def test_leader_elected_within_two_election_timeouts(voters):
    """Liveness: stable majority, delays <= 100 ms: a leader within 2 x 1000 ms in >= 99% of seeds."""
    times = [election_time(seed, voters, max_delay_ms=100) for seed in range(500)]
    on_time = sum(t is not None and t <= 2000 for t in times)
    assert on_time / len(times) >= 0.99, f"only {on_time}/{len(times)} elections within 2000 ms"


def test_invariants_catch_a_broken_core(monkeypatch):
    """Mutation check: a core that grants every vote must be caught (two leaders in one epoch)."""
    from kraftsman.controller.raft import election
    monkeypatch.setattr(election, "_can_grant_vote", lambda node, candidate_id, log_ok: True)
    caught = []
    for seed in range(200):
        try:
            Simulation(seed).run()
        except SimulationFailure as e:
            caught.append(str(e))
            break
    assert caught and "seed" in caught[0]

