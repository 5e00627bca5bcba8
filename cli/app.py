"""The tool registry: every kraftsman tool named once.

Rules:
- One row per tool: its console script, its `kraftsman` sub-command, the module whose `run(argv, env)` runs it,
  the name in its KRAFTSMAN_<TOOL>_<FLAG> variables, a one-line summary, and whether it keeps Kafka's jopt-simple
  manners (Kafka's help on stderr with exit 1, Kafka's version: common/jopt.py).
- Everything that lists tools reads this table: the umbrella's dispatch and help (main.py), man pages and
  completions (docs/pages.py), the environment layer; [project.scripts] in pyproject.toml is checked against it
  (tests/test_packaging.py), since setuptools cannot read it.
- Nothing heavy is imported here: the table is data, modules are imported when a tool runs.
"""
from __future__ import annotations

from dataclasses import dataclass

UMBRELLA = "kraftsman"


@dataclass(frozen=True)
class Tool:
    """One tool: console script, umbrella sub-command, module, environment name, summary."""

    script: str
    command: str
    module: str
    env_name: str
    summary: str
    kafka: bool = True           # a drop-in for a Kafka script of the same name (Kafka's exit codes)
    entry: str = "main"          # the module's console entry point
    jopt: bool = False           # Kafka's jopt-simple manners: --help on stderr (exit 1)
    kafka_version: bool = False  # --version prints the Kafka release it speaks for, as Kafka's admin tools do


TOOLS: tuple[Tool, ...] = (
    Tool("kafka-storage", "storage", "kraftsman.cli.storage.tool", "storage",
         "Format and inspect KRaft log directories."),
    Tool("kafka-dump-log", "dump-log", "kraftsman.cli.dump_log.tool", "dump_log",
         "Print log segments, snapshots and indexes.", jopt=True),
    Tool("kafka-metadata-shell", "shell", "kraftsman.cli.shell.tool", "shell",
         "Browse cluster metadata as a tree."),
    Tool("kafka-cluster", "cluster", "kraftsman.cli.cluster.tool", "cluster",
         "Show the cluster id, list endpoints, unregister brokers."),
    Tool("kafka-metadata-quorum", "quorum", "kraftsman.cli.quorum.tool", "quorum",
         "Describe the KRaft metadata quorum (leader, high watermark, replication lag)."),
    Tool("kafka-features", "features", "kraftsman.cli.features.tool", "features",
         "Describe, upgrade, downgrade and disable feature flags (metadata.version)."),
    Tool("kafka-topics", "topics", "kraftsman.cli.topics.tool", "topics",
         "Create, list, describe, alter and delete topics.", jopt=True, kafka_version=True),
    Tool("kafka-configs", "configs", "kraftsman.cli.configs.tool", "configs",
         "Describe and alter topic, broker, user, client and ip configs, quotas and SCRAM credentials.", jopt=True,
         kafka_version=True),
    Tool("kafka-acls", "acls", "kraftsman.cli.acls.tool", "acls", "List, add and remove ACLs.", jopt=True,
         kafka_version=True),
    Tool("kafka-broker-api-versions", "broker-api-versions", "kraftsman.cli.api_versions.tool", "broker_api_versions",
         "Show the API versions every broker (or controller) speaks.", jopt=True, kafka_version=True),
    Tool("kafka-leader-election", "leader-election", "kraftsman.cli.leader_election.tool", "leader_election",
         "Elect preferred or unclean partition leaders.", jopt=True, kafka_version=True),
    Tool("kafka-reassign-partitions", "reassign", "kraftsman.cli.reassign.tool", "reassign",
         "Generate, execute, verify, cancel and list partition reassignments.", jopt=True, kafka_version=True),
    Tool("kafka-controller", "controller", "kraftsman.cli.controller.tool", "controller",
         "Run a KRaft controller in the foreground.", kafka=False),
    Tool("kraftsman-demo", "demo", "kraftsman.cli.demo.tool", "demo",
         "Start a 3-controller quorum and brokers on 127.0.0.1, fence one, then show the log they wrote.",
         kafka=False),
    Tool("kafka-metadata-export", "pipeline", "kraftsman.cli.pipeline.command", "pipeline",
         "Decode metadata logs into tables with Spark (pyspark extra).", kafka=False),
)
@dataclass(frozen=True)
class UmbrellaCommand:
    """A `kraftsman` sub-command that is not a Kafka tool (no console script of its own)."""

    command: str
    module: str
    summary: str


UMBRELLA_COMMANDS: tuple[UmbrellaCommand, ...] = (
    UmbrellaCommand("profile", "kraftsman.cli.profile.tool",
                    "Manage connection profiles (bootstrap, client settings, timeout, output)."),
    UmbrellaCommand("completion", "kraftsman.cli.completion.tool",
                    "Print the bash, zsh or fish completion of every tool (source <(kraftsman completion bash))."),
    UmbrellaCommand("man", "kraftsman.cli.docs.tool",
                    "Show a tool's man page, or install every page where man finds it (kraftsman man --install)."),
)


def by_script(script: str) -> Tool | None:
    """Return the tool whose console script is `script`, or None."""
    return next((t for t in TOOLS if t.script == script), None)


def by_command(command: str) -> Tool | None:
    """Return the tool run by `kraftsman <command>`, or None."""
    return next((t for t in TOOLS if t.command == command), None)


def console_scripts() -> dict[str, str]:
    """Return [project.scripts] as it must read: the umbrella, then every tool."""
    scripts = {UMBRELLA: "kraftsman.cli.main:main"}
    scripts.update({t.script: f"{t.module}:{t.entry}" for t in TOOLS})
    return scripts
