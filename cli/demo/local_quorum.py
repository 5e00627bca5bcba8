"""LocalQuorum: format and run N kafka-controller processes on 127.0.0.1 (used by the demo, tests and benchmarks).

Rules:
- Each voter gets `<base>/node-<id>/` with its server.properties, its formatted metadata log
  directory and a log file of its stderr; nothing outside `base` is touched.
- Storage is prepared with kraftsman's own `kafka-storage format`, exactly as an operator would.
- Voters run as real processes (`python -m kraftsman.cli.controller.tool`), so kill() is a real SIGKILL and
  restart() reopens the same directories.
- Ports are chosen free by binding port 0 first; they are fixed for the life of the quorum.
- dynamic=True is a KIP-853 quorum: every node is configured with controller.quorum.bootstrap.servers (the
  voters' addresses) instead of controller.quorum.voters, voters are formatted with --initial-controllers
  (their directory ids chosen here), and `spares` more nodes are formatted with --no-initial-controllers:
  they start as observers until kafka-metadata-quorum add-controller makes them voters.
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

from ..common.environment import Environment


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
                 first_id: int = 1, dynamic: bool = False, spares: int = 0):
        from kraftsman.storage.protocol.uuids import random_directory_id

        if spares and not dynamic:
            raise ValueError("spare controllers need a dynamic quorum (dynamic=True)")
        self.base = Path(base)
        self.ids = list(range(first_id, first_id + voters))
        self.spare_ids = list(range(first_id + voters, first_id + voters + spares))
        self.ports = dict(zip(self.ids + self.spare_ids, free_ports(voters + spares)))
        self.cluster_id = cluster_id
        self.extra = dict(extra or {})
        self.dynamic = dynamic
        self.directory_ids = {i: str(random_directory_id()) for i in self.ids} if dynamic else {}
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
        """Return the initial voters' addresses by id (spares are not included)."""
        return {i: ("127.0.0.1", self.ports[i]) for i in self.ids}

    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.ports[i]}" for i in self.ids)

    def initial_controllers(self) -> str:
        """Return the --initial-controllers text of a dynamic quorum (id@host:port:directory-id, ...)."""
        return ",".join(f"{i}@127.0.0.1:{self.ports[i]}:{self.directory_ids[i]}" for i in self.ids)

    def properties(self, node_id: int) -> dict[str, str]:
        if self.dynamic:
            quorum = {"controller.quorum.bootstrap.servers": self.bootstrap()}
        else:
            quorum = {"controller.quorum.voters": ",".join(f"{i}@127.0.0.1:{self.ports[i]}" for i in self.ids)}
        props = {"process.roles": "controller", "node.id": str(node_id), **quorum,
                 "listeners": f"CONTROLLER://127.0.0.1:{self.ports[node_id]}",
                 "controller.listener.names": "CONTROLLER", "log.dirs": str(self.metadata_dir(node_id))}
        return props | self.extra

    def running_nodes(self) -> list[str]:
        """Return the node folders under `base` whose metadata directory a running controller holds (its `.lock`),
        whatever quorum wrote them: nothing is written here."""
        from kraftsman.storage.log.dir_lock import DirectoryLockedError, lock_if_present

        busy = []
        for metadata in sorted(self.base.glob("node-*/metadata")):
            try:
                handle = lock_if_present(metadata)
            except DirectoryLockedError:
                busy.append(metadata.parent.name)
                continue
            if handle is not None:
                handle.close()
        return busy

    # ------------------------------------------------------------ lifecycle
    def format(self) -> None:
        """Write each node's server.properties and format its storage with kafka-storage."""
        from ..storage import tool as storage_tool

        for node_id in self.ids + self.spare_ids:
            self.node_dir(node_id).mkdir(parents=True, exist_ok=True)
            text = "".join(f"{k}={v}\n" for k, v in self.properties(node_id).items())
            self.config_path(node_id).write_text(text)
            out, err = io.StringIO(), io.StringIO()
            argv = ["format", "-t", self.cluster_id, "-c", str(self.config_path(node_id)), "-g"]
            if node_id in self.spare_ids:
                argv.append("--no-initial-controllers")
            elif self.dynamic:
                argv += ["--initial-controllers", self.initial_controllers()]
            status = storage_tool.run(argv, Environment(stdout=out, stderr=err))
            if status != 0:
                raise RuntimeError(f"kafka-storage format failed for node {node_id}: {err.getvalue().strip()}")

    def start(self, node_id: int | None = None) -> None:
        """Start one node (or all initial voters) as processes."""
        for nid in [node_id] if node_id is not None else self.ids:
            if nid in self.procs and self.procs[nid].poll() is None:
                continue
            stderr = open(self.node_dir(nid) / "controller.log", "ab")
            cmd = [sys.executable, "-m", "kraftsman.cli.controller.tool", "--config", str(self.config_path(nid))]
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
        """SIGTERM one voter and wait; return its exit code. One that does not stop in time gets SIGQUIT (its
        stacks go to its log: see log_tail) and then SIGKILL."""
        proc = self.procs[node_id]
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGQUIT)
                time.sleep(1)
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
