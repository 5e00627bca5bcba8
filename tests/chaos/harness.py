"""run_chaos(): a real kraftsman quorum on 127.0.0.1 under faults, with a workload, checked at the end.

Steps: format and start N voters behind the fault proxy; register simulated brokers and start the writers;
inject faults for `duration_s`; heal everything and wait for one more acknowledged write; stop the workload;
wait (bounded) until every voter has the leader's high watermark; SIGTERM every voter; run the checker on
their directories. Everything is torn down in `finally`, whatever failed. Every wait has a bound.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from kraftsman.controller.client.controller_client import find_leader

from ..loop_thread import LoopThread
from .checker import CheckResult, check
from .faults import KINDS, ChaosQuorum, FaultInjector
from .workload import Workload


@dataclass
class ChaosReport:
    voters: int
    seed: int
    duration_s: float
    faults: list = field(default_factory=list)
    acknowledged: int = 0
    unacknowledged: int = 0
    workload_errors: dict = field(default_factory=dict)
    check: CheckResult | None = None
    unexpected_exits: list = field(default_factory=list)
    exit_codes: dict = field(default_factory=dict)
    final_recovery_s: float | None = None
    log: list = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def lost(self) -> int:
        return len({what for what, _, _ in self.check.lost}) if self.check else -1

    @property
    def divergent(self) -> int:
        return self.check.divergent_replicas if self.check else -1

    @property
    def not_recovered(self) -> list:
        return [f for f in self.faults if f.recovered_at is None]

    def summary(self) -> str:
        return "\n".join(summary_lines(self))


def _pct(values, q: float):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    return values[min(len(values) - 1, int(q * len(values)))]


def _s(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def summary_lines(r: ChaosReport) -> list[str]:
    out = [f"chaos run: {r.voters} voters, seed {r.seed}, {r.duration_s:g} s of faults, {r.wall_s:.0f} s wall",
           f"{'fault kind':<28}{'count':>6}{'unavail p50':>13}{'p99':>7}{'recovery p50':>14}{'p99':>7}"
           f"{'recovered':>11}"]
    kinds = [k for k in KINDS if any(f.kind == k for f in r.faults)]
    for kind in kinds:
        fs = [f for f in r.faults if f.kind == kind]
        un, rec = [f.unavailability_s for f in fs], [f.recovery_s for f in fs]
        out.append(f"{kind:<28}{len(fs):>6}{_s(_pct(un, .5)):>13}{_s(_pct(un, .99)):>7}{_s(_pct(rec, .5)):>14}"
                   f"{_s(_pct(rec, .99)):>7}{sum(f.recovered_at is not None for f in fs):>8}/{len(fs)}")
    rec = [f.recovery_s for f in r.faults]
    un = [f.unavailability_s for f in r.faults]
    c = r.check
    out += [f"{'total':<28}{len(r.faults):>6}{_s(_pct(un, .5)):>13}{_s(_pct(un, .99)):>7}{_s(_pct(rec, .5)):>14}"
            f"{_s(_pct(rec, .99)):>7}{len(r.faults) - len(r.not_recovered):>8}/{len(r.faults)}",
            f"acknowledged writes          {r.acknowledged} (attempts without an answer or with an error: "
            f"{r.unacknowledged})",
            f"writes lost                  {r.lost}",
            f"divergent replicas           {r.divergent}",
            f"faults without recovery      {len(r.not_recovered)}",
            f"recovery after heal (s)      p50 {_s(_pct(rec, .5))}  p99 {_s(_pct(rec, .99))}  max {_s(_pct(rec, 1))}",
            f"unavailability from fault (s) p50 {_s(_pct(un, .5))}  p99 {_s(_pct(un, .99))}  max {_s(_pct(un, 1))}",
            f"unexpected voter exits       {len(r.unexpected_exits)}"]
    if c is not None:
        out.append(f"committed batches compared   {c.batches_compared} (below high watermark {c.high_watermark}); "
                   f"images compared at offset {c.common_offset}; snapshots compared {c.snapshots_compared}")
        out.append(f"epochs with an active controller {c.leader_epochs}; epochs with two: "
                   f"{c.epochs_with_two_leaders or 0}")
        out += [f"divergent: voter {v}: {why}" for v, why in {**c.divergent, **c.image_divergent}.items()]
        out += [f"lost: {what} on voter {v}: {why}" for what, v, why in c.lost[:20]]
        out += [f"note: {n}" for n in c.notes]
        out += [f"log error: voter {v}: {text}" for v, text in c.log_errors.items()]
        if c.known_issues:
            out.append("regression seen (stop() after an fsync failure raised again; the process stayed up): "
                       + ", ".join(f"voter {v} x{n}" for v, n in sorted(c.known_issues.items())))
    if r.workload_errors:
        out.append("workload errors (not acknowledged, retried with new names): "
                   + ", ".join(f"{k} x{v}" for k, v in sorted(r.workload_errors.items())))
    return out


def _wait_caught_up(loop, quorum, timeout_s: float) -> int:
    """Wait until every voter's log end reaches the leader's high watermark; return that watermark."""
    deadline = time.monotonic() + timeout_s
    hw, leader, ends = 0, None, {}
    while time.monotonic() < deadline:
        leader, part = loop.run(find_leader(quorum.addresses(), timeout_s=30), timeout=40)
        ends = {v.replica_id: v.log_end_offset for v in part.current_voters}
        hw = max(hw, part.high_watermark)
        if len(ends) == len(quorum.ids) and min(ends.values()) >= hw:
            return hw
        time.sleep(0.2)
    raise TimeoutError(f"voters did not catch up with high watermark {hw} within {timeout_s:g} s: leader {leader}, "
                       f"log ends {ends}\n{_voters_state(quorum)}")


def _voters_state(quorum) -> str:
    """Describe each voter for a failure message: its process state and the last lines of its log."""
    out = []
    for nid in quorum.ids:
        proc = quorum.procs.get(nid)
        code = None if proc is None else proc.poll()
        state = "never started" if proc is None else "running" if code is None else f"exited {code}"
        out.append(f"voter {nid} ({state}):\n{quorum.log_tail(nid, 8)}")
    return "\n".join(out)


def run_chaos(base, *, voters: int = 3, duration_s: float = 45, seed: int = 1, kinds=KINDS,
              recovery_timeout_s: float = 60, whole_rounds: bool = False, progress=None) -> ChaosReport:
    """Run one chaos experiment under directory `base`; return its report (checks included)."""
    started = time.monotonic()
    report = ChaosReport(voters, seed, duration_s)
    rng = random.Random(seed)
    loop = LoopThread("chaos-workload")
    quorum = ChaosQuorum(base, voters)
    workload = None
    try:
        quorum.format()
        quorum.start()
        quorum.wait_listening(60)
        loop.run(find_leader(quorum.addresses(), timeout_s=60), timeout=70)
        workload = Workload(quorum, rng.randrange(1 << 30))
        loop.run(workload.start(), timeout=120)
        time.sleep(1.0)
        injector = FaultInjector(quorum, workload, loop, rng, kinds=tuple(kinds),
                                 recovery_timeout_s=recovery_timeout_s, progress=progress)
        try:
            injector.run(duration_s, whole_rounds=whole_rounds)
        finally:
            report.faults, report.unexpected_exits = injector.faults, injector.unexpected_exits
            report.log = injector.log
        healed = time.monotonic()
        quorum.heal_everything()
        while time.monotonic() < healed + recovery_timeout_s and workload.first_ack_after(healed) is None:
            time.sleep(0.05)
        done = workload.first_ack_after(healed)
        report.final_recovery_s = None if done is None else done - healed
        loop.run(workload.stop(), timeout=60)
        hw = _wait_caught_up(loop, quorum, 90)
        quorum.stop()
        report.exit_codes = {nid: p.returncode for nid, p in quorum.procs.items()}
        report.acknowledged = workload.acknowledged_writes
        report.unacknowledged = sum(workload.errors.values())
        report.workload_errors = dict(workload.errors)
        report.check = check(quorum, workload, hw)
    finally:
        try:
            quorum.close()
        finally:
            loop.close()
        report.wall_s = time.monotonic() - started
    return report
