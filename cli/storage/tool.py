"""kafka-storage: format and inspect KRaft log directories (Kafka 3.9's StorageTool), as a typer app.

Sub-commands, in Kafka's order: info, format, version-mapping, feature-dependencies, random-uuid
(version-mapping and feature-dependencies are Kafka 4.0's, KIP-1022; their help says so). Each is one typer
function (flags and help) calling its implementation in commands.py (info.py and config.py below it).

Rules:
- Kafka's flags, long and short, and Kafka's texts; `@file` arguments are read as argparse4j's fromFilePrefix
  does (one argument per line). --format's -s/-N/-I are mutually exclusive, with argparse's words.
- A bad command line is argparse's usage error on stderr, exit 1 (Kafka's code, also with --output json).
- Every long option reads KRAFTSMAN_STORAGE_<FLAG> (common.typer_app); a variable for one of -s/-N/-I is
  ignored when another of them is on the command line.
- Help follows KRAFTSMAN_KAFKA_VERSION where Kafka's does: --release-version's bounds, and -s/-N/-I's words (4.2
  rewrote them); a run leaves the declared 3.9 texts behind, which the man pages and completions are built from.

Exit codes: 0 success; 1 any failure (Kafka's); 3 (FOREIGN, kraftsman) when a directory is formatted for
another node or cluster: `info` whose meta.properties disagrees with the config's node.id (or cluster.id, when the
config sets one), in text and in --output json|yaml alike; `format --output json|yaml` meeting Kafka's
`Invalid cluster.id` / `Stored node id` refusal (text keeps Kafka's 1).

`--output json` or `yaml` (info and format, kraftsman only) prints one object, the same in both formats
(cli/schemas/storage.schema.json):
  {"directories": [{"path", "state", "cluster_id", "node_id", "directory_id", "problems"}],
   "problems": [...], "status": <exit code>}   (format adds "metadata_version" and "messages")
state is one of: missing, not_a_directory, empty, formatted, error (info) and
formatted_now, already_formatted, unreadable (format).
"""
from __future__ import annotations

import argparse
from typing import Annotated, Literal, Optional

import click
import typer

from kraftsman.storage.metadata_versions import TABLES

from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.release_help import KAFKA_4_0
from ..common.status import ExitStatus
from ..common.typer_app import run_app
from ..completion import completers
from . import commands
from .commands import MISSING_VOTERS, Failure, version_mapping_text  # noqa: F401 (API)
from .info import info_text  # noqa: F401 (API)

PROG = "kafka-storage"
SCRAM_HELP = ("A SCRAM_CREDENTIAL to add to the __cluster_metadata log e.g.\n"
              "'SCRAM-SHA-256=[name=alice,password=alice-secret]'\n"
              "'SCRAM-SHA-512=[name=alice,iterations=8192,salt=\"N3E=\",saltedpassword=\"YCE=\"]'")
_EXAMPLE_QUORUM = ("0@example.com:8082:JEXY6aqzQY-32P5TStzaFg,1@example.com:8083:MvDxzVmcRsaTz33bUuRU6A,"
                   "2@example.com:8084:07R5amHmR32VDA6jHkGbTA")
INITIAL_CONTROLLERS_HELP = (
    "Used to initialize a server with a specific dynamic quorum topology. The argument is a comma-separated "
    "list of id@hostname:port:directory. The same values must be used to format all nodes. For example:\n"
    f"{_EXAMPLE_QUORUM}\n")
_MUST_NOT_SET = ("When setting this flag, the controller.quorum.voters config {verb} not be set, and "
                 "controller.quorum.bootstrap.servers is set instead.")
