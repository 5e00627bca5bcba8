"""Benchmark: the Spark pipeline against a single-process decode of the same files (issue 9).

Run: python tests/bench/bench_pipeline.py [--segments 20 --topics 500 --partitions 100 --master 'local[*]']

Generates `segments` metadata log segments with tests/bench/gen_metadata_log.py (topics * (partitions + 1)
records each: 20 x 50,500 = 1,010,000 records by default), then measures in one run:
- single: the workers' per-file function (cli/pipeline/arrow_tables.decode_arrow: the pure decoder's
  rows of every table gathered into Arrow batches) over every file in this one process, garbage
  collection paused as the workers do; also the decoder alone (row tuples, no Arrow);
- session: the SparkSession start (excluded from the job time);
- job: `run_job` wall time, every table written as Parquet, with its phases: "decoding" (the workers
  decode every file once and write records/batches/errors) and "writing derived tables" (Spark SQL).
Prints the figures, the ratio single / job (target >= 1.8 on 2 cores) and the ratio single / decoding
phase (the base tables alone). Not a timed assertion.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_metadata_log import generate  # noqa: E402  (sibling benchmark module)

from kraftsman.cli.pipeline import inputs  # noqa: E402
from kraftsman.cli.pipeline.arrow_tables import decode_arrow  # noqa: E402
from kraftsman.cli.pipeline.decode import decode_file  # noqa: E402


BASE_PHASES = ("decoding", "decoding records", "decoding batches", "writing errors")


def make_segments(folder: Path, segments: int, topics: int, partitions: int) -> list[str]:
    """Write the segments (one folder per segment, as one log directory per cluster) and return their paths."""
    per = topics * (partitions + 1)
    paths = []
    for i in range(segments):
        path = folder / f"cluster-{i:02d}" / "__cluster_metadata-0" / f"{0:020d}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            generate(path, topics, partitions, seed=i)
        paths.append(str(path))
    print(f"{segments} segments, {segments * per:,} records, "
          f"{sum(os.path.getsize(p) for p in paths) / 1e6:.1f} MB in {folder}")
    return paths


def single_process(tasks, arrow: bool) -> tuple[float, int]:
    """Decode every task in this process, to row tuples or to Arrow batches (what the workers run);
    return (seconds, rows)."""
    gc.collect()
    gc.disable()
    start, rows = time.perf_counter(), 0
    try:
        for task in tasks:
            if arrow:
                rows += sum(batch.num_rows for _, batch in decode_arrow(task))
            else:
                rows += sum(1 for _ in decode_file(task.path, task.source, start=task.start, end=task.end))
    finally:
        gc.enable()
    return time.perf_counter() - start, rows


def spark_run(tasks, master: str, out: str, conf: dict) -> dict:
    """Start a session, run the job; return the session time, job time, phases and counts."""
    from kraftsman.cli.pipeline import spark_job

    start = time.perf_counter()
    spark = spark_job.start_session(master, conf)
    session = time.perf_counter() - start
    progress = spark_job.progress_for(spark, sys.stderr)
    start = time.perf_counter()
    counts = spark_job.run_job(spark, tasks, [], out, "parquet", progress)
    job = time.perf_counter() - start
    cores = spark.sparkContext.defaultParallelism
    spark.stop()
    return {"session_s": session, "job_s": job, "phases_s": progress.timings, "counts": counts, "cores": cores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--segments", type=int, default=20)
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the session (repeatable)")
    parser.add_argument("--dir", help="where to keep the generated segments (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        folder = Path(args.dir or tmp)
        files = make_segments(folder / "segments", args.segments, args.topics, args.partitions)
        tasks = inputs.plan(files)
        single_rows, rows = single_process(tasks, arrow=False)
        print(f"single-process decode to row tuples: {single_rows:.1f} s ({rows:,} rows)")
        single, rows = single_process(tasks, arrow=True)
        print(f"single-process decode to Arrow batches (the workers' function): {single:.1f} s ({rows:,} rows)")
        result = spark_run(tasks, args.master, str(Path(tmp) / "out"),
                           dict(item.split("=", 1) for item in args.conf))
        base = sum(v for k, v in result["phases_s"].items() if k in BASE_PHASES)
        result["derived_s"] = result["phases_s"].get("writing derived tables")
        result.update(single_s=single, single_rows_s=single_rows, ratio=single / result["job_s"],
                      base_tables_s=base, ratio_base_tables=single / base,
                      ratio_rows=single_rows / result["job_s"], load_average=os.getloadavg())
        print(json.dumps(result, indent=2))
        print(f"session start {result['session_s']:.1f} s (excluded); job {result['job_s']:.1f} s on "
              f"{result['cores']} cores vs single-process decode {single:.1f} s: ratio {result['ratio']:.2f}x "
              f"(base tables only: {base:.1f} s, {result['ratio_base_tables']:.2f}x)")


if __name__ == "__main__":
    main()
