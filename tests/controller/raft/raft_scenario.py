"""Data-driven raft scenarios (etcd-io/raft style): a script of commands, each followed by the
output it must produce; KRAFTSMAN_REWRITE=1 regenerates the expected blocks.

File format: a command line, a line `----`, the expected output, then a blank line. `#` lines
outside blocks are comments.

Commands:
  add-nodes voters=1,2,3 [observers=4,5] [kraft=1] [snapshot-every=N] [retention-bytes=N] [pre-vote=false]
  campaign N             node N's election timer fires now
  tick N [nodes=1,2]     advance the clock N ticks (only the listed nodes tick)
  deliver [from=A] [to=B] deliver the queued messages (matching) once, printing them
  stabilize              deliver until no message is left
  drop [from=A] [to=B]   discard queued messages (matching)
  partition 1 | 2,3      cut links between groups; heal
  propose N|leader [count=K]  node N (or the current leader) appends one batch of K records
  crash N / restart N    crash keeps only flushed log, snapshots and persisted quorum-state
  resign N               leader N resigns gracefully (EndQuorumEpoch)
  add-voter N / remove-voter N / describe-quorum   admin requests to the current leader
  status / log N / voters N
"""
from __future__ import annotations

import os
from pathlib import Path

from raft_harness import Cluster, dir_id

from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft.core import NotLeaderError
from kraftsman.storage.protocol.errors import error_name
from kraftsman.storage.protocol.uuids import Uuid

SEPARATOR = "----"


def parse(text: str) -> list[tuple[list[str], str, str]]:
    """Return [(comment lines, command, expected output)] from a scenario file."""
    cases, lines, i, comments = [], text.splitlines(), 0, []
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        if line.startswith("#"):
            comments.append(line)
            continue
        if not line:
            continue
        if i >= len(lines) or lines[i].rstrip() != SEPARATOR:
            raise ValueError(f"line {i}: command {line!r} is not followed by {SEPARATOR}")
        i += 1
        out = []
        while i < len(lines) and lines[i].strip():
            out.append(lines[i].rstrip())
            i += 1
        cases.append((comments, line, "\n".join(out)))
        comments = []
    return cases


def render(cases) -> str:
    parts = []
    for comments, cmd, out in cases:
        parts.append("\n".join([*comments, cmd, SEPARATOR, out]) + "\n")
    return "\n".join(parts)


def _kv(args):
    return dict(a.split("=", 1) for a in args if "=" in a)


def _ids(text: str):
    return tuple(int(x) for x in text.split(",") if x)


def describe_env(env) -> str:
    b, name = env.body, env.name
    pre = " pre-vote" if env.pre_vote else ""
    head = f"{env.src}->{env.dst} {name}{pre}"
    try:
        part = msg.partition_of(b)
    except (msg.Malformed, AttributeError):
        part = None
    err = getattr(b, "error_code", 0) or (getattr(part, "error_code", 0) if part is not None else 0)
    tail = f" error={error_name(err, '{code}')}" if err else ""
    if part is None:
        return head + tail
    return head + _detail(name, b, part) + tail


def _detail(name, b, p) -> str:
    if name == "VoteRequest":
        return f" epoch={p.candidate_epoch} last=({p.last_offset_epoch},{p.last_offset})"
    if name == "VoteResponse":
        return f" epoch={p.leader_epoch} leader={p.leader_id} granted={p.vote_granted}"
    if name.startswith(("BeginQuorumEpoch", "EndQuorumEpoch")):
        return f" epoch={p.leader_epoch} leader={p.leader_id}"
    if name == "FetchRequest":
        return f" epoch={p.current_leader_epoch} offset={p.fetch_offset} last_epoch={p.last_fetched_epoch}"
    if name == "FetchResponse":
        return _fetch_response(p)
    if name == "FetchSnapshotRequest":
        return f" snapshot=({p.snapshot_id.end_offset},{p.snapshot_id.epoch}) position={p.position}"
    if name == "FetchSnapshotResponse":
        return (f" snapshot=({p.snapshot_id.end_offset},{p.snapshot_id.epoch}) size={p.size} "
                f"position={p.position} bytes={len(p.unaligned_records)}")
    return ""


