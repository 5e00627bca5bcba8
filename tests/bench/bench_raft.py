"""Benchmark the sans-I/O raft core: a 3-voter quorum in one process commits 1,000,000 small
records proposed in batches; prints records/s and steps/s (step() calls on all nodes).

Run: python tests/bench/bench_raft.py [--records N] [--batch B] [--size BYTES] [--wire]
--wire also encodes and decodes every message with the Kafka codec, as a server would.
No I/O: MemoryLog, messages handed over in memory, flush = MemoryLog.flush().
"""
from __future__ import annotations

import argparse
import gc
import random
import time
from collections import deque

from kraftsman.controller.raft.config import RaftConfig
from kraftsman.controller.raft.core import RaftNode
from kraftsman.controller.raft.log import MemoryLog
from kraftsman.controller.raft.state import LEADER


class Pump:
    """Three nodes and a FIFO network; the driver loop a server would run, minus the I/O."""

    def __init__(self, wire: bool):
        self.wire = wire
        self.nodes = {}
        for nid in (1, 2, 3):
            cfg = RaftConfig(node_id=nid, voters=(1, 2, 3))
            self.nodes[nid] = RaftNode(cfg, MemoryLog(), random.Random(nid))
        self.queue: deque = deque()
        self.steps = 0
        self.applied = 0

    def process(self, node) -> None:
        while node.has_ready():
            rd = node.ready()
            if rd.flush:
                node.log.flush()
            for env in rd.messages:
                self.queue.append(env.wire_round_trip() if self.wire else env)
            if node.node_id == 1:
                for batch in rd.committed:
                    self.applied += batch.count
            node.advance(rd)

    def drain(self) -> None:
        nodes, queue = self.nodes, self.queue
        while queue:
            env = queue.popleft()
            node = nodes[env.dst]
            node.step(env)
            self.steps += 1
            self.process(node)

    def elect(self) -> RaftNode:
        leader = self.nodes[1]
        leader.on_election_timeout()
        self.process(leader)
        self.drain()
        assert leader.role == LEADER, leader.describe()
        return leader


def run(records: int, batch: int, size: int, wire: bool) -> dict:
    pump = Pump(wire)
    leader = pump.elect()
    value = b"x" * size
    values = [value] * batch
    gc.disable()
    start = time.perf_counter()
    proposed = 0
    while proposed < records:
        leader.propose(values[: min(batch, records - proposed)])
        proposed += min(batch, records - proposed)
        pump.process(leader)
        pump.drain()
    while leader.high_watermark < leader.log.end_offset:
        for node in pump.nodes.values():
            node.tick()
            pump.process(node)
        pump.drain()
    elapsed = time.perf_counter() - start
    gc.enable()
    committed = leader.high_watermark - 1  # minus the LeaderChange control record
    return {"records": committed, "seconds": elapsed, "records_per_s": committed / elapsed,
            "steps": pump.steps, "steps_per_s": pump.steps / elapsed, "applied_on_leader": pump.applied - 1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--wire", action="store_true")
    args = ap.parse_args()
    r = run(args.records, args.batch, args.size, args.wire)
    print(f"3 voters, {r['records']:,} records of {args.size} bytes in batches of {args.batch}"
          f"{' (wire codec on)' if args.wire else ''}")
    print(f"  {r['seconds']:.2f} s  {r['records_per_s']:,.0f} records/s  {r['steps']:,} steps  "
          f"{r['steps_per_s']:,.0f} steps/s")


if __name__ == "__main__":
    main()
