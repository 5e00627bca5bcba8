"""Benchmark: the shell's whole `tree /` of the 1,010,000-record generated log into a file (issue 32).

Run: python tests/bench/bench_shell_tree_file.py [--topics 10000 --partitions 100] [--rounds 3] [--keep DIR]

In one run, interleaved: the JVM anchor (tests/bench/jvm/MetadataDecode.java decoding every record of the same
file), then `kafka-metadata-shell --snapshot LOG tree /` with stdout to a file (4.1M lines: every partition under
byId and byName), then the anchor again, ... Prints wall, CPU and the child's peak RSS of each run, each tree run's
wall and CPU as ratios to the anchor runs around it (target <= 12x), and the load average. Not a timed assertion.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anchor  # noqa: E402  (sibling benchmark module)
from gen_metadata_log import generate  # noqa: E402

TARGET = 12.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", help="a directory to keep (and reuse) the generated log in")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="bench-shell-tree-file-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"{args.topics}x{args.partitions}" / "00000000000000000000.log"
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        generate(log, args.topics, args.partitions)
    shell = anchor.console_script("kafka-metadata-shell", "kraftsman.cli.shell.tool")
    out = workdir / "tree.txt"
    print(f"log: {log} ({log.stat().st_size / anchor.MB:.0f} MiB, {args.topics * (args.partitions + 1):,} records); "
          f"load average {anchor.load():.2f}")
    anchors, works, ratios = anchor.interleaved(
        args.rounds, lambda: anchor.jvm_decode([log]),
        lambda: anchor.run(shell + ["--snapshot", str(log), "tree", "/"], out, True))
    for a in anchors:
        print(f"  JVM decode (anchor): {a}  [load {a.load:.2f}]")
    cpu = anchor.cpu_ratios(anchors, works)
    for w, ratio, c in zip(works, ratios, cpu):
        print(f"  tree / > file:       {w}, {w.lines:,} lines; {ratio:.1f}x the anchor's wall, {c:.1f}x its CPU "
              f"[load {w.load:.2f}]")
    print(f"tree / to a file: median {anchor.median(ratios):.1f}x the JVM decode's wall (target <= {TARGET:.0f}x), "
          f"{anchor.median(cpu):.1f}x its CPU; peak RSS {max(w.rss for w in works) / anchor.MB:.0f} MiB")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
