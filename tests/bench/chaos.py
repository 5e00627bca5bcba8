"""Chaos run by hand: a real kraftsman quorum on 127.0.0.1 under faults (SIGKILL of the leader, a follower or
every voter, power loss of a follower or of every voter, SIGSTOP, cut/blackholed/one-way links, a minority
partition, failing fsync) with a CreateTopics/DeleteTopics workload and simulated brokers; checks every voter's
log at the end (tests/chaos/ holds the harness; tests/controller/server/test_chaos.py is the CI version).

Run: python tests/bench/chaos.py --voters 5 --duration 600 [--seed 7] [--keep DIR]

Prints the fault log as it goes and a summary table; exits 1 when a write was lost, a replica diverged, the
quorum did not recover after a fault, two voters led one epoch or a voter exited by itself.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: `tests.chaos`

from tests.chaos.faults import KINDS  # noqa: E402
from tests.chaos.harness import run_chaos  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voters", type=int, default=5, choices=[3, 5, 7])
    parser.add_argument("--duration", type=float, default=600, help="seconds of fault injection")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated fault kinds")
    parser.add_argument("--keep", metavar="DIR", help="keep the voters' directories under DIR")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown fault kinds: {', '.join(sorted(unknown))} (known: {', '.join(KINDS)})")
    with tempfile.TemporaryDirectory(prefix="kraftsman-chaos-") as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        print(f"chaos: {args.voters} voters, {args.duration:g} s, seed {args.seed}, directories under {base}",
              flush=True)
        report = run_chaos(base, voters=args.voters, duration_s=args.duration, seed=args.seed, kinds=kinds,
                           progress=lambda line: print(line, flush=True))
    print()
    print(report.summary())
    bad = (report.lost or report.divergent or report.not_recovered or report.final_recovery_s is None
           or report.check.epochs_with_two_leaders or report.unexpected_exits)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
