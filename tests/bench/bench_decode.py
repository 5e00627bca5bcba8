"""Benchmark: decode a 1,010,000-record metadata log to Python values (issue: foundation).

Run: python tests/bench/bench_decode.py [--topics 10000 --partitions 100]
Prints records/s and MB/s of kraftsman's batch decoder, and its ratio to a plain reference loop over
the same records measured in the same run (so noisy machines can be compared).
"""
from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_metadata_log import generate  # noqa: E402  (sibling benchmark module)

from kraftsman.storage.log.segment import read_batches  # noqa: E402
from kraftsman.storage.records.metadata import decode_data_batch  # noqa: E402


def decode_all(path: Path) -> int:
    """Decode every record of every batch; return the record count."""
    count = 0
    for batch in read_batches(path):
        if not batch.is_control:
            count += len(decode_data_batch(batch))
    return count


def reference_loop(path: Path) -> int:
    """Touch every record value with the cheapest per-record Python work: a tuple of three ints."""
    count = 0
    for batch in read_batches(path):
        for record in batch.records():
            (record.offset, len(record.value), 0)
            count += 1
    return count


def timed(fn, path: Path) -> tuple[int, float]:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        n = fn(path)
        return n, time.perf_counter() - start
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "00000000000000000000.log"
        generate(path, topics=args.topics, partitions=args.partitions)
        size_mb = path.stat().st_size / 1e6
        n, decode_s = timed(decode_all, path)
        m, ref_s = timed(reference_loop, path)
    assert n == m
    print(f"records: {n:,}  file: {size_mb:.1f} MB")
    print(f"decode: {decode_s:.2f} s  {n / decode_s:,.0f} records/s  {size_mb / decode_s:.1f} MB/s")
    print(f"reference loop (records only, no decoding): {ref_s:.2f} s  {m / ref_s:,.0f} records/s")
    print(f"ratio decode/reference: {decode_s / ref_s:.2f}x")
    print(f"target: >= 250,000 records/s -> {'met' if n / decode_s >= 250_000 else 'NOT met'}")


if __name__ == "__main__":
    main()
