"""Benchmark: kafka-metadata-shell on the 1,010,000-record generated log, and on a small snapshot.

Run: python tests/bench/bench_metadata_shell.py [--topics 10000 --partitions 100] [--keep DIR]
Measures, in one run, the wall time and peak memory (ru_maxrss of the child) of
  kafka-metadata-shell --snapshot <log> ls /image/topics/byName   (target: < 10 s, < 1.5 GB)
  kafka-metadata-shell --snapshot <small snapshot> tree /          (target: < 300 ms)
and, for scale, `python -c pass` on the same machine. Not a timed assertion in the test suite.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_metadata_log import generate  # noqa: E402  (sibling benchmark module)

REPO = Path(__file__).resolve().parents[2]
SMALL = REPO.parent / "shared/fixtures/kraft-real/data/kafka-temp/data/kafka1/__cluster_metadata-0"


def shell_command() -> list[str]:
    script = shutil.which("kafka-metadata-shell")
    return [script] if script else [sys.executable, "-c", "from kraftsman.cli.metadata_shell import main; main()"]


def measure(argv: list[str]) -> tuple[float, int, bytes]:
    """Run argv in a child; return (wall seconds, peak RSS of the largest child so far, stdout).

    ru_maxrss of RUSAGE_CHILDREN is the largest child's peak, so the big run is measured before any
    other large child.
    """
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, check=True)
    wall = time.perf_counter() - start
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=10000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--keep", help="Directory to keep (and reuse) the generated log in.")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="bench-metadata-shell-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "00000000000000000000.log"
    if not log.exists():
        generate(log, args.topics, args.partitions)
    base, _, _ = measure([sys.executable, "-c", "pass"])
    wall, rss, out = measure(shell_command() + ["--snapshot", str(log), "ls", "/image/topics/byName"])
    lines = out.count(b"\n")
    print(f"python -c pass: {base * 1000:.0f} ms")
    print(f"ls /image/topics/byName on {log.stat().st_size >> 20} MB, "
          f"{args.topics * (args.partitions + 1)} records: {lines} lines, {wall:.2f} s wall, "
          f"peak {rss / 2**20:.0f} MB  (targets: {args.topics} lines, < 10 s, < 1536 MB)")
    snapshots = sorted(SMALL.glob("*.checkpoint")) if SMALL.is_dir() else []
    if snapshots:
        small = [measure(shell_command() + ["--snapshot", str(snapshots[-1]), "tree", "/"])[0] for _ in range(5)]
        print(f"tree / on a small snapshot: best {min(small) * 1000:.0f} ms of 5 (target < 300 ms), "
              f"{min(small) / base:.1f}x python -c pass")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
