"""Benchmark: kafka-cluster's reads (health, describe-brokers, wait, health --watch) on quorums holding 20,000,
200,000 and 1,000,000 partitions, each as a ratio to an anchor measured in the same run (issue 32, rows 1-2).

Run: python tests/bench/bench_cluster_reads.py [--sizes 20000,200000,1000000] [--runs 3] [--voters 1]
                                               [--keep DIR] [--watch-checks 6] [--before DIR]

For each size a quorum on 127.0.0.1 (one voter unless --voters) gets three simulated brokers (101-103,
heartbeating throughout) and that many partitions (topics of 100 partitions, replication factor 3) through
CreateTopics, as an operator's cluster grows; the controllers snapshot on their own, so a reader finds a snapshot
and a log. With --keep DIR the quorum's directories are kept in DIR/<size> and used again by later runs.

Each command runs as a real process (stdout to a file) and the parent takes its wall time and its own peak RSS
(os.wait4). The anchor is one `kafka-cluster cluster-id --bootstrap-controller` (a single request: start-up,
connection, answer); anchors and commands are interleaved, `--runs` times each, and each ratio is the median of
command / anchor. `health --watch --interval 0.2` runs once per size (its text into a pipe): each check after the
first is timed from the arrival of the previous block to the next, minus the interval, against the anchor's median.
With --before DIR each command also runs from an older checkout (PYTHONPATH=DIR), interleaved with the current one
in the same run and against the same quorum, so both face the same load.
Goals: health 200k <= 4x; 1M <= 10x and <= 300 MiB; watch checks after the first <= 2x; describe-brokers and
wait <= 2x. Not a timed assertion in the test suite; the figures depend on the machine's load, printed with them.
"""
from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_live_shell import create  # noqa: E402  (sibling benchmark module)

from kraftsman.cli.demo.local_quorum import LocalQuorum  # noqa: E402
from kraftsman.controller.client.broker_sim import SimulatedBroker  # noqa: E402
from kraftsman.controller.client.controller_client import ActiveControllerClient, find_leader  # noqa: E402
from kraftsman.storage.protocol.uuids import Uuid  # noqa: E402
from tests.loop_thread import LoopThread  # noqa: E402

BROKERS = (101, 102, 103)
PER_TOPIC = 100
# a long broker session: a controller busy loading a million partitions must not fence the brokers (each fence
# shrinks every ISR it is in, and a kept quorum's log would grow with every run)
SETTINGS = {"controller.quorum.election.timeout.ms": "1000", "controller.quorum.fetch.timeout.ms": "2000",
            "broker.session.timeout.ms": "300000", "broker.heartbeat.interval.ms": "1000"}
GOALS = {"health": {200_000: 4.0, 1_000_000: 10.0}, "describe-brokers": 2.0, "wait": 2.0, "watch": 2.0}
POPULATED, INCARNATIONS = "populated", "incarnations.json"


def kafka_cluster(*argv: str) -> list[str]:
    """Return the argv running kafka-cluster (the installed script, else the module)."""
    script = shutil.which("kafka-cluster")
    return ([script] if script else [sys.executable, "-m", "kraftsman.cli.cluster.tool"]) + list(argv)


def run_once(argv: list[str], env=None) -> tuple[float, float, int]:
    """Run argv once (in `env`, else this process's environment); return (wall seconds, its peak RSS in MiB, exit
    status)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def configure(quorum: LocalQuorum) -> None:
    """Write each node's server.properties (new ports) over kept directories, without formatting them again."""
    for node_id in quorum.ids:
        text = "".join(f"{k}={v}\n" for k, v in quorum.properties(node_id).items())
        quorum.config_path(node_id).write_text(text)


