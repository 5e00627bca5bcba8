"""Benchmark: `kafka-metadata-shell --directory` on a 10,100,000-record metadata log directory (issue 32).

Run: python tests/bench/bench_shell_directory.py [--topics 100000 --partitions 100] [--rounds 3] [--keep DIR]

The log of gen_metadata_log.py (topics * (partitions + 1) records) is cut into segments of at most
--segment-bytes (Kafka's metadata.log.segment.bytes default, 1 GiB) in `DIR/__cluster_metadata-0`, as a
controller rolls them. Measured in one run, interleaved: the JVM anchor (tests/bench/jvm/MetadataDecode.java
decoding every record of the same segments), then `--directory DIR ls /image/topics/byName`, then the anchor
again, ...; then `--snapshot` on the first segment file whole for comparison. Prints wall, CPU and the child's
peak RSS, each run's ratio to the anchor runs around it, and the load average. Targets: <= 6 s and <= 1 GB.
Not a timed assertion.
"""
from __future__ import annotations

import argparse
import shutil
import struct
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anchor  # noqa: E402  (sibling benchmark module)
from gen_metadata_log import generate  # noqa: E402

TARGET_SECONDS, TARGET_BYTES = 6.0, 1 << 30
_HEAD = struct.Struct(">qi")


def split_segments(log: Path, folder: Path, segment_bytes: int) -> list[Path]:
    """Copy `log` into segment files of at most `segment_bytes` (whole batches) named by their base offsets."""
    folder.mkdir(parents=True, exist_ok=True)
    segments, out = [], None
    with open(log, "rb") as f:
        while head := f.read(_HEAD.size):
            base, length = _HEAD.unpack(head)
            if out is None or out.tell() + len(head) + length > segment_bytes:
                if out is not None:
                    out.close()
                segments.append(folder / f"{base:020d}.log")
                out = open(segments[-1], "wb")
            out.write(head + f.read(length))
    if out is not None:
        out.close()
    return segments


def prepare(workdir: Path, topics: int, partitions: int, segment_bytes: int) -> tuple[Path, list[Path]]:
    """Return (the log directory, its segments), generating them the first time."""
    directory = workdir / f"dir-{topics}x{partitions}"
    pdir = directory / "__cluster_metadata-0"
    segments = sorted(pdir.glob("*.log"))
    if not segments:
        log = workdir / f"{topics}x{partitions}.log"
        generate(log, topics, partitions)
        segments = split_segments(log, pdir, segment_bytes)
        log.unlink()
    return directory, segments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--segment-bytes", type=int, default=1 << 30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", help="a directory to keep (and reuse) the generated log in")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="bench-shell-directory-"))
    workdir.mkdir(parents=True, exist_ok=True)
    directory, segments = prepare(workdir, args.topics, args.partitions, args.segment_bytes)
    records = args.topics * (args.partitions + 1)
    size = sum(s.stat().st_size for s in segments)
    shell = anchor.console_script("kafka-metadata-shell", "kraftsman.cli.shell.tool")
    out = workdir / "ls.out"
    print(f"{records:,} records, {size / anchor.MB:.0f} MiB in {len(segments)} segment(s); load average "
          f"{anchor.load():.2f}")
    anchors, works, ratios = anchor.interleaved(
        args.rounds, lambda: anchor.jvm_decode(segments),
        lambda: anchor.run(shell + ["--directory", str(directory), "ls", "/image/topics/byName"], out, True))
    for a in anchors:
        print(f"  JVM decode (anchor): {a}  [load {a.load:.2f}]")
    for w, ratio in zip(works, ratios):
        print(f"  --directory ls:      {w}, {w.lines:,} lines (expected {args.topics:,}); {ratio:.2f}x the anchor "
              f"[load {w.load:.2f}]")
    best = min(works, key=lambda w: w.wall)
    print(f"--directory: median {anchor.median(ratios):.2f}x the JVM decode; best {best.wall:.2f} s, peak RSS "
          f"{max(w.rss for w in works) / anchor.MB:.0f} MiB (targets <= {TARGET_SECONDS:.0f} s, "
          f"<= {TARGET_BYTES // anchor.MB} MiB)")
    snap = anchor.run(shell + ["--snapshot", str(segments[0]), "ls", "/image/topics/byName"], out, True)
    print(f"for comparison, --snapshot of the first segment ({segments[0].stat().st_size / anchor.MB:.0f} MiB): "
          f"{snap}, {snap.lines:,} lines [load {snap.load:.2f}]")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
