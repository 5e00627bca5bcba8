"""Benchmark: the pipeline's decode phase on local[2] against one process, interleaved, with where the rest goes
(issue 32).

Run: python tests/bench/bench_pipeline_cores.py [--segments 20 --topics 500 --partitions 100] [--rounds 2]
                                                [--dir DIR]

In one run, one Spark session on local[2] (its start excluded) and, taking turns round after round: one process
decoding every segment to Parquet part files (arrow_tables.write_parts, garbage collection paused: exactly the work
of the local decode phase) and the local[2] decode phase (spark_job.write_base_tables). Each round's ratio is
single / local[2] (target >= 1.8 on 2 cores). Then the profile of a worker's fixed costs, in a fresh process as
a Spark worker starts: importing the pipeline and pyarrow, the first batch (pyarrow's pa.array imports pandas
there), the first segment against a warm one; and the CPU the JVM and the worker processes took during the last
local[2] phase (from /proc), with the load average. Not a timed assertion.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_pipeline import make_segments, single_process  # noqa: E402  (sibling benchmark module)

from kraftsman.cli.pipeline import inputs  # noqa: E402

_FIXED_COSTS = r"""
import json, sys, time, tempfile
t0 = time.perf_counter()
from kraftsman.cli.pipeline import inputs
from kraftsman.cli.pipeline.arrow_tables import write_parts
t1 = time.perf_counter()
import pyarrow, pyarrow.parquet
t2 = time.perf_counter()
pyarrow.array([1], pyarrow.int64())
t3 = time.perf_counter()
paths = sys.argv[1:]
with tempfile.TemporaryDirectory() as tmp:
    write_parts(inputs.plan(paths[:1]), tmp, "a.parquet")
    t4 = time.perf_counter()
    write_parts(inputs.plan(paths[1:2]), tmp, "b.parquet")
    t5 = time.perf_counter()
print(json.dumps({"import_pipeline": t1 - t0, "import_pyarrow": t2 - t1, "first_array_pandas": t3 - t2,
                  "first_segment": t4 - t3, "warm_segment": t5 - t4}))
"""


def cpu_of(pids) -> float:
    """Return the user + system CPU seconds of processes `pids` and their reaped children."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def jvm_pids() -> list[int]:
    """Return the pids of every process below this one (Spark's driver JVM, its Python daemon and workers)."""
    found, todo = [], [os.getpid()]
    while todo:
        out = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True).stdout.split()
        found += [int(p) for p in out]
        todo += [int(p) for p in out]
    return found


def local_decode(spark, tasks, out: str) -> float:
    """Run the local decode phase (the workers write the base tables); return its seconds."""
    from kraftsman.cli.pipeline import spark_job
    from kraftsman.cli.pipeline.progress import Progress

    start = time.perf_counter()
    spark_job.write_base_tables(spark, tasks, out, Progress(None))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--segments", type=int, default=20)
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dir", help="where to keep the generated segments (default: a temporary folder)")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from kraftsman.cli.pipeline import spark_job

    with tempfile.TemporaryDirectory(prefix="bench-pipeline-cores-") as tmp:
        paths = make_segments(Path(args.dir or tmp) / "segments", args.segments, args.topics, args.partitions)
        tasks = inputs.plan(paths)
        spark = spark_job.start_session("local[2]", {})
        rounds = []
        for n in range(args.rounds):
            single, _ = single_process(tasks, "parquet", Path(tmp) / f"single-{n}")
            before, load = cpu_of(jvm_pids()), os.getloadavg()[0]
            local = local_decode(spark, tasks, str(Path(tmp) / f"out-{n}"))
            used = cpu_of(jvm_pids()) - before
            rounds.append({"single_s": round(single, 2), "local2_s": round(local, 2),
                           "ratio": round(single / local, 2), "spark_side_cpu_s": round(used, 2),
                           "load": round(load, 2)})
            print(f"round {n + 1}: one process {single:.2f} s, local[2] decode phase {local:.2f} s = "
                  f"{single / local:.2f}x (target >= 1.8); CPU of the JVM and Python workers {used:.1f} s; "
                  f"load average {load:.2f}", flush=True)
        spark.stop()
        fixed = json.loads(subprocess.run([sys.executable, "-c", _FIXED_COSTS, *paths[:2]], capture_output=True,
                                          text=True, check=True).stdout)
    print("a worker's fixed costs (fresh process): " + ", ".join(f"{k} {v:.2f} s" for k, v in fixed.items())
          + f"; the first segment costs {fixed['first_segment'] - fixed['warm_segment']:.2f} s more than a warm one")
    print(json.dumps({"rounds": rounds, "fixed": {k: round(v, 3) for k, v in fixed.items()}}))


if __name__ == "__main__":
    main()
