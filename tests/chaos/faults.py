"""ChaosQuorum (a LocalQuorum whose voters talk through a FaultProxy) and the FaultInjector.

Rules:
- Each voter's controller.quorum.voters names itself directly and every peer through the proxy link
  (self -> peer), so any directed voter link can be cut; clients and brokers use the real ports.
- Voters run under fsync_fault_controller.py: kafka-controller unchanged, plus an fsync that fails with
  EIO while `<node dir>/fail-fsync` exists (the disk fault).
- One fault at a time: inject, hold, heal, then wait (bounded) for the next acknowledged write sent
  after the heal. Every fault records its kind, target and times; nothing is retried silently.
- Fault kinds are drawn from a seeded random.Random in shuffled rounds, so every kind occurs once before
  any occurs twice.
"""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kraftsman.cli.demo.local_quorum import LocalQuorum
from kraftsman.controller.client.controller_client import ControllerUnavailable, find_leader

from .proxy import BLACKHOLE, DROP, OK, FaultProxy

WRAPPER = Path(__file__).with_name("fsync_fault_controller.py")
KINDS = ("kill_leader", "kill_follower", "kill_all", "power_loss_follower", "power_loss_all", "pause_leader",
         "pause_follower", "isolate_leader_drop", "isolate_follower_blackhole", "leader_inbound_cut", "pair_cut_blackhole", "minority_partition",
         "disk_fsync_failure")
CHAOS_CONFIG = {
    "controller.quorum.election.timeout.ms": "800", "controller.quorum.fetch.timeout.ms": "1500",
    "controller.quorum.election.backoff.max.ms": "400", "controller.quorum.request.timeout.ms": "2000",
    "broker.session.timeout.ms": "6000", "broker.heartbeat.interval.ms": "500",
    "metadata.log.max.record.bytes.between.snapshots": "20000", "metadata.log.segment.bytes": "16384",
}


class ChaosQuorum(LocalQuorum):
    """A LocalQuorum behind a FaultProxy, with an fsync-failure switch per voter."""

    def __init__(self, base, voters: int = 3, *, extra=None, fsync_delay_ms: int = 10):
        super().__init__(base, voters, extra=CHAOS_CONFIG | dict(extra or {}))
        self.fsync_delay_ms = fsync_delay_ms
        self.proxy = FaultProxy(self.ports)
        self.proxy.start()
        self.paused: set[int] = set()
        self.expected_down: set[int] = set()

    def properties(self, node_id: int) -> dict[str, str]:
        return super().properties(node_id) | {"controller.quorum.voters": self.proxy.voters_for(node_id)}

    def fsync_trigger(self, node_id: int) -> Path:
        return self.node_dir(node_id) / "fail-fsync"

    def fsync_journal(self, node_id: int) -> Path:
        return self.node_dir(node_id) / "fsync-journal"

    def lose_unsynced(self, node_id: int, rng: random.Random) -> int:
        """After a SIGKILL of `node_id`: cut each segment to the size its latest-started fsync that returned made
        durable (fsync_fault_controller's journal; a segment never fsynced to nothing), keeping a random torn part
        of the unsynced bytes half of the time, as a power loss would. Return how many bytes were dropped."""
        durable: dict[str, tuple[int, int, int]] = {}   # path -> (start, inode, size) of its latest-started fsync
        journal = self.fsync_journal(node_id)
        for line in journal.read_text().splitlines() if journal.exists() else []:
            path, inode, size, start = line.split("\t")
            if int(start) >= durable.get(path, (-1,))[0]:
                durable[path] = (int(start), int(inode), int(size))
        dropped = 0
        for segment in self.partition_dir(node_id).glob("*.log"):
            st = segment.stat()
            _, inode, size = durable.get(str(segment), (-1, None, 0))
            keep = size if inode == st.st_ino else 0
            if keep < st.st_size:
                if rng.random() < 0.5:
                    keep = rng.randint(keep, st.st_size)
                os.truncate(segment, keep)
                dropped += st.st_size - keep
        return dropped

    def start(self, node_id: int | None = None) -> None:
        for nid in [node_id] if node_id is not None else self.ids:
            if nid in self.procs and self.procs[nid].poll() is None:
                continue
            stderr = open(self.node_dir(nid) / "controller.log", "ab")
            cmd = [sys.executable, str(WRAPPER), "--config", str(self.config_path(nid))]
            env = os.environ | {"PYTHONUNBUFFERED": "1", "KRAFTSMAN_CHAOS_FSYNC_TRIGGER": str(self.fsync_trigger(nid)),
                                "KRAFTSMAN_CHAOS_FSYNC_JOURNAL": str(self.fsync_journal(nid)),
                                "KRAFTSMAN_CHAOS_FSYNC_DELAY_MS": str(self.fsync_delay_ms)}
            self.procs[nid] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
            stderr.close()
            self.expected_down.discard(nid)

    def pause(self, node_id: int) -> None:
        self.procs[node_id].send_signal(signal.SIGSTOP)
        self.paused.add(node_id)

    def resume(self, node_id: int) -> None:
        if node_id in self.paused:
            self.procs[node_id].send_signal(signal.SIGCONT)
            self.paused.discard(node_id)

    def serving(self, node_id: int) -> bool:
        proc = self.procs.get(node_id)
        if proc is None or proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", self.ports[node_id]), 0.5).close()
            return True
        except OSError:
            return False

    def heal_everything(self) -> None:
        """Undo every fault: resume paused voters, heal links, clear disk faults, start stopped voters."""
        for nid in list(self.paused):
            self.resume(nid)
        self.proxy.heal_all()
        for nid in self.ids:
            self.fsync_trigger(nid).unlink(missing_ok=True)
        self.start()

    def stop(self) -> None:
        for nid in list(self.paused):
            self.resume(nid)
        running = [p for p in self.procs.values() if p.poll() is None]
        for proc in running:  # signal everyone first (once: a second SIGTERM means "exit at once")
            proc.send_signal(signal.SIGTERM)
        for proc in running:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        try:
            self.stop()
        finally:
            self.proxy.close()


