"""Benchmark: kafka-metadata-shell's live mode on a real 3-voter quorum holding 100,000 partitions.

Run: python tests/bench/bench_live_shell.py [--partitions 100000] [--per-topic 100] [--runs 3]
For each layout of the quorum's log it starts a fresh quorum on 127.0.0.1 (3 simulated brokers),
creates the partitions with CreateTopics, then measures, in one run, the wall time from process
start to the first answer of
  kafka-metadata-shell --bootstrap-controller <quorum> ls /image/topics/byName   (target: < 3 s)
against `kafka-metadata-shell --directory <copy of the leader's log> ls ...` on the same records
and `python -c pass`. Layouts: `log` (no snapshot: the shell replays the log with Fetch) and
`snapshot` (snapshots every 2 MB: the shell downloads the newest with FetchSnapshot, then fetches
the rest). The two outputs must be equal. Not a timed assertion in the test suite.
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kraftsman.cli.demo.local_quorum import LocalQuorum
from kraftsman.controller.client.broker_sim import SimulatedBroker
from kraftsman.controller.client.controller_client import ActiveControllerClient, find_leader
from kraftsman.storage.log.snapshot import list_snapshots
from kraftsman.storage.protocol import codec

Create = codec.message_class("CreateTopicsRequest")
NOT_CONTROLLER, TOPIC_ALREADY_EXISTS = 41, 36
SETTINGS = {"controller.quorum.election.timeout.ms": "1000", "controller.quorum.fetch.timeout.ms": "2000",
            "broker.session.timeout.ms": "9000", "broker.heartbeat.interval.ms": "2000"}
LAYOUTS = {"log": {"metadata.log.max.record.bytes.between.snapshots": str(1 << 30)},
           "snapshot": {"metadata.log.max.record.bytes.between.snapshots": str(2 << 20)}}


def _shell() -> list[str]:
    script = shutil.which("kafka-metadata-shell")
    return [script] if script else [sys.executable, "-c", "from kraftsman.cli.shell.tool import main; main()"]


def timed(argv: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])}... exited {done.returncode}: {done.stderr.strip()}")
    return elapsed, done.stdout


async def populate(quorum: LocalQuorum, partitions: int, per_topic: int) -> float:
    await find_leader(quorum.addresses())
    sims = [SimulatedBroker(b, quorum.addresses(), quorum.cluster_id, fetch=False) for b in (1, 2, 3)]
    for sim in sims:
        await sim.start()
    while any(s.fenced for s in sims):
        await asyncio.sleep(0.1)
    client = ActiveControllerClient(list(quorum.addresses().values()), timeout_ms=60_000)
    names = [f"t{i:05d}" for i in range(partitions // per_topic)]
    started = time.perf_counter()
    for i in range(0, len(names), 20):
        await create(client, names[i:i + 20], per_topic)
    created = time.perf_counter() - started
    await client.close()
    for sim in sims:
        await sim.stop()
    return created


async def create(client, names: list[str], per_topic: int, replication_factor: int = 1) -> None:
    """Create topics, retrying through a leader change (NOT_CONTROLLER); an existing topic is done."""
    for _attempt in range(100):
        body = Create(topics=[Create.CreatableTopic(name=n, num_partitions=per_topic,
                                                    replication_factor=replication_factor)
                              for n in names], timeout_ms=60_000, validate_only=False)
        response = await client.request("CreateTopics", 7, body)
        errors = [t.error_code for t in response.topics if t.error_code not in (0, TOPIC_ALREADY_EXISTS)]
        if not errors:
            return
        if set(errors) != {NOT_CONTROLLER}:
            raise SystemExit(f"CreateTopics failed: {errors[:5]}")
        await asyncio.sleep(0.1)
    raise SystemExit("CreateTopics kept answering NOT_CONTROLLER")


def measure(layout: str, args) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-live-shell-") as tmp:
        quorum = LocalQuorum(Path(tmp) / "quorum", 3, extra=SETTINGS | LAYOUTS[layout])
        quorum.format()
        quorum.start()
        try:
            quorum.wait_listening()
            created = asyncio.run(populate(quorum, args.partitions, args.per_topic))
            time.sleep(1)
            leader = asyncio.run(find_leader(quorum.addresses()))[0]
            copy = Path(tmp) / "copy" / "__cluster_metadata-0"
            shutil.copytree(quorum.partition_dir(leader), copy)
            report(layout, quorum, copy, created, args)
        finally:
            quorum.stop()


def report(layout: str, quorum: LocalQuorum, copy: Path, created: float, args) -> None:
    live_argv = _shell() + ["--bootstrap-controller", quorum.bootstrap(), "ls", "/image/topics/byName"]
    file_argv = _shell() + ["--directory", str(copy.parent), "ls", "/image/topics/byName"]
    live = [timed(live_argv) for _ in range(args.runs)]
    files = [timed(file_argv) for _ in range(args.runs)]
    python = statistics.median(timed([sys.executable, "-c", "pass"])[0] for _ in range(5))
    if live[-1][1] != files[-1][1]:
        raise SystemExit("the live shell and --directory disagree")
    live_s, file_s = statistics.median(t for t, _ in live), statistics.median(t for t, _ in files)
    snapshots = list_snapshots(copy)
    print(f"[{layout}] {args.partitions:,} partitions in {len(live[-1][1].split()):,} topics (created in "
          f"{created:.1f} s); leader log: {sum(f.stat().st_size for f in copy.iterdir()) / 1e6:.1f} MB, "
          f"{len(snapshots)} snapshot(s)")
    print(f"[{layout}] live --bootstrap-controller, start to first answer: median {live_s:.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t, _ in live)}; target < 3 s)")
    print(f"[{layout}] --directory on a copy of the same log: median {file_s:.2f} s; "
          f"live / directory = {live_s / file_s:.2f}x; python -c pass {python * 1e3:.0f} ms")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--per-topic", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--layout", choices=[*LAYOUTS, "both"], default="both")
    args = parser.parse_args(argv)
    for layout in LAYOUTS if args.layout == "both" else [args.layout]:
        measure(layout, args)


if __name__ == "__main__":
    main(sys.argv[1:])
