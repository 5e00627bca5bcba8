"""Measure the floor of a 3-voter commit in CPython asyncio on this machine, beside the real quorum's commit.

Run: python tests/bench/bench_commit_floor.py [--commits 2000]

A single-record commit on 3 voters is, at the least, this message pattern (what bench_quorum's commit
latency measures, with everything Kafka- and Raft-specific taken out):

    client --request--> leader --data--> follower 1 and 2 (each: write + fsync, then ack)
    leader (its own write + fsync in a thread, as the controller does) --first ack and own fsync--> client

Here four processes play it with bare asyncio Protocols, 100-byte payloads and 4-byte length frames: no
codec, no Raft state, no metadata image, no logging. Its p50 is the least that any CPython asyncio
implementation of the commit can cost on this host. The report prints it as a ratio to the same run's
baseline (fsync + loopback round trip, as bench_quorum.py measures them) beside the real quorum's commit
latency, so the two ratios can be compared within one run:

- floor / baseline: how much of bench_quorum's 3x target the bare pattern already uses;
- quorum / floor: what kraftsman's controller adds on top of the bare pattern.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_quorum as bq  # noqa: E402

PAYLOAD = b"r" * 100
ACK = b"a" * 8


class Framed(asyncio.Protocol):
    """Split a byte stream into 4-byte-length frames; call on_frame(self, frame) for each."""

    def __init__(self, on_frame):
        self.on_frame, self.buf, self.transport = on_frame, bytearray(), None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        buf = self.buf
        buf += data
        while len(buf) >= 4:
            size = int.from_bytes(buf[:4], "big")
            if len(buf) < 4 + size:
                return
            frame = bytes(buf[4:4 + size])
            del buf[:4 + size]
            self.on_frame(self, frame)

    def send(self, data: bytes) -> None:
        self.transport.write(struct.pack(">i", len(data)) + data)


def run_follower(directory: str, port_file: str) -> None:
    """Serve the leader: append each frame to a file, fsync it inline, then ack (as a follower acks a fetch)."""
    fd = os.open(os.path.join(directory, f"follower-{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def on_frame(conn, frame):
        os.write(fd, frame)
        os.fsync(fd)
        conn.send(ACK)

    async def main():
        server = await asyncio.get_running_loop().create_server(lambda: Framed(on_frame), "127.0.0.1", 0)
        Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
        await asyncio.Event().wait()
    asyncio.run(main())


def run_leader(directory: str, port_file: str, follower_ports: list[int]) -> None:
    """Serve the client: send each request to both followers, fsync it in a thread meanwhile, answer the
    client once its own fsync and one follower's ack are done (a majority of 3)."""
    fd = os.open(os.path.join(directory, "leader.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    async def main():
        loop = asyncio.get_running_loop()
        state = {"client": None, "acks": 0, "synced": False, "answered": True}

        def maybe_answer():
            if not state["answered"] and state["synced"] and state["acks"] >= 1:
                state["answered"] = True
                state["client"].send(ACK)

        def on_ack(conn, frame):
            state["acks"] += 1
            maybe_answer()

        def synced(_future):
            state["synced"] = True
            maybe_answer()

        followers = []
        for port in follower_ports:
            _, proto = await loop.create_connection(lambda: Framed(on_ack), "127.0.0.1", port)
            followers.append(proto)

        def on_request(conn, frame):
            state.update(client=conn, acks=0, synced=False, answered=False)
            os.write(fd, frame)
            for f in followers:
                f.send(frame)
            loop.run_in_executor(None, os.fsync, fd).add_done_callback(synced)

        server = await loop.create_server(lambda: Framed(on_request), "127.0.0.1", 0)
        Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
        await asyncio.Event().wait()
    asyncio.run(main())


def wait_port(path: Path, timeout: float = 20) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.02)
    raise SystemExit(f"no port in {path} after {timeout} s")


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, *args])


async def client_latencies(port: int, commits: int) -> list[float]:
    """Send `commits` requests one after another; return each one's round trip, in seconds."""
    loop = asyncio.get_running_loop()
    answers: asyncio.Queue = asyncio.Queue()
    _, proto = await loop.create_connection(lambda: Framed(lambda c, f: answers.put_nowait(f)), "127.0.0.1", port)
    times = []
    for _ in range(commits):
        t = time.perf_counter()
        proto.send(PAYLOAD)
        await answers.get()
        times.append(time.perf_counter() - t)
    proto.transport.close()
    return times


async def floor_latencies(directory: Path, commits: int) -> list[float]:
    """Start two followers and a leader as processes, then time `commits` commits through them."""
    procs = []
    try:
        ports = []
        for i in (1, 2):
            port_file = directory / f"f{i}.port"
            procs.append(spawn("follower", str(directory), str(port_file)))
            ports.append(wait_port(port_file))
        leader_file = directory / "leader.port"
        procs.append(spawn("leader", str(directory), str(leader_file), *map(str, ports)))
        port = wait_port(leader_file)
        await client_latencies(port, 200)  # warm up
        return await client_latencies(port, commits)
    finally:
        for p in procs:
            p.kill()
            p.wait()


async def quorum_latencies(commits: int) -> list[float]:
    """Time `commits` single-record commits on a real kraftsman quorum with three simulated brokers, as
    bench_quorum's commit latency does."""
    with bq.fresh_quorum() as (quorum, _):
        _, client = await bq.leader_client(quorum)
        sims = await bq.unfenced_brokers(quorum)
        await bq.check(client, "CreateTopics", 7, bq.create(["bench-0"], 1))
        await bq.commit_latency(client, 200)  # warm up
        times = await bq.commit_latency(client, commits)
        for sim in sims:
            await sim.stop()
        await client.close()
        return times


async def main(args) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        fsync, rtt = bq.fsync_p50(Path(tmp)), await bq.rtt_p50()
        base = fsync + rtt
        print(f"baseline: fsync p50 {fsync * 1e3:.3f} ms + loopback round trip p50 {rtt * 1e3:.3f} ms "
              f"= {base * 1e3:.3f} ms; the 3x target is {3 * base * 1e3:.2f} ms")
        floor = await floor_latencies(Path(tmp), args.commits)
    quorum = await quorum_latencies(args.commits)
    f50, q50 = statistics.median(floor), statistics.median(quorum)
    print(f"floor (bare asyncio, 4 processes, same pattern): p50 {f50 * 1e3:.3f} ms, p99 "
          f"{bq.pct(floor, 0.99) * 1e3:.3f} ms; floor / baseline = {f50 / base:.2f}x")
    print(f"kraftsman quorum commit: p50 {q50 * 1e3:.3f} ms, p99 {bq.pct(quorum, 0.99) * 1e3:.3f} ms; "
          f"quorum / baseline = {q50 / base:.2f}x; quorum / floor = {q50 / f50:.2f}x")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "follower":
        run_follower(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "leader":
        run_leader(sys.argv[2], sys.argv[3], [int(p) for p in sys.argv[4:]])
    else:
        parser = argparse.ArgumentParser()
        parser.add_argument("--commits", type=int, default=2000)
        asyncio.run(main(parser.parse_args(sys.argv[1:])))
