"""Benchmark: cold start of kraftsman's console scripts against `python -c pass` in the same run.

Run: python tests/bench/bench_startup.py [--runs 10]
Targets (issues): kafka-storage random-uuid / format under 150 ms wall; every --help under 150 ms.
Prints the median wall time of each command, its ratio to the bare interpreter, and the verdict.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 150


def median_ms(cmd: list[str], runs: int) -> float:
    """Return the median wall time of `cmd` over `runs` runs, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def commands(tmp: Path) -> dict[str, list[str]]:
    """Return the command lines to time (console scripts from this environment)."""
    bindir = Path(sys.executable).parent
    script = lambda name: str(bindir / name) if (bindir / name).exists() else shutil.which(name) or name
    config = tmp / "server.properties"
    config.write_text(f"process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
                      f"controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://:9093\n"
                      f"log.dirs={tmp / 'data'}\n")
    return {
        "kafka-storage random-uuid": [script("kafka-storage"), "random-uuid"],
        "kafka-storage format": [script("kafka-storage"), "format", "-c", str(config), "-t",
                                 "MkU3OEVBNTcwNTJENDM2Qg", "-g"],
        "kafka-storage --help": [script("kafka-storage"), "--help"],
        "kafka-dump-log --help": [script("kafka-dump-log"), "--help"],
        "kafka-metadata-shell --help": [script("kafka-metadata-shell"), "--help"],
        "kraftsman --help": [script("kraftsman"), "--help"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    base = median_ms([sys.executable, "-c", "pass"], args.runs)
    print(f"python -c pass: {base:.0f} ms (median of {args.runs})")
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in commands(Path(tmp)).items():
            ms = median_ms(cmd, args.runs)
            verdict = "met" if ms < TARGET_MS else "NOT met"
            print(f"{name:<30} {ms:6.0f} ms  ratio {ms / base:4.2f}x  (< {TARGET_MS} ms: {verdict})")
    print(f"load average: {os.getloadavg()[0]:.2f} (other work on the machine inflates both columns)")


if __name__ == "__main__":
    main()