# -s/-N/-I as Kafka 4.2 words them (3.9 to 4.1 use the texts in format_'s signature); _release_texts gives them
QUORUM_HELP_4_2 = {
    "standalone": "Used to initialize a controller as a single-node dynamic quorum. "
                  + _MUST_NOT_SET.format(verb="must"),
    "no_initial_controllers": "Used to initialize a server without specifying a dynamic quorum. "
                              + _MUST_NOT_SET.format(verb="should"),
    "initial_controllers": "Used to initialize a server with the specified dynamic quorum. The argument is a "
                           "comma-separated list of id@hostname:port:directory. The same values must be used to "
                           f"format all nodes. For example:\n{_EXAMPLE_QUORUM}\n. " + _MUST_NOT_SET.format(verb="must"),
}
LATEST = str(TABLES["3.9"].latest_production)
QUORUM_FLAGS = ("standalone", "no_initial_controllers", "initial_controllers")
QUORUM_NAMES = {"standalone": "--standalone/-s", "no_initial_controllers": "--no-initial-controllers/-N",
                "initial_controllers": "--initial-controllers/-I"}

Config = Annotated[str, typer.Option("--config", "-c", help="The Kafka configuration file to use.")]
Output = Annotated[Literal["text", "json", "yaml"], typer.Option(
    "--output", help="kraftsman: print Kafka's text, or one JSON or YAML object (the same object; "
                     "schemas/storage.schema.json).")]
RELEASE_HELP = ("The release version to use for the initial feature settings. The minimum is {minimum}; the default "
                "is {latest}")
MAPPING_RELEASE_HELP = KAFKA_4_0 + ("The release version to use for the corresponding feature mapping. The minimum is "
                                    "{minimum}; the default is {latest}")
ReleaseVersion = Annotated[Optional[str], typer.Option(
    "--release-version", "-r", autocompletion=completers.release_versions,
    help=RELEASE_HELP.format(minimum="3.0-IV0", latest=LATEST))]

