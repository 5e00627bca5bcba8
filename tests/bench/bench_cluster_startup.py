"""Benchmark: kafka-cluster start-up to the first byte sent, against `python -c pass` in the same run.

Run: python tests/bench/bench_cluster_startup.py [--runs 10]
Target (issue 8): start-up to first byte sent under 200 ms of wall time.
A listening socket in this process stands in for the cluster; each run spawns
`python -m kraftsman.cli.cluster.tool cluster-id -b <it>` and stops the clock when the first bytes of
its ApiVersions request arrive. For comparison it also times `python -c "import confluent_kafka.admin"`
(why cluster-id -b does not use confluent-kafka's AdminClient).
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

TARGET_MS = 200


def first_byte_ms(runs: int) -> list[float]:
    """Return the wall times from spawn to the first received byte, one per run (after a warm-up)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    address = f"127.0.0.1:{server.getsockname()[1]}"
    cmd = [sys.executable, "-m", "kraftsman.cli.cluster.tool", "cluster-id", "-b", address, "--timeout", "5"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        conn, _ = server.accept()
        data = conn.recv(4)
        elapsed = (time.perf_counter() - start) * 1000
        conn.close()
        proc.wait()
        if i and data:
            times.append(elapsed)
    server.close()
    return times


def wall_ms(cmd: list[str], runs: int) -> float:
    """Return the median wall time of `cmd` over `runs` runs after a warm-up."""
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if i:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    bare = wall_ms([sys.executable, "-c", "pass"], args.runs)
    times = first_byte_ms(args.runs)
    median = statistics.median(times)
    confluent = wall_ms([sys.executable, "-c", "import confluent_kafka.admin"], args.runs)
    print(f"python -c pass                       {bare:7.1f} ms")
    print(f"kafka-cluster cluster-id: 1st byte   {median:7.1f} ms median, {min(times):.1f} min "
          f"(x{median / bare:.1f} the bare interpreter)  target < {TARGET_MS} ms: "
          f"{'OK' if median < TARGET_MS else 'MISSED'}")
    print(f"import confluent_kafka.admin         {confluent:7.1f} ms (x{confluent / bare:.1f})")


if __name__ == "__main__":
    main()
