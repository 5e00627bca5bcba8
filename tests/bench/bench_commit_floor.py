"""Measure the floor of a 3-voter commit in CPython asyncio on this machine, beside the real quorum's commit.

Run: python tests/bench/bench_commit_floor.py [--commits 2000]

A single-record commit on 3 voters is, at the least, this message pattern (what bench_quorum's commit
latency measures, with everything Kafka- and Raft-specific taken out):

    client --request--> leader --data--> follower 1 and 2 (each: write + fsync, then ack)
    leader (its own write + fsync in a thread, as the controller does) --first ack and own fsync--> client

Run: python tests/bench/bench_commit_floor.py [--commits 500] [--rounds 4]

Here four processes play it with bare asyncio Protocols, 100-byte payloads and 4-byte length frames: no
codec, no Raft state, no metadata image, no logging. Its p50 is the least that any CPython asyncio
implementation of the commit can cost on this host. The report prints it as a ratio to the same run's
baseline (fsync + loopback round trip, as bench_quorum.py measures them) beside the real quorum's commit
latency, so the two ratios can be compared within one run:

- floor / baseline: how much of bench_quorum's 3x target the bare pattern already uses;
- quorum / floor: what kraftsman's controller adds on top of the bare pattern (target <= 1.5x).

Both run side by side and take turns, round after round, so that each ratio is measured in one run on a shared
machine; the voters' peak RSS and the load average are printed with them.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
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
SEQUENCE = itertools.count(1)  # one per request, so that an ack names the request it acknowledges
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
    """Serve the leader: append each frame to a file, fsync it inline, then ack it with its sequence number (its
    first 8 bytes), as a follower's next fetch names the offset it has."""
    fd = os.open(os.path.join(directory, f"follower-{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def on_frame(conn, frame):
        os.write(fd, frame)
        os.fsync(fd)
        conn.send(frame[:8])

    async def main():
        server = await asyncio.get_running_loop().create_server(lambda: Framed(on_frame), "127.0.0.1", 0)
        Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
        await asyncio.Event().wait()
    asyncio.run(main())


def run_leader(directory: str, port_file: str, follower_ports: list[int]) -> None:
    """Serve the client: send each request to both followers, fsync it in a thread meanwhile, answer the
    client once its own fsync and one follower's ack of that request are done (a majority of 3); a late ack of
    an earlier request counts for nothing."""
    fd = os.open(os.path.join(directory, "leader.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    async def main():
        loop = asyncio.get_running_loop()
        state = {"client": None, "acks": 0, "synced": False, "answered": True, "seq": b""}

        def maybe_answer():
            if not state["answered"] and state["synced"] and state["acks"] >= 1:
                state["answered"] = True
                state["client"].send(ACK)

        def on_ack(conn, frame):
            if frame != state["seq"]:
                return
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
            state.update(client=conn, acks=0, synced=False, answered=False, seq=frame[:8])
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
    """Send `commits` requests one after another, each starting with its sequence number; return each one's
    round trip, in seconds."""
    loop = asyncio.get_running_loop()
    answers: asyncio.Queue = asyncio.Queue()
    _, proto = await loop.create_connection(lambda: Framed(lambda c, f: answers.put_nowait(f)), "127.0.0.1", port)
    times = []
    for _ in range(commits):
        t = time.perf_counter()
        proto.send(next(SEQUENCE).to_bytes(8, "big") + PAYLOAD[8:])
        await answers.get()
        times.append(time.perf_counter() - t)
    proto.transport.close()
    return times


@contextlib.asynccontextmanager
async def floor_pattern(directory: Path):
    """Start two followers and a leader as processes; yield the leader's port."""
    procs = []
    try:
        ports = []
        for i in (1, 2):
            port_file = directory / f"f{i}.port"
            procs.append(spawn("follower", str(directory), str(port_file)))
            ports.append(wait_port(port_file))
        leader_file = directory / "leader.port"
        procs.append(spawn("leader", str(directory), str(leader_file), *map(str, ports)))
        yield wait_port(leader_file)
    finally:
        for p in procs:
            p.kill()
            p.wait()


def peak_rss_mb(pid: int) -> int:
    """Return a process's peak resident memory (VmHWM), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


async def interleaved(tmp: Path, commits: int, rounds: int):
    """Run the floor pattern and a real quorum side by side; alternate `rounds` rounds of `commits` commits on
    each; return (floor latencies per round, quorum latencies per round, the voters' peak RSS in MiB)."""
    floors, quorums = [], []
    async with floor_pattern(tmp) as port:
        with bq.fresh_quorum() as (quorum, _):
            _, client = await bq.leader_client(quorum)
            sims = await bq.unfenced_brokers(quorum)
            await bq.check(client, "CreateTopics", 7, bq.create(["bench-0"], 1))
            await client_latencies(port, 200)       # warm up both
            await bq.commit_latency(client, 200)
            for _ in range(rounds):
                floors.append(await client_latencies(port, commits))
                quorums.append(await bq.commit_latency(client, commits))
            rss = [peak_rss_mb(p.pid) for p in quorum.procs.values()]
            for sim in sims:
                await sim.stop()
            await client.close()
    return floors, quorums, rss


async def main(args) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        fsync, rtt = bq.fsync_p50(Path(tmp)), await bq.rtt_p50()
        base = fsync + rtt
        print(f"baseline: fsync p50 {fsync * 1e3:.3f} ms + loopback round trip p50 {rtt * 1e3:.3f} ms "
              f"= {base * 1e3:.3f} ms; load average {os.getloadavg()[0]:.2f}")
        floors, quorums, rss = await interleaved(Path(tmp), args.commits, args.rounds)
    ratios = []
    for n, (floor, quorum) in enumerate(zip(floors, quorums), 1):
        f50, q50 = statistics.median(floor), statistics.median(quorum)
        ratios.append(q50 / f50)
        print(f"round {n}: floor p50 {f50 * 1e3:.3f} ms (p99 {bq.pct(floor, 0.99) * 1e3:.3f}), quorum p50 "
              f"{q50 * 1e3:.3f} ms (p99 {bq.pct(quorum, 0.99) * 1e3:.3f}); quorum / floor = {q50 / f50:.2f}x")
    floor, quorum = [t for r in floors for t in r], [t for r in quorums for t in r]
    f50, q50 = statistics.median(floor), statistics.median(quorum)
    print(f"floor (bare asyncio, 4 processes, same pattern): p50 {f50 * 1e3:.3f} ms, p99 "
          f"{bq.pct(floor, 0.99) * 1e3:.3f} ms; floor / baseline = {f50 / base:.2f}x")
    print(f"kraftsman quorum commit: p50 {q50 * 1e3:.3f} ms, p99 {bq.pct(quorum, 0.99) * 1e3:.3f} ms; "
          f"quorum / baseline = {q50 / base:.2f}x; quorum / floor = {statistics.median(ratios):.2f}x (median of the "
          f"rounds; target <= 1.5x); voters' peak RSS {rss} MiB; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "follower":
        run_follower(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "leader":
        run_leader(sys.argv[2], sys.argv[3], [int(p) for p in sys.argv[4:]])
    else:
        parser = argparse.ArgumentParser()
        parser.add_argument("--commits", type=int, default=500, help="commits per round (default 500)")
        parser.add_argument("--rounds", type=int, default=4, help="rounds on each side, interleaved (default 4)")
        asyncio.run(main(parser.parse_args(sys.argv[1:])))
