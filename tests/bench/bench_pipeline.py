"""Benchmark: how the Spark pipeline scales with cores, against one process decoding the same files (issue 23).

Run: python tests/bench/bench_pipeline.py [--segments 20 --topics 500 --partitions 100] [--no-cluster]

Generates `segments` metadata log segments with tests/bench/gen_metadata_log.py (topics * (partitions + 1)
records each: 20 x 50,500 = 1,010,000 records by default), then measures in one run:
- single: this one process decoding every file, garbage collection paused as the workers do: to row
  tuples (the decoder alone), to Arrow batches (the workers' function), and to Parquet part files
  (arrow_tables.write_parts: exactly the work of the local decode phase, in one process);
- for local[1], local[2] and a standalone cluster of two 1-core workers on 127.0.0.1 (started from
  pyspark's bin/spark-class as the tests do): the session start (excluded), the decode phase (the
  base tables `records`, `batches` and `errors`: one pass where the workers write Parquet themselves on
  a local master, two passes through Spark's writers on the cluster), the derived tables (Spark SQL)
  and the whole job.
Prints the figures and the ratios single / decode phase (target >= 1.8 on 2 cores). Not a timed assertion.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "cli" / "pipeline"))

from gen_metadata_log import generate  # noqa: E402  (sibling benchmark module)
from standalone import standalone_cluster  # noqa: E402  (the tests' standalone cluster)

from kraftsman.cli.pipeline import inputs  # noqa: E402
from kraftsman.cli.pipeline.arrow_tables import decode_arrow, write_parts  # noqa: E402
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


def single_process(tasks, how: str, scratch: Path) -> tuple[float, int]:
    """Decode every task in this process to row tuples, Arrow batches or Parquet parts; return (s, rows)."""
    gc.collect()
    gc.disable()
    start, rows = time.perf_counter(), 0
    try:
        if how == "parquet":
            rows = sum(write_parts(tasks, str(scratch), "part-single.parquet").values())
        for task in tasks if how != "parquet" else ():
            if how == "arrow":
                rows += sum(batch.num_rows for _, batch in decode_arrow(task))
            else:
                rows += sum(1 for _ in decode_file(task.path, task.source, start=task.start, end=task.end))
    finally:
        gc.enable()
    return time.perf_counter() - start, rows


def spark_run(tasks, master: str, out: str, conf: dict) -> dict:
    """Start a session on `master`, run the job; return session, decode phase, derived and job times."""
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
    decode = sum(v for k, v in progress.timings.items() if k in BASE_PHASES)
    return {"master": master, "cores": cores, "session_s": round(session, 2), "decode_s": round(decode, 2),
            "derived_s": round(progress.timings.get("writing derived tables", 0.0), 2), "job_s": round(job, 2),
            "counts": counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--segments", type=int, default=20)
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--no-cluster", action="store_true", help="skip the standalone cluster")
    parser.add_argument("--dir", help="where to keep the generated segments (default: a temporary folder)")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        folder = Path(args.dir or tmp)
        tasks = inputs.plan(make_segments(folder / "segments", args.segments, args.topics, args.partitions))
        single = {how: single_process(tasks, how, Path(tmp) / f"single-{how}") for how in ("tuples", "arrow", "parquet")}
        for how, (seconds, rows) in single.items():
            print(f"single process, decode to {how}: {seconds:.1f} s ({rows:,} rows)")
        runs = [spark_run(tasks, m, str(Path(tmp) / f"out-{i}"), {}) for i, m in enumerate(("local[1]", "local[2]"))]
        if not args.no_cluster:
            with standalone_cluster(Path(tmp) / "cluster", workers=2) as url:
                runs.append(spark_run(tasks, url, str(Path(tmp) / "out-cluster"),
                                      {"spark.executor.memory": "1g", "spark.sql.shuffle.partitions": "4"}))
        report(single, runs)


def report(single: dict, runs: list[dict]) -> None:
    """Print every figure as JSON, then the ratios line by line."""
    base = single["parquet"][0]
    for run in runs:
        run["speedup_decode_vs_single_parquet"] = round(base / run["decode_s"], 2)
        run["speedup_decode_vs_single_arrow"] = round(single["arrow"][0] / run["decode_s"], 2)
        run["speedup_job_vs_single_parquet"] = round(base / run["job_s"], 2)
    print(json.dumps({"single_s": {k: round(v[0], 2) for k, v in single.items()}, "runs": runs,
                      "load_average": os.getloadavg()}, indent=2))
    for run in runs:
        where = "standalone 2 x 1 core" if run["master"].startswith("spark://") else run["master"]
        print(f"{where:>22}: decode phase {run['decode_s']:.1f} s = {run['speedup_decode_vs_single_parquet']:.2f}x "
              f"single ({base:.1f} s to Parquet), derived tables {run['derived_s']:.1f} s, whole job "
              f"{run['job_s']:.1f} s = {run['speedup_job_vs_single_parquet']:.2f}x; session start "
              f"{run['session_s']:.1f} s excluded")


if __name__ == "__main__":
    main()
