"""Benchmark FileLog, the on-disk metadata log: appends/s with and without an fsync per append, and
read throughput, each as a ratio to the raw baseline measured in the same run on the same disk.

Baselines: a loop of os.write + os.fsync of the same bytes (for append+flush), the same loop without
fsync (for plain appends), each run interleaved with the FileLog loop in blocks as the disk is
shared; and one os.pread per segment file (for reads: FileLog also builds one batch object per
batch, which dominates for small batches).

Run: python tests/bench/bench_metadata_log.py [--dir DIR] [--fsyncs N] [--appends N] [--size BYTES]
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from kraftsman.controller.raft import records as R
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.records.raft_values import Batch, Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId


def open_log(directory: Path) -> FileLog:
    return FileLog.open(directory, batch_type=Batch, segment_bytes=64 * 1024 * 1024,
                        snapshot_type=lambda end, epoch, data: Snapshot(SnapshotId(end, epoch), data))


def batches(n: int, size: int) -> list:
    """One-record data batches, built before timing (building is the core's cost, not the log's)."""
    return [R.data_batch([b"v" * size], i, 1, timestamp=1_700_000_000_000 + i) for i in range(n)]


def interleaved(root: Path, name: str, items: list, sync: bool, block: int) -> tuple[float, float]:
    """Return (raw os.write[+fsync]/s, FileLog append[+flush]/s), alternating blocks of `block` appends
    so that both see the same disk weather (other processes' fsyncs, dirty-page throttling)."""
    fd = os.open(root / f"raw-{name}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    log = open_log(root / f"log-{name}")
    raw_time = log_time = 0.0
    for lo in range(0, len(items), block):
        part = items[lo:lo + block]
        start = time.perf_counter()
        for batch in part:
            os.write(fd, batch.data)
            if sync:
                os.fsync(fd)
        mid = time.perf_counter()
        for batch in part:
            log.append(batch)
            if sync:
                log.flush()
        raw_time, log_time = raw_time + mid - start, log_time + time.perf_counter() - mid
    os.close(fd)
    log.flush()
    log.close()
    return len(items) / raw_time, len(items) / log_time


def read_rates(directory: Path, reps: int = 3) -> tuple[float, float, float]:
    """Return (MB/s reading every batch through FileLog, MB/s of one raw pread, seconds to reopen)."""
    start = time.perf_counter()
    log = open_log(directory)
    reopen = time.perf_counter() - start
    total = sum(s.size for s in log.segments)
    best_log = best_raw = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        got = log.read(log.start_offset, 1 << 62)
        best_log = min(best_log, time.perf_counter() - start)
        assert got[-1].next_offset == log.end_offset
        start = time.perf_counter()
        for seg in log.segments:
            os.pread(seg.fd, seg.size, 0)
        best_raw = min(best_raw, time.perf_counter() - start)
    log.close()
    return total / best_log / 1e6, total / best_raw / 1e6, reopen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="directory on the disk to measure (default: a temp dir)")
    parser.add_argument("--fsyncs", type=int, default=400, help="appends measured with one fsync each")
    parser.add_argument("--appends", type=int, default=100_000, help="appends measured without fsync")
    parser.add_argument("--size", type=int, default=100, help="record value bytes")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-metadata-log-", dir=args.dir))
    try:
        synced, plain = batches(args.fsyncs, args.size), batches(args.appends, args.size)
        rates = {}
        rates["raw_sync"], rates["log_sync"] = interleaved(root, "sync", synced, True, 10)
        rates["raw_plain"], rates["log_plain"] = interleaved(root, "plain", plain, False, 1000)
        log_mb, raw_mb, reopen = read_rates(root / "log-plain")
        per_batch = len(plain[0].data) / 1e6
        print(f"batch size {len(plain[0].data)} bytes; directory {root}; raw and FileLog runs interleaved "
              f"in blocks of 10 (fsync) and 1000 (no fsync) appends")
        print(f"append+flush (fsync each): {rates['log_sync']:10.0f}/s  raw write+fsync {rates['raw_sync']:10.0f}/s  "
              f"ratio {rates['log_sync'] / rates['raw_sync']:.2f}")
        print(f"append (no fsync):         {rates['log_plain']:10.0f}/s  raw write       {rates['raw_plain']:10.0f}/s  "
              f"ratio {rates['log_plain'] / rates['raw_plain']:.2f}")
        print(f"read all batches:          {log_mb:10.1f} MB/s  raw pread    {raw_mb:10.1f} MB/s  "
              f"ratio {log_mb / raw_mb:.3f}  ({log_mb / per_batch:.0f} batches/s, one object each)")
        print(f"reopen (recovery scan of {args.appends} batches): {reopen * 1000:.0f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
