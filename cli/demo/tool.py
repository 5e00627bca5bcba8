"""kraftsman-demo: a 3-voter KRaft controller quorum on 127.0.0.1, brokers, topics, then the log read back.

The README's main job, on embedded defaults (no flags): format storage for three controllers with
kafka-storage, start them as real processes, attach three simulated brokers, create a topic, let one
broker die until the quorum fences it, unregister it, stop the quorum, and show what the controllers
wrote with kafka-dump-log and kafka-metadata-shell (each record whole, its batch fields left out).
`--directory DIR` keeps the files, and is refused, before anything is written, when a quorum is running
there; Ctrl-C stops everything cleanly.
"""
from __future__ import annotations

import argparse
import io
import re
import tempfile
import time
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from ..common.boundary import exit_with, usage_exit
from ..common.environment import Environment
from ..common.status import ExitStatus, ToolError
from ..common.typer_app import run_app

FAST = {"controller.quorum.election.timeout.ms": "500", "controller.quorum.fetch.timeout.ms": "1000",
        "broker.session.timeout.ms": "2500", "broker.heartbeat.interval.ms": "500",
        "metadata.log.max.record.bytes.between.snapshots": "3000"}
BROKERS = (1001, 1002, 1003)


app = typer.Typer(name="kraftsman-demo", add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


@app.command(help=__doc__.splitlines()[0])
def demo(ctx: typer.Context,
         directory: Annotated[Optional[str], typer.Option(
             "--directory", help="keep the quorum's files in DIR instead of a temporary directory")] = None,
         voters: Annotated[Literal["1", "3", "5"], typer.Option(
             "--voters", help="number of controllers (default 3)")] = "3") -> int:
    return _run(ctx.find_root().obj, argparse.Namespace(directory=directory, voters=int(voters)))


class _Say:
    def __init__(self, env: Environment):
        self.env, self.start = env, time.monotonic()

    def __call__(self, text: str) -> None:
        self.env.stdout.write(f"[{time.monotonic() - self.start:5.1f}s] {text}\n")
        self.env.stdout.flush()


async def _scenario(quorum, say) -> None:
    from kraftsman.controller.client.broker_sim import SimulatedBroker
    from kraftsman.controller.client.controller_client import ActiveControllerClient, ControllerUnavailable, find_leader

    client = ActiveControllerClient(list(quorum.addresses().values()), timeout_ms=20_000)
    try:
        _, leader = await find_leader(quorum.addresses())
    except ControllerUnavailable as e:
        raise ToolError(str(e), ExitStatus.UNAVAILABLE) from None
    say(f"quorum is up: controller {leader.leader_id} leads epoch {leader.leader_epoch}, "
        f"high watermark {leader.high_watermark}")
    sims = [SimulatedBroker(b, quorum.addresses(), quorum.cluster_id, heartbeat_interval_ms=500) for b in BROKERS]
    for sim in sims:
        await sim.start()
    await _until(lambda: all(not s.fenced for s in sims), 20)
    say(f"brokers {', '.join(map(str, BROKERS))} registered (epochs "
        f"{', '.join(str(s.broker_epoch) for s in sims)}) and unfenced")
    created = await client.request("CreateTopics", 7, _create_topics("orders", 6, 3))
    topic = created.topics[0]
    say(f"created topic orders: {topic.num_partitions} partitions, replication factor {topic.replication_factor}, "
        f"error {topic.error_code}")
    victim = sims[-1]
    victim.crash()
    say(f"broker {victim.broker_id} stopped heartbeating (crashed)")
    await _until(lambda: _registered(client, victim.broker_id), 20, negate=True)
    say(f"the active controller fenced broker {victim.broker_id} after its session timed out")
    unregistered = await client.request("UnregisterBroker", 0, _unregister(victim.broker_id))
    say(f"unregistered broker {victim.broker_id} (error code {unregistered.error_code})")
    for sim in sims:
        await sim.stop()
    await client.close()


async def _registered(client, broker_id: int) -> bool:
    from kraftsman.storage.protocol import codec

    body = codec.message_class("DescribeClusterRequest")(endpoint_type=1)
    response = await client.request("DescribeCluster", 1, body)
    return any(b.broker_id == broker_id for b in response.brokers)


async def _until(predicate, timeout: float, negate: bool = False) -> None:
    import asyncio
    import inspect

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if bool(value) != negate:
            return
        await asyncio.sleep(0.1)
    raise ToolError("the demo timed out waiting for the quorum", ExitStatus.UNAVAILABLE)


def _create_topics(name: str, partitions: int, replication: int):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("CreateTopicsRequest")
    topic = cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=replication)
    return cls(topics=[topic], timeout_ms=15_000, validate_only=False)


