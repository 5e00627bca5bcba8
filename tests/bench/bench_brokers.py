"""Benchmark: 1,000 simulated brokers registering with a real 3-voter quorum, then heartbeating for 30 s (issue 32).

Run: python tests/bench/bench_brokers.py [--brokers 1000] [--seconds 30] [--runs 3] [--partitions 200000]

Each run starts a fresh quorum (tests/bench/bench_quorum.py's settings: heartbeat every 2 s, session 9 s), loads it
with --partitions partitions first as bench_quorum's earlier phases do (CreateTopics of 1,000-partition topics:
the image then holds what bench_quorum's holds when its brokers start, and snapshots are large), registers the
brokers (50 at a time, as bench_quorum does) and lets them heartbeat. Per run it prints: how many registered,
heartbeats sent, late ones (a heartbeat whose answer came after the interval), errors, brokers fenced at the end,
the registration time, and the CPU each process used (the simulator and every voter, from /proc), with its peak
RSS and the load average, so that the limit (controller or simulator) shows. Target: every run all registered,
0 late, 0 fenced. Not a timed assertion.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_quorum as bq  # noqa: E402  (sibling benchmark module)


def cpu_seconds(pid: int) -> float:
    """Return the user + system CPU seconds process `pid` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> int:
    """Return the peak resident memory of process `pid` (VmHWM), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


async def one_run(brokers: int, seconds: float, heartbeat_ms: int, partitions: int) -> dict:
    """Run the brokers against a fresh quorum holding `partitions` partitions; return the run's figures."""
    from kraftsman.controller.client.broker_sim import SimulatedBroker

    with bq.fresh_quorum() as (quorum, _):
        leader, client = await bq.leader_client(quorum)
        base = await bq.unfenced_brokers(quorum)          # CreateTopics needs unfenced brokers
        if partitions:
            await bq.partition_throughput(client, partitions)
        await client.close()
        pids = {f"voter {i}{' (leader)' if i == leader else ''}": p.pid for i, p in quorum.procs.items()}
        pids["simulator"] = os.getpid()
        before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        sims = [SimulatedBroker(10_000 + i, quorum.addresses(), quorum.cluster_id, heartbeat_interval_ms=heartbeat_ms,
                                fetch=False) for i in range(brokers)]
        started, failed = time.perf_counter(), 0
        for i in range(0, brokers, 50):
            results = await asyncio.gather(*(s.start() for s in sims[i:i + 50]), return_exceptions=True)
            failed += sum(isinstance(r, BaseException) for r in results)
        registered_in = time.perf_counter() - started
        load_at_start = os.getloadavg()[0]
        await asyncio.sleep(seconds)
        elapsed = time.perf_counter() - started
        result = {"registered": sum(s.broker_epoch >= 0 for s in sims), "failed": failed,
                  "registered_in": registered_in, "heartbeats": sum(s.heartbeats for s in sims),
                  "late": sum(s.late_heartbeats for s in sims), "errors": sum(s.errors for s in sims),
                  "fenced": sum(s.fenced for s in sims), "load": (load_at_start, os.getloadavg()[0]),
                  "cpu": {name: (cpu_seconds(pid) - before[name]) / elapsed for name, pid in pids.items()},
                  "rss": {name: peak_rss_mb(pid) for name, pid in pids.items() if name != "simulator"}}
        result["rss"]["simulator"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        await asyncio.gather(*(s.stop() for s in sims + base), return_exceptions=True)
        return result


def report(n: int, brokers: int, r: dict) -> None:
    verdict = "met" if r["registered"] == brokers and not r["late"] and not r["fenced"] else "NOT met"
    print(f"run {n}: {r['registered']}/{brokers} registered in {r['registered_in']:.1f} s ({r['failed']} failed), "
          f"{r['heartbeats']} heartbeats, {r['late']} late, {r['errors']} errors, {r['fenced']} fenced at the end "
          f"-> {verdict}; load average {r['load'][0]:.1f} -> {r['load'][1]:.1f}")
    print("       CPU (share of one core over the run) and peak RSS: " + ", ".join(
        f"{name} {share * 100:.0f}% {r['rss'].get(name, 0)} MiB" for name, share in r["cpu"].items()))


async def main(args) -> None:
    for n in range(1, args.runs + 1):
        report(n, args.brokers, await one_run(args.brokers, args.seconds, args.heartbeat_ms, args.partitions))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--heartbeat-ms", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=200_000,
                        help="partitions created before the brokers start (default: bench_quorum's 200,000)")
    asyncio.run(main(parser.parse_args(sys.argv[1:])))
