"""Benchmark: kafka-metadata-shell on generated logs of 1,010,000 and 10,100,000 records, and on a small snapshot.

Run: python tests/bench/bench_metadata_shell.py [--keep DIR] [--sizes 10000x100,100000x100]
Measures, in one run, for each size (topics x partitions, the generator of gen_metadata_log.py):
- a plain read of the log file in 1 MiB blocks (the floor any loader pays; page cache warm, as for the shell);
- `kafka-metadata-shell --snapshot <log> ls /image/topics/byName`: wall time and the child's own peak RSS
  (os.wait4), and the wall time as a ratio to the plain read of the same file in the same run.
Targets (issue 20): 10.1M records in <= 6 s and <= 1 GB. Also `tree /` on a small real snapshot (target
< 300 ms) and `python -c pass` for scale. Logs are generated once per size under --keep DIR and reused.
Reports figures; never asserts on time.
"""
from __future__ import annotations

import argparse
import os
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
DEFAULT_SIZES = "10000x100,100000x100"
TARGET_SECONDS, TARGET_BYTES = 6.0, 1 << 30


def shell_command() -> list[str]:
    """Return the argv that starts kafka-metadata-shell (the installed script, else the module)."""
    script = shutil.which("kafka-metadata-shell")
    return [script] if script else [sys.executable, "-c", "from kraftsman.cli.shell.tool import main; main()"]


def measure(argv: list[str]) -> tuple[float, int, int]:
    """Run argv in a child; return (wall seconds, that child's peak RSS in bytes, lines it printed)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
        out.seek(0)
        return wall, usage.ru_maxrss * 1024, out.read().count(b"\n")


def plain_read(path: Path) -> float:
    """Return the seconds one read of the whole file in 1 MiB blocks takes."""
    start = time.perf_counter()
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
    return time.perf_counter() - start


def log_for(workdir: Path, topics: int, partitions: int) -> Path:
    """Return the generated log of this size under workdir, generating it the first time."""
    log = workdir / f"{topics}x{partitions}" / "00000000000000000000.log"
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        generate(log, topics, partitions)
    return log


def bench_size(workdir: Path, topics: int, partitions: int) -> None:
    """Print the plain read, then load + ls of one size, with ratios."""
    log = log_for(workdir, topics, partitions)
    plain_read(log)                                  # warm the page cache
    read = min(plain_read(log) for _ in range(3))
    wall, rss, lines = measure(shell_command() + ["--snapshot", str(log), "ls", "/image/topics/byName"])
    records = topics * (partitions + 1)
    print(f"{records:,} records ({log.stat().st_size / 2**20:.0f} MiB): plain read {read:.3f} s; "
          f"load + ls {wall:.2f} s = {wall / read:.1f}x the plain read, peak RSS {rss / 2**20:.0f} MiB "
          f"= {rss / log.stat().st_size:.2f}x the file; {lines} lines (expected {topics})"
          + (f"; targets <= {TARGET_SECONDS:.0f} s, <= {TARGET_BYTES >> 20} MiB" if records >= 10_000_000 else ""))


def bench_small() -> None:
    """Print `tree /` on a small real snapshot, best of 5."""
    snapshots = sorted(SMALL.glob("*.checkpoint")) if SMALL.is_dir() else []
    if snapshots:
        small = [measure(shell_command() + ["--snapshot", str(snapshots[-1]), "tree", "/"])[0] for _ in range(5)]
        print(f"tree / on a small snapshot: best {min(small) * 1000:.0f} ms of 5 (target < 300 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="TOPICSxPARTITIONS,... (default: %(default)s)")
    parser.add_argument("--keep", help="Directory to keep (and reuse) the generated logs in.")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="bench-metadata-shell-"))
    workdir.mkdir(parents=True, exist_ok=True)
    base = measure([sys.executable, "-c", "pass"])[0]
    print(f"python -c pass: {base * 1000:.0f} ms")
    for size in args.sizes.split(","):
        topics, partitions = (int(n) for n in size.split("x"))
        bench_size(workdir, topics, partitions)
    bench_small()
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
