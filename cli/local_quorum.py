"""LocalQuorum: format and run N kafka-controller processes on 127.0.0.1 (used by the demo, tests and benchmarks).

Rules:
- Each voter gets `<base>/node-<id>/` with its server.properties, its formatted metadata log
  directory and a log file of its stderr; nothing outside `base` is touched.
- Storage is prepared with kraftsman's own `kafka-storage format`, exactly as an operator would.
- Voters run as real processes (`python -m kraftsman.cli.controller`), so kill() is a real SIGKILL and
  restart() reopens the same directories.
- Ports are chosen free by binding port 0 first; they are fixed for the life of the quorum.
"""
from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from .common import Environment


def free_ports(count: int) -> list[int]:
    """Return `count` distinct TCP ports that were free a moment ago."""
    socks, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class LocalQuorum:
    """N controllers on 127.0.0.1 under `base`."""

    def __init__(self, base, voters: int = 3, *, cluster_id: str = "MkU3OEVBNTcwNTJENDM2Qg", extra=None,
                 first_id: int = 1):
        self.base = Path(base)
        self.ids = list(range(first_id, first_id + voters))
        self.ports = dict(zip(self.ids, free_ports(voters)))
        self.cluster_id = cluster_id
        self.extra = dict(extra or {})
        self.procs: dict[int, subprocess.Popen] = {}

    # ------------------------------------------------------------ layout
    def node_dir(self, node_id: int) -> Path:
        return self.base / f"node-{node_id}"

    def metadata_dir(self, node_id: int) -> Path:
        return self.node_dir(node_id) / "metadata"

    def partition_dir(self, node_id: int) -> Path:
        return self.metadata_dir(node_id) / "__cluster_metadata-0"

    def config_path(self, node_id: int) -> Path:
        return self.node_dir(node_id) / "server.properties"

    def addresses(self) -> dict[int, tuple[str, int]]:
        return {i: ("127.0.0.1", p) for i, p in self.ports.items()}

    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.ports.values())

    def properties(self, node_id: int) -> dict[str, str]:
        voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in self.ports.items())
        props = {"process.roles": "controller", "node.id": str(node_id), "controller.quorum.voters": voters,
                 "listeners": f"CONTROLLER://127.0.0.1:{self.ports[node_id]}",
                 "controller.listener.names": "CONTROLLER", "log.dirs": str(self.metadata_dir(node_id))}
        return props | self.extra

    # ------------------------------------------------------------ lifecycle
    def format(self) -> None:
        """Write each node's server.properties and format its storage with kafka-storage."""
        from . import storage_tool

        for node_id in self.ids:
            self.node_dir(node_id).mkdir(parents=True, exist_ok=True)
            text = "".join(f"{k}={v}\n" for k, v in self.properties(node_id).items())
            self.config_path(node_id).write_text(text)
            out, err = io.StringIO(), io.StringIO()
            status = storage_tool.run(["format", "-t", self.cluster_id, "-c", str(self.config_path(node_id)), "-g"],
                                      Environment(stdout=out, stderr=err))
            if status != 0:
                raise RuntimeError(f"kafka-storage format failed for node {node_id}: {err.getvalue().strip()}")

    def start(self, node_id: int | None = None) -> None:
        """Start one voter (or all) as processes."""
        for nid in [node_id] if node_id is not None else self.ids:
            if nid in self.procs and self.procs[nid].poll() is None:
                continue
            stderr = open(self.node_dir(nid) / "controller.log", "ab")
            cmd = [sys.executable, "-m", "kraftsman.cli.controller", "--config", str(self.config_path(nid))]
            self.procs[nid] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr,
                                               env=os.environ | {"PYTHONUNBUFFERED": "1"})
            stderr.close()

    def kill(self, node_id: int) -> None:
        """SIGKILL one voter."""
        proc = self.procs.get(node_id)
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    def terminate(self, node_id: int, timeout: float = 10) -> int:
        """SIGTERM one voter and wait; return its exit code."""
        proc = self.procs[node_id]
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.returncode

    def stop(self) -> None:
        """Stop every voter (SIGTERM, then SIGKILL after a grace period)."""
        for nid in list(self.procs):
            self.terminate(nid)

    def wait_listening(self, timeout: float = 20) -> None:
        """Wait until every running voter accepts connections."""
        deadline = time.monotonic() + timeout
        for nid, proc in self.procs.items():
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"controller {nid} exited with {proc.returncode}: {self.log_tail(nid)}")
                try:
                    socket.create_connection(("127.0.0.1", self.ports[nid]), 0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"controller {nid} is not listening: {self.log_tail(nid)}") from None
                    time.sleep(0.05)

    def log_tail(self, node_id: int, lines: int = 5) -> str:
        path = self.node_dir(node_id) / "controller.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return " | ".join(text.strip().splitlines()[-lines:])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