@dataclass
class Fault:
    kind: str
    target: str
    injected: float
    healed: float = 0.0
    recovered_at: float | None = None
    unavailable_until: float | None = None
    detail: str = ""

    @property
    def recovery_s(self) -> float | None:
        return None if self.recovered_at is None else max(self.recovered_at - self.healed, 0.0)

    @property
    def unavailability_s(self) -> float | None:
        return None if self.unavailable_until is None else self.unavailable_until - self.injected


@dataclass
class FaultInjector:
    quorum: ChaosQuorum
    workload: object
    loop: object
    rng: random.Random
    kinds: tuple = KINDS
    recovery_timeout_s: float = 60
    faults: list = field(default_factory=list)
    unexpected_exits: list = field(default_factory=list)
    log: list = field(default_factory=list)
    progress: object = None  # called with each line of the fault log as it happens

    def run(self, duration_s: float, *, whole_rounds: bool = False) -> None:
        """Inject faults one after another until `duration_s` has passed (the last one is always healed);
        with `whole_rounds`, go on until the current round has given every kind once."""
        deadline = time.monotonic() + duration_s
        schedule: list[str] = []
        while time.monotonic() < deadline or (whole_rounds and schedule):
            if not schedule:
                schedule = list(self.kinds)
                self.rng.shuffle(schedule)
            self._one(schedule.pop(0))
            self._restart_unexpected_exits()
            time.sleep(self.rng.uniform(0.3, 1.0))

    def _say(self, text: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {text}"
        self.log.append(line)
        if self.progress is not None:
            self.progress(line)

    def leader(self, exclude=()) -> int:
        leader, _ = self.loop.run(find_leader(self.quorum.addresses(), timeout_s=self.recovery_timeout_s,
                                              exclude=set(exclude)), timeout=self.recovery_timeout_s + 10)
        return leader

    def _one(self, kind: str) -> None:
        try:
            leader = self.leader()
        except ControllerUnavailable:
            leader = self.rng.choice(self.quorum.ids)
        followers = [i for i in self.quorum.ids if i != leader]
        fault = getattr(self, "_" + kind)(leader, followers)
        self.faults.append(fault)
        self._wait_recovery(fault)
        self._say(f"{fault.kind} {fault.target} {fault.detail}: unavailable "
                  f"{_fmt(fault.unavailability_s)} s, recovered {_fmt(fault.recovery_s)} s after heal")

    def _wait_recovery(self, fault: Fault) -> None:
        limit = fault.healed + self.recovery_timeout_s
        while time.monotonic() < limit:
            fault.recovered_at = self.workload.first_ack_after(fault.healed)
            if fault.recovered_at is not None:
                break
            time.sleep(0.05)
        fault.unavailable_until = self.workload.first_ack_after(fault.injected)

    def _restart_unexpected_exits(self) -> None:
        for nid, proc in self.quorum.procs.items():
            if proc.poll() is not None and nid not in self.quorum.expected_down:
                self.unexpected_exits.append((nid, proc.returncode, self.quorum.log_tail(nid, 10)))
                self._say(f"voter {nid} exited by itself with {proc.returncode}; restarting it")
                self.quorum.start(nid)

    def _hold(self, lo: float = 1.0, hi: float = 3.0) -> float:
        hold = self.rng.uniform(lo, hi)
        time.sleep(hold)
        return hold

    # ------------------------------------------------------------ process faults
    def _kill(self, kind: str, target: int) -> Fault:
        fault = Fault(kind, f"voter {target}", time.monotonic())
        self.quorum.expected_down.add(target)
        self.quorum.kill(target)
        fault.detail = f"down {self._hold(0.5, 2.0):.1f} s"
        self.quorum.start(target)
        fault.healed = time.monotonic()
        return fault

    def _kill_leader(self, leader, followers) -> Fault:
        return self._kill("kill_leader", leader)

    def _kill_follower(self, leader, followers) -> Fault:
        return self._kill("kill_follower", self.rng.choice(followers))

    def _kill_all(self, leader, followers) -> Fault:
        """SIGKILL every voter at once (a whole-cluster crash; the page cache survives), then restart them."""
        fault = Fault("kill_all", "every voter", time.monotonic())
        self.quorum.expected_down.update(self.quorum.ids)
        for nid in self.quorum.ids:
            self.quorum.kill(nid)
        fault.detail = f"down {self._hold(0.5, 1.5):.1f} s"
        self.quorum.start()
        fault.healed = time.monotonic()
        return fault

    def _power_loss(self, kind: str, targets: list[int]) -> Fault:
        """SIGKILL `targets`, drop what they had not fsynced (PowerLoss of their disks), restart them."""
        fault = Fault(kind, ", ".join(f"voter {t}" for t in targets), time.monotonic())
        self.quorum.expected_down.update(targets)
        for nid in targets:
            self.quorum.kill(nid)
        dropped = sum(self.quorum.lose_unsynced(nid, self.rng) for nid in targets)
        fault.detail = f"dropped {dropped} unsynced bytes, down {self._hold(0.5, 1.5):.1f} s"
        for nid in targets:
            self.quorum.start(nid)
        fault.healed = time.monotonic()
        return fault

    def _power_loss_follower(self, leader, followers) -> Fault:
        return self._power_loss("power_loss_follower", [self.rng.choice(followers)])

    def _power_loss_all(self, leader, followers) -> Fault:
        return self._power_loss("power_loss_all", list(self.quorum.ids))

    def _pause(self, kind: str, target: int) -> Fault:
        fault = Fault(kind, f"voter {target}", time.monotonic())
        self.quorum.pause(target)
        fault.detail = f"stopped {self._hold(1.0, 3.0):.1f} s"
        self.quorum.resume(target)
        fault.healed = time.monotonic()
        return fault

    def _pause_leader(self, leader, followers) -> Fault:
        return self._pause("pause_leader", leader)

    def _pause_follower(self, leader, followers) -> Fault:
        return self._pause("pause_follower", self.rng.choice(followers))

    # ------------------------------------------------------------ network faults
    def _cut(self, kind: str, target: str, links, mode: str, lo: float = 2.0, hi: float = 4.0) -> Fault:
        fault = Fault(kind, target, time.monotonic())
        for src, dst in links:
            self.quorum.proxy.set_mode(src, dst, mode)
        fault.detail = f"{mode} {len(links)} links {self._hold(lo, hi):.1f} s"
        for src, dst in links:
            self.quorum.proxy.set_mode(src, dst, OK)
        fault.healed = time.monotonic()
        return fault

    def _isolate_leader_drop(self, leader, followers) -> Fault:
        links = [(leader, f) for f in followers] + [(f, leader) for f in followers]
        return self._cut("isolate_leader_drop", f"voter {leader}", links, DROP)

    def _isolate_follower_blackhole(self, leader, followers) -> Fault:
        target = self.rng.choice(followers)
        others = [i for i in self.quorum.ids if i != target]
        links = [(target, o) for o in others] + [(o, target) for o in others]
        return self._cut("isolate_follower_blackhole", f"voter {target}", links, BLACKHOLE)

    def _leader_inbound_cut(self, leader, followers) -> Fault:
        # followers cannot reach the leader (no Fetch), the leader still reaches them: one direction only
        return self._cut("leader_inbound_cut", f"voter {leader}", [(f, leader) for f in followers], DROP)

    def _pair_cut_blackhole(self, leader, followers) -> Fault:
        a, b = self.rng.sample(self.quorum.ids, 2)
        return self._cut("pair_cut_blackhole", f"voters {a}<->{b}", [(a, b), (b, a)], BLACKHOLE)

    def _minority_partition(self, leader, followers) -> Fault:
        size = (len(self.quorum.ids) - 1) // 2  # the leader and `size - 1` followers: a minority
        minority = [leader] + self.rng.sample(followers, size - 1)
        majority = [i for i in self.quorum.ids if i not in minority]
        links = [(a, b) for a in minority for b in majority] + [(b, a) for a in minority for b in majority]
        return self._cut("minority_partition", f"{sorted(minority)} | {sorted(majority)}", links, DROP)

    # ------------------------------------------------------------ disk fault
    def _disk_fsync_failure(self, leader, followers) -> Fault:
        target = self.rng.choice([leader, *followers])
        fault = Fault("disk_fsync_failure", f"voter {target}{' (leader)' if target == leader else ''}",
                      time.monotonic())
        trigger = self.quorum.fsync_trigger(target)
        trigger.touch()
        self.quorum.expected_down.add(target)
        outcome, until = "still serving after 20 s", time.monotonic() + 20
        while time.monotonic() < until:
            proc = self.quorum.procs[target]
            if proc.poll() is not None:
                outcome = f"exited with {proc.returncode}"
                break
            if not self.quorum.serving(target):
                outcome = "stopped serving (process alive)"
                break
            time.sleep(0.1)
        fault.detail = f"{outcome} after {time.monotonic() - fault.injected:.1f} s"
        trigger.unlink(missing_ok=True)
        self.quorum.kill(target)
        self.quorum.start(target)
        fault.healed = time.monotonic()
        return fault


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.2f}"
