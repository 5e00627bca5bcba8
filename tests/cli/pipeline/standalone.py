"""A Spark standalone cluster on 127.0.0.1 for tests and benchmarks: one master and N one-core workers,
started from the installed pyspark's own bin/spark-class, each a process stopped by its pid.

    with standalone_cluster(tmp_path, workers=2) as master_url:
        ... kafka-metadata-export --master master_url ...

Ports are chosen free, work and log folders live under the given folder, and the wait for the workers
to register is bounded (the master's JSON status page on its web UI port, also on 127.0.0.1).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

START_TIMEOUT_S = 90.0


def spark_home() -> Path:
    """Return the installed pyspark's folder (it holds bin/spark-class and the jars)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    """Return a TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(folder),
                "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
                "SPARK_NO_DAEMONIZE": "1"})
    return env


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    command = [str(spark_home() / "bin" / "spark-class"), *args]
    with open(log, "wb") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def alive_workers(ui_port: int) -> int:
    """Return how many workers the master lists as ALIVE (0 while it is not up)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as reply:
            status = json.load(reply)
    except (OSError, ValueError):
        return 0
    return sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")


def stop(processes: list[subprocess.Popen]) -> None:
    """Stop the processes by pid (their process groups: the JVM started by spark-class), then wait."""
    for p in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in processes:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=5)


@contextlib.contextmanager
def standalone_cluster(folder: Path, workers: int = 2, cores: int = 1, memory: str = "1g"):
    """Start a master and `workers` workers below `folder`; yield the master URL; stop them all."""
    folder.mkdir(parents=True, exist_ok=True)
    env = _environment(folder)
    port, ui_port = free_port(), free_port()
    master = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui_port)]
    processes = [_start(master, folder / "master.log", env)]
    url = f"spark://127.0.0.1:{port}"
    try:
        for i in range(workers):
            work = folder / f"worker-{i}"
            work.mkdir(exist_ok=True)
            worker = ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", str(cores),
                      "--memory", memory, "--work-dir", str(work), "--webui-port", str(free_port()), url]
            processes.append(_start(worker, folder / f"worker-{i}.log", env))
        _wait_for(ui_port, workers, processes, folder)
        yield url
    finally:
        stop(processes)


def _wait_for(ui_port: int, workers: int, processes: list[subprocess.Popen], folder: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while alive_workers(ui_port) < workers:
        dead = [p for p in processes if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            logs = "; ".join(f"{log.name}: {log.read_text(errors='replace')[-400:]}" for log in folder.glob("*.log"))
            raise RuntimeError(f"the standalone cluster did not start ({len(dead)} processes exited): {logs}")
        time.sleep(0.5)