app = typer.Typer(name=PROG, help="The Kafka storage tool.", add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


@app.command("info", help="Get information about the Kafka log directories on this node.")
def info(ctx: typer.Context, config: Config, output: Output = "text") -> int:
    return _command(ctx, locals(), commands.info)


@app.command("format", help="Format the Kafka log directories on this node.")
def format_(ctx: typer.Context, config: Config,
            cluster_id: Annotated[str, typer.Option("--cluster-id", "-t", help="The cluster ID to use.")],
            add_scram: Annotated[Optional[list[str]], typer.Option("--add-scram", "-S", help=SCRAM_HELP)] = None,
            ignore_formatted: Annotated[bool, typer.Option(
                "--ignore-formatted", "-g", help="When this option is passed, the format command will skip over "
                                                 "already formatted directories rather than failing.")] = False,
            release_version: ReleaseVersion = None,
            feature: Annotated[Optional[list[str]], typer.Option(
                "--feature", "-f", autocompletion=completers.feature_levels,
                help="The setting to use for a specific feature, in feature=level format. For "
                                        "example: `kraft.version=1`.")] = None,
            standalone: Annotated[bool, typer.Option(
                "--standalone", "-s", help="Used to initialize a controller as a single-node dynamic quorum.")] = False,
            no_initial_controllers: Annotated[bool, typer.Option(
                "--no-initial-controllers", "-N",
                help="Used to initialize a server without a dynamic quorum topology.")] = False,
            initial_controllers: Annotated[Optional[str], typer.Option(
                "--initial-controllers", "-I", help=INITIAL_CONTROLLERS_HELP)] = None,
            output: Output = "text") -> int:
    return _command(ctx, _one_quorum_flag(ctx, dict(locals())), commands.format_)


@app.command("version-mapping", help=KAFKA_4_0 + "Look up the corresponding features for a given metadata version. "
                                     "Using the command with no --release-version  argument will return the mapping "
                                     "for the latest stable metadata version")
def version_mapping(ctx: typer.Context, release_version: Annotated[Optional[str], typer.Option(
        "--release-version", "-r", autocompletion=completers.release_versions,
        help=MAPPING_RELEASE_HELP.format(minimum="3.0-IV0", latest=LATEST))] = None
                    ) -> int:
    return _command(ctx, locals(), commands.version_mapping)


@app.command("feature-dependencies", help=KAFKA_4_0 + "Look up dependencies for a given feature version. If the "
                                          "feature is not known or the version not yet defined, an error is thrown. "
                                          "Multiple features can be specified.")
def feature_dependencies(ctx: typer.Context, feature: Annotated[list[str], typer.Option(
        "--feature", "-f", autocompletion=completers.feature_levels,
        help=KAFKA_4_0 + "The feature and version to look up dependencies for, in "
                                            "feature=version format.")]) -> int:
    return _command(ctx, locals(), commands.feature_dependencies)


@app.command("random-uuid", help="Print a random UUID.")
def random_uuid(ctx: typer.Context, count: Annotated[int, typer.Option(
        "--count", help="kraftsman: how many UUIDs to print.")] = 1) -> int:
    return _command(ctx, locals(), commands.random_uuid)


def _one_quorum_flag(ctx: typer.Context, values: dict) -> dict:
    """Apply the mutually exclusive -s/-N/-I: two on the command line are a usage error; a variable for one is
    dropped when another is on the command line."""
    given = [n for n in QUORUM_FLAGS if _set(values[n])]
    typed = [n for n in given if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE]
    if len(typed) > 1 or (len(given) > 1 and not typed):
        first, second = (typed if len(typed) > 1 else given)[:2]
        raise click.UsageError(f"argument {QUORUM_NAMES[second]}: not allowed with argument "
                               f"{QUORUM_NAMES[first]}", ctx)
    for name in given:
        if typed and name not in typed:
            values[name] = None if name == "initial_controllers" else False
    return values


def _set(value) -> bool:
    return value is not None and value is not False


def _command(ctx: typer.Context, values: dict, implementation) -> int:
    """Run `implementation(args, env)` on the namespace of the typer function's parameters (`values`); a Failure is
    one line on stderr."""
    env: Environment = ctx.find_root().obj
    args = argparse.Namespace(command=ctx.info_name, **{k: v for k, v in values.items() if k != "ctx"})
    try:
        return implementation(args, env)
    except Failure as e:
        env.stderr.write(" ".join(str(e).split()) + "\n")
        if e.hint:
            env.stderr.write(f"{PROG}: hint: {e.hint}\n")
        return e.status


def expand_argument_files(argv: list[str]) -> list[str]:
    """Replace each `@file` argument with the file's lines, one argument each (argparse4j's fromFilePrefix)."""
    expanded = []
    for word in argv:
        if not word.startswith("@") or len(word) == 1:
            expanded.append(word)
            continue
        try:
            with open(word[1:], encoding="utf-8") as f:
                expanded.extend(expand_argument_files(f.read().splitlines()))
        except OSError as e:
            raise click.UsageError(f"{e.strerror}: {word[1:]}") from None
    return expanded


def _release_texts(release: str) -> dict:
    """Return the help texts of `release` that differ from those declared (common.release_help): --release-version's
    bounds, and -s/-N/-I's words for 4.2."""
    from .commands import RULES

    bounds = {"minimum": RULES[release].release_minimum, "latest": str(TABLES[release].latest_production)}
    texts = {("format", "release_version"): RELEASE_HELP.format(**bounds),
             ("version-mapping", "release_version"): MAPPING_RELEASE_HELP.format(**bounds)}
    if release == "4.2":
        texts.update({("format", name): text for name, text in QUORUM_HELP_4_2.items()})
    return texts


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-storage with `argv`; print to env's streams; return the exit status."""
    from ..common.kafka_release import kafka_release

    texts = _release_texts(kafka_release(env))
    try:
        argv = expand_argument_files(list(argv))
    except click.UsageError as e:
        env.stderr.write(f"{PROG}: error: {e.message}\n")
        return ExitStatus.ERROR
    return run_app(app, argv, env, prog=PROG, tool_env_name="storage", usage_status=lambda argv: usage_exit(PROG, argv),
                   help_texts=texts)


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)


if __name__ == "__main__":
    from kraftsman.cli.storage.tool import main as _main

    _main()