def _unregister(broker_id: int):
    from kraftsman.storage.protocol import codec

    return codec.message_class("UnregisterBrokerRequest")(broker_id=broker_id)


def _show(quorum, node_id: int, say, env: Environment) -> None:
    from ..dump_log import tool as dump_log
    from ..shell import tool as metadata_shell

    pdir = quorum.partition_dir(node_id)
    segments = sorted(str(p) for p in pdir.glob("*.log"))
    say(f"kafka-dump-log --cluster-metadata-decoder --files {','.join(segments)} (last lines)")
    out = io.StringIO()
    dump_log.run(["--cluster-metadata-decoder", "--files", ",".join(segments)], Environment(stdout=out))
    lines = [line for line in out.getvalue().splitlines() if line.startswith("| offset")]
    for line in lines[-6:]:
        env.stdout.write(f"    {record_line(line)}\n")
    say(f"kafka-metadata-shell --directory {pdir} (ls /image/topics/byName; ls /image/cluster/brokers)")
    for command in ("ls /image/topics/byName", "ls /image/cluster/brokers"):
        out = io.StringIO()
        metadata_shell.run(["--directory", str(pdir), *command.split()], Environment(stdout=out))
        env.stdout.write("".join(f"    {line}\n" for line in out.getvalue().splitlines()))


def record_line(line: str) -> str:
    """Return a dump-log record line whole, without its batch fields: `offset N: <payload>` (the payload is the
    part worth seeing, and a cut at the terminal's width would fall inside it)."""
    match = _RECORD.match(line)
    return f"offset {match.group(1)}: {match.group(2)}" if match else line


_RECORD = re.compile(r"^\| offset: (\d+) .*? payload: (.*)$")


def run(argv: list[str], env: Environment) -> int:
    """Run the demo end to end; return 0 when every step happened."""
    return run_app(app, argv, env, prog="kraftsman-demo", tool_env_name="demo",
                   usage_status=lambda argv: usage_exit("kraftsman-demo", argv))


def _run(env: Environment, args: argparse.Namespace) -> int:
    import asyncio  # after parsing: --help stays fast

    from .local_quorum import LocalQuorum

    say = _Say(env)
    with tempfile.TemporaryDirectory(prefix="kraftsman-demo-") as tmp:
        base = Path(args.directory) if args.directory else Path(tmp)
        quorum = LocalQuorum(base, args.voters, extra=FAST)
        busy = quorum.running_nodes()
        if busy:   # refuse before touching anything: formatting would rewrite the running nodes' properties
            raise ToolError(f"{base} is in use: a quorum is running there ({', '.join(busy)} locked by a running "
                            "controller); stop it first, or give another --directory")
        quorum.format()
        say(f"formatted {args.voters} controllers with kafka-storage under {base} (cluster {quorum.cluster_id})")
        try:
            quorum.start()
            quorum.wait_listening()
            asyncio.run(_scenario(quorum, say))
        finally:
            quorum.stop()
        say("stopped the quorum (SIGTERM, clean shutdown)")
        _show(quorum, quorum.ids[0], say, env)
    return ExitStatus.OK


def main() -> None:
    """Console entry point."""
    exit_with(run, "kraftsman-demo")
