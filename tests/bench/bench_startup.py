"""Benchmark: cold start of kraftsman's console scripts against `python -c pass` in the same run.

Run: python tests/bench/bench_startup.py [--runs 10]
Targets (issues): kafka-storage random-uuid / format under 150 ms wall; every --help under 100 ms (issue 19).
Prints the median wall time of each command, its ratio to the bare interpreter, and the verdict.
Every command and sub-command registered in kraftsman.cli.docs.pages is timed with --help; `format` writes
a fresh directory each run. Children run with bytecode writing on (PYTHONDONTWRITEBYTECODE unset)
after one warm-up run, as an installed wheel has compiled .pyc files and a warm schema cache.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 150        # kafka-storage random-uuid / format
HELP_TARGET_MS = 100   # every --help (issue 19: the median, against `python -c pass` in the same run)


def median_ms(cmd: list[str], runs: int, fresh: Path | None = None) -> tuple[float, float, float]:
    """Return the median wall, median CPU (user + system) and minimum wall times of `cmd` over `runs` runs
    after a warm-up, in ms (on a busy machine the minimum is the least disturbed run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    walls, cpus = [], []
    for i in range(runs + 1):
        if fresh is not None:
            shutil.rmtree(fresh, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i:
            walls.append((time.perf_counter() - start) * 1000)
            cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return statistics.median(walls), statistics.median(cpus), min(walls)


def commands(tmp: Path) -> dict[str, list[str]]:
    """Return the command lines to time (console scripts from this environment)."""
    bindir = Path(sys.executable).parent

    def script(name: str) -> str:
        return str(bindir / name) if (bindir / name).exists() else shutil.which(name) or str(bindir / name)
    config = tmp / "server.properties"
    config.write_text(f"process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
                      f"controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://:9093\n"
                      f"log.dirs={tmp / 'data'}\n")
    timed = {
        "kafka-storage random-uuid": [script("kafka-storage"), "random-uuid"],
        "kafka-storage format": [script("kafka-storage"), "format", "-c", str(config), "-t",
                                 "MkU3OEVBNTcwNTJENDM2Qg"],
    }
    from kraftsman.cli.docs import pages as docs

    for command in docs.commands():
        for path in docs.command_paths(command):
            timed[" ".join([command.name, *path, "--help"])] = [script(command.name), *path, "--help"]
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    base, base_cpu, base_min = median_ms([sys.executable, "-c", "pass"], args.runs)
    print(f"python -c pass: {base:.0f} ms wall (min {base_min:.0f}), {base_cpu:.0f} ms CPU (medians of {args.runs})")
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in commands(Path(tmp)).items():
            if not Path(cmd[0]).exists():
                print(f"{name:<42} skipped: {cmd[0]} is not installed (pip install -e . again)")
                continue
            ms, cpu, low = median_ms(cmd, args.runs, Path(tmp) / "data" if name.endswith(" format") else None)
            target = HELP_TARGET_MS if name.endswith("--help") else TARGET_MS
            verdict = "met" if ms < target else "NOT met"
            print(f"{name:<42} {ms:4.0f} ms  ratio {ms / base:4.2f}x  min {low:4.0f} ms ({low / base_min:4.2f}x)"
                  f"  CPU {cpu:4.0f} ms (+{cpu - base_cpu:3.0f})  (< {target} ms: {verdict})")
    print(f"load average: {os.getloadavg()[0]:.2f} (other work on the machine inflates both columns)")


if __name__ == "__main__":
    main()