def _fetch_response(p) -> str:
    out = f" epoch={p.current_leader.leader_epoch} leader={p.current_leader.leader_id} hw={p.high_watermark}"
    if p.diverging_epoch.epoch >= 0 or p.diverging_epoch.end_offset >= 0:
        out += f" diverging=({p.diverging_epoch.epoch},{p.diverging_epoch.end_offset})"
    if p.snapshot_id.end_offset >= 0:
        out += f" snapshot=({p.snapshot_id.end_offset},{p.snapshot_id.epoch})"
    if p.records:
        from kraftsman.controller.raft.records import split_batches
        batches = split_batches(p.records)
        out += f" records={batches[0].base_offset}..{batches[-1].last_offset}"
    return out


class Runner:
    """Executes scenario commands against a Cluster and returns their output text."""

    def __init__(self):
        self.c: Cluster | None = None

    def run(self, line: str) -> str:
        words = line.split()
        fn = getattr(self, "cmd_" + words[0].replace("-", "_"), None)
        if fn is None:
            raise ValueError(f"unknown command {words[0]!r}")
        return fn(words[1:])

    # ------------------------------------------------------------ observation
    def _snapshot(self):
        return {n: (b.alive, b.node.role, b.node.epoch, b.node.leader_id, b.node.high_watermark)
                for n, b in self.c.boxes.items()}

    def _changes(self, before) -> list[str]:
        out = []
        for n, now in self._snapshot().items():
            old = before.get(n)
            if old is None or old == now:
                continue
            if old[1:4] != now[1:4]:
                out.append(f"{n}: {old[1]}@{old[2]} -> {now[1]}@{now[2]} leader={now[3]}")
            elif old[4] != now[4]:
                out.append(f"{n}: hw {old[4]} -> {now[4]}")
        return out

    def _status_line(self, n, b) -> str:
        node = b.node
        if not b.alive:
            return f"{n}: down"
        return (f"{n}: {node.role} epoch={node.epoch} leader={node.leader_id} voted={node.state.voted_id} "
                f"hw={node.high_watermark} log=[{b.log.start_offset},{b.log.end_offset}) "
                f"applied={b.sm.applied}")

    def _queued(self, since: int) -> list[str]:
        return [describe_env(env) for _, seq, env in sorted(self.c.net.queue, key=lambda m: m[1]) if seq > since]

    def _with_changes(self, action) -> str:
        before, seq = self._snapshot(), self.c.net.seq
        lines = action() or []
        lines += self._changes(before)
        lines += ["sent " + m for m in self._queued(seq)]
        return "\n".join(lines) if lines else "ok"

    # ------------------------------------------------------------ commands
    def cmd_add_nodes(self, args) -> str:
        kv = _kv(args)
        overrides = {}
        if "snapshot-every" in kv:
            overrides["snapshot_every_records"] = int(kv["snapshot-every"])
        if "retention-bytes" in kv:  # metadata.max.retention.bytes (0: only the newest snapshot is kept)
            overrides["retention_max_bytes"] = int(kv["retention-bytes"])
        if kv.get("pre-vote") == "false":
            overrides["pre_vote"] = False
        if kv.get("check-quorum") == "false":
            overrides["check_quorum"] = False
        self.c = Cluster(0, _ids(kv.get("voters", "1,2,3")), _ids(kv.get("observers", "")), int(kv.get("kraft", "0")),
                         wire=True, snapshot_chunk_bytes=int(kv.get("chunk", "1048576")), **overrides)
        self.c.net.queue.clear()
        return self.cmd_status([])

    def cmd_status(self, args) -> str:
        return "\n".join(self._status_line(n, b) for n, b in sorted(self.c.boxes.items()))

    def cmd_log(self, args) -> str:
        box = self.c.boxes[int(args[0])]
        lines = [f"start={box.log.start_offset} end={box.log.end_offset} durable={box.log.durable_end}"]
        for sid in sorted(box.log.snapshots):
            lines.append(f"snapshot end_offset={sid.end_offset} epoch={sid.epoch}")
        for b in box.log.batches:
            kind = "control " + ",".join(str(k) for k, _ in b.control_records()) if b.is_control else "data"
            lines.append(f"{b.base_offset}..{b.last_offset} epoch={b.epoch} {kind}")
        return "\n".join(lines)

    def cmd_voters(self, args) -> str:
        node = self.c.boxes[int(args[0])].node
        return f"voters={sorted(node.voters.ids())} kraft_version={node.kraft_version}"

    def cmd_campaign(self, args) -> str:
        box = self.c.boxes[int(args[0])]
        return self._with_changes(lambda: (box.node.on_election_timeout(), self.c.process(box)) and None)

    def cmd_tick(self, args) -> str:
        kv = _kv(args)
        ids = _ids(kv["nodes"]) if "nodes" in kv else None
        return self._with_changes(lambda: self.c.advance_clock(int(args[0]) if args and "=" not in args[0] else 1, ids))

    def _matching(self, args):
        kv = _kv(args)
        src, dst = kv.get("from"), kv.get("to")
        return lambda env: (src is None or env.src == int(src)) and (dst is None or env.dst == int(dst))

    def cmd_deliver(self, args) -> str:
        match = self._matching(args)
        picked = [m for m in sorted(self.c.net.queue, key=lambda m: m[1]) if match(m[2])]
        self.c.net.queue = [m for m in self.c.net.queue if not match(m[2])]

        def act():
            lines = []
            for _, _, env in picked:
                if self.c.deliver(env):
                    lines.append("delivered " + describe_env(env))
            return lines
        return self._with_changes(act)

    def cmd_run(self, args) -> str:
        """Tick N times, delivering everything (and its consequences) after each tick."""
        def act():
            for _ in range(int(args[0])):
                self.c.advance_clock(1)
                self.c.deliver_all()
        return self._with_changes(lambda: act() and None)

    def cmd_step_unsynced(self, args) -> str:
        """Deliver matching messages without handling Ready (nothing persisted or sent yet)."""
        match = self._matching(args)
        picked = [m for m in sorted(self.c.net.queue, key=lambda m: m[1]) if match(m[2])]
        self.c.net.queue = [m for m in self.c.net.queue if not match(m[2])]
        before = self._snapshot()
        lines = []
        for _, _, env in picked:
            self.c.boxes[env.dst].node.step(env)
            lines.append("stepped " + describe_env(env))
        return "\n".join(lines + self._changes(before))

    def cmd_request(self, args) -> str:
        """Send a crafted request and print the reply: request to=N kind=vote|prevote|begin|end|fetch ..."""
        kv = _kv(args)
        dst, src, epoch = int(kv["to"]), int(kv.get("from", "1")), int(kv.get("epoch", "1"))
        cluster = kv.get("cluster", self.c.boxes[dst].cfg.cluster_id)
        cluster = None if cluster == "null" else cluster
        body = _crafted(kv["kind"], cluster, src, dst, epoch, kv)
        from kraftsman.controller.raft.messages import Envelope
        env = Envelope(src, dst, 999, body, kv["kind"] == "prevote")
        before, seq = self._snapshot(), self.c.net.seq
        self.c.deliver(env)
        replies = [describe_env(m[2]) for m in sorted(self.c.net.queue, key=lambda m: m[1])
                   if m[1] > seq and m[2].correlation_id == 999]
        self.c.net.queue = [m for m in self.c.net.queue if not (m[1] > seq and m[2].correlation_id == 999)]
        return "\n".join(["reply " + r for r in replies] + self._changes(before))

    def cmd_stabilize(self, args) -> str:
        return self._with_changes(lambda: [f"delivered {self.c.deliver_all()} messages"])

    def cmd_drop(self, args) -> str:
        match = self._matching(args)
        n = len(self.c.net.queue)
        self.c.net.queue = [m for m in self.c.net.queue if not match(m[2])]
        return f"dropped {n - len(self.c.net.queue)}"

    def cmd_partition(self, args) -> str:
        groups = [_ids(g) for g in " ".join(args).replace(" ", "").split("|")]
        self.c.net.partition(groups)
        return "ok"

    def cmd_heal(self, args) -> str:
        self.c.net.heal()
        return "ok"

    def cmd_propose(self, args) -> str:
        nid = self._leader() if args[0] == "leader" else int(args[0])
        count = int(_kv(args).get("count", "1"))
        try:
            offset, epoch = self.c.propose(nid, [f"r{i}".encode() for i in range(count)])
        except NotLeaderError as e:
            return f"error: {e}"
        return self._with_changes(lambda: [f"appended offset={offset} epoch={epoch}"])

    def cmd_crash(self, args) -> str:
        self.c.crash(int(args[0]))
        return self.cmd_status([])

    def cmd_restart(self, args) -> str:
        nid = int(args[0])
        return self._with_changes(lambda: (self.c.restart(nid), [self._status_line(nid, self.c.boxes[nid])])[1])

    def cmd_resign(self, args) -> str:
        box = self.c.boxes[int(args[0])]
        return self._with_changes(lambda: (box.node.resign(), self.c.process(box)) and None)

    def _leader(self) -> int:
        leader = self.c.leader()
        if leader is None:
            raise ValueError("no leader")
        return leader

    def _admin(self, body) -> str:
        leader = self._leader()
        self.c.admin(leader, body)
        self.c.deliver_all()
        out = [f"to leader {leader}"]
        for env in self.c.admin_inbox:
            out.append(f"response {env.name} error={error_name(env.body.error_code, 'None')}")
        self.c.admin_inbox.clear()
        return "\n".join(out)

    def cmd_add_voter(self, args) -> str:
        nid = int(args[0])
        cls = msg.M["AddRaftVoterRequest"]
        body = cls(cluster_id=self.c.boxes[nid].cfg.cluster_id, timeout_ms=30000, voter_id=nid,
                   voter_directory_id=Uuid(bytes(dir_id(nid))),
                   listeners=[cls.Listener(name="CONTROLLER", host="localhost", port=9000 + nid)],
                   ack_when_committed=_kv(args).get("ack", "true") == "true")    # v1 (Kafka 4.2)
        return self._admin(body)

    def cmd_remove_voter(self, args) -> str:
        nid = int(args[0])
        body = msg.M["RemoveRaftVoterRequest"](cluster_id=self.c.boxes[nid].cfg.cluster_id, voter_id=nid,
                                                voter_directory_id=Uuid(bytes(dir_id(nid))))
        return self._admin(body)

    def cmd_describe_quorum(self, args) -> str:
        leader = self._leader()
        self.c.admin(leader, msg.describe_quorum_request())
        self.c.deliver_all()
        env = self.c.admin_inbox.pop()
        p = env.body.topics[0].partitions[0]
        lines = [f"leader={p.leader_id} epoch={p.leader_epoch} hw={p.high_watermark}"]
        lines += [f"voter {r.replica_id} end={r.log_end_offset}" for r in p.current_voters]
        lines += [f"observer {r.replica_id} end={r.log_end_offset}" for r in p.observers]
        return "\n".join(lines)