async def populate(quorum: LocalQuorum, partitions: int) -> float:
    """Create `partitions` partitions in topics of PER_TOPIC (replication factor 3); return the seconds taken."""
    client = ActiveControllerClient(list(quorum.addresses().values()), timeout_ms=120_000)
    names = [f"t{i:06d}" for i in range(partitions // PER_TOPIC)]
    started = time.perf_counter()
    for i in range(0, len(names), 20):
        await create(client, names[i:i + 20], PER_TOPIC, replication_factor=3)
    await client.close()
    return time.perf_counter() - started


class Cluster:
    """A quorum with three heartbeating simulated brokers and `size` partitions."""

    def __init__(self, base: Path, size: int, voters: int):
        self.base, self.size = base, size
        self.quorum = LocalQuorum(base, voters, extra=SETTINGS)
        self.loop = LoopThread("bench-brokers")
        self.sims: list[SimulatedBroker] = []

    def __enter__(self) -> "Cluster":
        if (self.base / POPULATED).exists():
            configure(self.quorum)
        else:
            shutil.rmtree(self.base, ignore_errors=True)
            self.quorum.format()
        self.quorum.start()
        try:
            return self._ready()
        except BaseException:
            self.__exit__()
            raise

    def _ready(self) -> "Cluster":
        self.quorum.wait_listening(120)
        self.loop.run(find_leader(self.quorum.addresses()), timeout=300)
        self.sims = [SimulatedBroker(b, self.quorum.addresses(), self.quorum.cluster_id, fetch=False,
                                     heartbeat_interval_ms=1000, timeout_ms=300_000) for b in BROKERS]
        self._register()
        deadline = time.monotonic() + 300
        while any(s.fenced for s in self.sims) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not (self.base / POPULATED).exists():
            took = self.loop.run(populate(self.quorum, self.size), timeout=24 * 3600)
            print(f"  created {self.size:,} partitions in {took:.0f} s")
            (self.base / POPULATED).write_text(str(self.size))
        return self

    def _register(self) -> None:
        """Register the brokers, a kept quorum's with their incarnation of the previous run: a broker that comes back
        as itself is not fenced, so no run shrinks every partition's ISR (the log holds the same records each run)."""
        kept = self.base / INCARNATIONS
        known = json.loads(kept.read_text()) if kept.exists() else {}
        for sim in self.sims:
            if str(sim.broker_id) in known:
                sim.incarnation_id = Uuid(bytes.fromhex(known[str(sim.broker_id)]))
            self.loop.run(sim.start(), timeout=900)
            if sim.broker_epoch < 0 and self.loop.run(sim.restart(clean=False, timeout_s=60), timeout=300):
                raise SystemExit(f"broker {sim.broker_id} could not register")
        kept.write_text(json.dumps({str(s.broker_id): bytes(s.incarnation_id).hex() for s in self.sims}))

    def __exit__(self, *exc) -> None:
        for sim in self.sims:
            try:
                self.loop.run(sim.stop())
            except Exception:  # noqa: BLE001 - stopping a benchmark's brokers must not hide its figures
                pass
        self.loop.close()
        self.quorum.stop()


def interleaved(commands: dict[str, list[str]], anchor: list[str], runs: int, envs: dict) -> dict[str, dict]:
    """Run anchor, then each command under each env (label -> environment), `runs` times over; return per
    (command, label) its walls, ratios to the anchor just before it, peak RSS and exit statuses."""
    out = {(name, label): {"walls": [], "ratios": [], "rss": [], "status": set()}
           for name in commands for label in envs}
    anchors = []
    run_once(anchor)                                     # warm the file cache and the interpreter's bytecode
    for _ in range(runs):
        for (name, label), row in out.items():
            a = run_once(anchor)[0]
            wall, rss, status = run_once(commands[name], envs[label])
            anchors.append(a)
            row["walls"].append(wall)
            row["ratios"].append(wall / a)
            row["rss"].append(rss)
            row["status"].add(status)
    return {"anchor": anchors, "rows": out}


def watch_checks(argv: list[str], checks: int, interval: float, env=None) -> tuple[list[float], float]:
    """Run `health --watch` until `checks` blocks arrived; return each check's seconds (arrival gaps minus the
    interval; the first from the start) and the process's peak RSS in MiB."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    arrivals, buffer = [], b""
    deadline = time.monotonic() + 1800
    while len(arrivals) < checks and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if not ready:
            continue
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            break
        buffer += chunk
        while b"Healthy:" in buffer:                     # one text block per check, each opening with it
            _, buffer = buffer.split(b"Healthy:", 1)
            arrivals.append(time.perf_counter())
    proc.send_signal(signal.SIGINT)
    _, _, usage = os.wait4(proc.pid, 0)
    gaps = [arrivals[0] - start] + [b - a - interval for a, b in zip(arrivals, arrivals[1:])] if arrivals else []
    return gaps, usage.ru_maxrss / 1024


def bench_size(base: Path, size: int, args) -> None:
    envs = {"now": None} | ({"before": os.environ | {"PYTHONPATH": str(args.before)}} if args.before else {})
    with Cluster(base, size, args.voters) as cluster:
        bootstrap = cluster.quorum.bootstrap()
        anchor = kafka_cluster("cluster-id", "-C", bootstrap)
        commands = {"health": kafka_cluster("health", "-C", bootstrap),
                    "describe-brokers": kafka_cluster("describe-brokers", "-C", bootstrap),
                    "wait": kafka_cluster("wait", "-C", bootstrap, "--id", str(BROKERS[0]), "--state", "unfenced")}
        results = interleaved(commands, anchor, args.runs, envs)
        watch = {label: watch_checks(kafka_cluster("health", "-C", bootstrap, "--watch", "--interval", "0.2"),
                                     args.watch_checks, 0.2, env) for label, env in envs.items()}
    report(size, args, results, watch)


def report(size: int, args, results: dict, watch: dict) -> None:
    """Print each command's median ratio to the anchor, its runs, peak RSS and exit statuses."""
    anchor_s = statistics.median(results["anchor"])
    load = os.getloadavg()
    print(f"{size:,} partitions ({args.voters} voter(s)); anchor cluster-id: median {anchor_s:.3f} s; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for (name, label), row in results["rows"].items():
        goal = GOALS[name].get(size) if isinstance(GOALS[name], dict) else GOALS[name]
        print(f"  {name + ' (' + label + ')':<26} median {statistics.median(row['walls']):.3f} s = "
              f"{statistics.median(row['ratios']):.2f}x the anchor (runs {', '.join(f'{r:.2f}' for r in row['ratios'])})"
              f"; peak RSS {max(row['rss']):.0f} MiB; exit {sorted(row['status'])}"
              + (f"; goal <= {goal:g}x" if goal else ""))
    for label, (gaps, rss) in watch.items():
        later = gaps[1:]
        if later:
            print(f"  {'health --watch (' + label + ')':<26} first check {gaps[0]:.3f} s; later checks median "
                  f"{statistics.median(later):.3f} s = {statistics.median(later) / anchor_s:.2f}x the anchor (max "
                  f"{max(later):.3f} s); peak RSS {rss:.0f} MiB; goal <= {GOALS['watch']:g}x")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,200000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--voters", type=int, default=1)
    parser.add_argument("--watch-checks", type=int, default=6)
    parser.add_argument("--keep", type=Path, default=None, help="keep each size's quorum in DIR/<size> and use it again")
    parser.add_argument("--before", type=Path, default=None,
                        help="also run each command with PYTHONPATH=DIR (a directory whose kraftsman/ holds an older "
                             "checkout's cli, controller, storage and shell), interleaved in the same run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-cluster-reads-") as tmp:
        root = args.keep or Path(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            bench_size(root / str(size), size, args)


if __name__ == "__main__":
    main(sys.argv[1:])
