"""Benchmark: `kafka-dump-log` on a generated 1,010,000-record metadata log (issue 4).

Run: python tests/bench/bench_dump_log.py [--topics 10000 --partitions 100 --repeat 1 --log PATH]

Each command runs as a real subprocess (console script, stdout to /dev/null) inside a tiny wrapper
process that reports the child's wall time, user/sys CPU and peak RSS (resource.getrusage with
RUSAGE_CHILDREN), so every figure belongs to one run. Prints records/s, the ratio to `python -c pass`
measured in the same run, and the comparison with Kafka 3.9's own tool on the reference machine
(about 18 s wall, 12.5 s user CPU, 280 MB resident for the same file). Not a timed assertion.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_metadata_log import generate  # noqa: E402  (sibling benchmark module)

KAFKA_WALL_S, KAFKA_USER_S, KAFKA_RSS_MB = 18.0, 12.5, 280.0
_WRAPPER = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"status": status, "wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024}))
"""


def measure(argv: list[str], cwd: Path) -> dict:
    """Run argv once in a fresh wrapper process; return status, wall, user, sys and rss_mb."""
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], cwd=cwd, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def best_of(argv: list[str], cwd: Path, repeat: int) -> dict:
    """Return the run with the lowest wall time out of `repeat` runs (peak RSS is the max seen)."""
    runs = [measure(argv, cwd) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["wall"])
    return dict(best, rss_mb=max(r["rss_mb"] for r in runs))


def report(label: str, r: dict, records: int, baseline: dict) -> None:
    print(f"{label}:\n  wall {r['wall']:.2f} s  user {r['user']:.2f} s  sys {r['sys']:.2f} s  "
          f"peak RSS {r['rss_mb']:.0f} MB  exit {r['status']}\n"
          f"  {records / r['wall']:,.0f} records/s (wall)  {records / max(r['user'], 1e-9):,.0f} records/s (user CPU)\n"
          f"  x{r['wall'] / baseline['wall']:.0f} of `python -c pass`  |  vs Kafka 3.9: wall "
          f"{KAFKA_WALL_S / r['wall']:.1f}x faster, user CPU {KAFKA_USER_S / max(r['user'], 1e-9):.1f}x less, "
          f"RSS {r['rss_mb']:.0f} MB vs {KAFKA_RSS_MB:.0f} MB (target < 200 MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--log", type=Path, help="reuse this generated log instead of writing a new one")
    args = parser.parse_args()
    tool = shutil.which("kafka-dump-log")
    if tool is None:
        sys.exit("kafka-dump-log is not on PATH (pip install -e . first)")
    with tempfile.TemporaryDirectory() as tmp:
        log = args.log or generate(Path(tmp) / "00000000000000000000.log", args.topics, args.partitions)
        records = args.topics * (args.partitions + 1)
        print(f"log: {log} ({log.stat().st_size / 1e6:.1f} MB, {records:,} records)")
        baseline = best_of([sys.executable, "-c", "pass"], log.parent, 3)
        print(f"python -c pass: {baseline['wall'] * 1000:.0f} ms")
        for label, extra in (("--cluster-metadata-decoder", []),
                             ("--cluster-metadata-decoder --skip-record-metadata", ["--skip-record-metadata"])):
            argv = [tool, "--cluster-metadata-decoder", *extra, "--files", log.name]
            report(label, best_of(argv, log.parent, args.repeat), records, baseline)
        startup = best_of([tool, "--version"], log.parent, 3)
        print(f"start-up (kafka-dump-log --version): {startup['wall'] * 1000:.0f} ms "
              f"(python -c pass: {baseline['wall'] * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
