"""The anchors of the operator-path benchmarks (issue 32): runs measured as child processes, interleaved with
the JVM decode of the same records, so that every ratio comes from one run on a machine that others share.

- run(argv): one child with stdout to a file (or /dev/null); wall time, user + system CPU and that child's own
  peak RSS (os.wait4), and how many lines it printed.
- jvm_decode(files): the anchor: tests/bench/jvm/MetadataDecode.java (compiled once per source into a cache
  folder) decoding every record of the files into Java objects, CRC-32C checked, as a JVM decoder of Kafka's
  formats would; run with the default JVM settings of this machine.
- interleaved(rounds, anchor, work): anchor, work, anchor, work, ... anchor; each work run is set against the
  mean of the anchor runs on either side of it, and the median of those ratios is reported.
- load(): the 1-minute load average, printed beside every figure (the machine is shared).
Not a timed assertion anywhere: the benchmarks print.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
JAVA_SOURCE = HERE / "jvm" / "MetadataDecode.java"
MB = 1 << 20


@dataclass
class Run:
    """One child process's figures."""

    wall: float
    cpu: float
    rss: int
    lines: int = 0
    load: float = 0.0

    def __str__(self) -> str:
        return f"{self.wall:.2f} s wall, {self.cpu:.2f} s CPU, peak RSS {self.rss / MB:.0f} MiB"


def load() -> float:
    """Return the 1-minute load average."""
    return os.getloadavg()[0]


def run(argv: list[str], out: Path | None = None, count_lines: bool = False, cwd=None, env=None) -> Run:
    """Run argv once with stdout to `out` (or /dev/null); return its wall, CPU, peak RSS and lines printed."""
    target = open(out, "wb") if out is not None else open(os.devnull, "wb")
    with target:
        before = load()
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=target, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise SystemExit(f"{' '.join(map(str, argv))} exited {code}")
    lines = 0
    if count_lines and out is not None:
        with open(out, "rb") as f:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, lines, before)


def java_class_dir() -> Path:
    """Return the folder holding MetadataDecode.class, compiling the source the first time (per source hash)."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        raise SystemExit("the JVM anchor needs java and javac on PATH")
    digest = hashlib.sha256(JAVA_SOURCE.read_bytes()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"kraftsman-bench-jvm-{digest}"
    if not (folder / "MetadataDecode.class").exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-d", str(folder), str(JAVA_SOURCE)], check=True)
    return folder


def jvm_decode(files: list) -> Run:
    """Run the JVM anchor over `files` once."""
    return run(["java", "-cp", str(java_class_dir()), "MetadataDecode", *map(str, files)])


def interleaved(rounds: int, anchor, work) -> tuple[list[Run], list[Run], list[float]]:
    """Run anchor, work, anchor, work, ..., anchor (`rounds` work runs); return the anchor runs, the work runs
    and each work run's wall time as a ratio to the mean of the anchor runs around it."""
    anchors, works = [anchor()], []
    for _ in range(rounds):
        works.append(work())
        anchors.append(anchor())
    return anchors, works, [w.wall / ((a.wall + b.wall) / 2) for w, a, b in zip(works, anchors, anchors[1:])]


def cpu_ratios(anchors: list[Run], works: list[Run]) -> list[float]:
    """Return each work run's CPU as a ratio to the mean CPU of the anchor runs around it."""
    return [w.cpu / ((a.cpu + b.cpu) / 2) for w, a, b in zip(works, anchors, anchors[1:])]


def median(values) -> float:
    """Return the median."""
    return statistics.median(values)


def python() -> str:
    """Return this interpreter (the venv's)."""
    return sys.executable


def console_script(name: str, module: str) -> list[str]:
    """Return the argv that starts a console script (installed, else through its module's main)."""
    script = shutil.which(name)
    return [script] if script else [sys.executable, "-c", f"from {module} import main; main()"]