def _crafted(kind, cluster, src, dst, epoch, kv):
    offset, last_epoch = int(kv.get("offset", "0")), int(kv.get("last-epoch", "0"))
    if kind in ("vote", "prevote"):
        return msg.vote_request(cluster, epoch, src, bytes(16), int(kv.get("voter", dst)), bytes(16), last_epoch,
                                offset)
    if kind == "begin":
        return msg.begin_epoch_request(cluster, epoch, src, dst, bytes(16))
    if kind == "end":
        return msg.end_epoch_request(cluster, epoch, src, [])
    if kind == "fetch":
        return msg.fetch_request(cluster, src, epoch, offset, last_epoch, 0, 1 << 20)
    if kind == "malformed-fetch":
        body = msg.fetch_request(cluster, src, epoch, offset, last_epoch, 0, 1 << 20)
        body.topics[0].partitions.append(body.topics[0].partitions[0])
        return body
    if kind == "describe":
        return msg.describe_quorum_request()
    raise ValueError(f"unknown request kind {kind}")


def run_file(path: Path, rewrite: bool | None = None) -> list[tuple[str, str, str]]:
    """Run a scenario; return [(command, expected, actual)] mismatches (rewriting when asked)."""
    rewrite = os.environ.get("KRAFTSMAN_REWRITE") == "1" if rewrite is None else rewrite
    runner, results, mismatches = Runner(), [], []
    for comments, cmd, expected in parse(path.read_text()):
        actual = runner.run(cmd)
        results.append((comments, cmd, actual))
        if actual != expected:
            mismatches.append((cmd, expected, actual))
    if rewrite:
        path.write_text(render(results))
        return []
    return mismatches
