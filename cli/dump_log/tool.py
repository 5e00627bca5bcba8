"""kafka-dump-log: Kafka 3.9's DumpLogSegments, byte for byte, plus `--output jsonl`, as a typer app.

The command line is one typer app (help table, man page, completion and KRAFTSMAN_DUMP_LOG_* variables come
from it); the run over the files is session.py's DumpSession.

Rules:
- Kafka's jopt-simple manners are kept: no arguments or --help print the description and the option table
  on stderr and exit 1; no --files prints `Missing required argument "[files]"` and the table (exit 1);
  a bad flag or value is one line `kafka-dump-log: ...` (exit 1); the decoder-class flags take an optional
  argument; click's own help option is switched off. --version prints kraftsman's version line, as every
  tool's does (exit 0).
- Exit codes: 0 = everything read; 1 = usage errors and failures Kafka also aborts on (a missing file);
  2 = something was corrupt: the rest was printed, each problem on stderr, then one summary line (how many
  batches failed and where); 64 = a bad KRAFTSMAN_DUMP_LOG_* value (one line naming the variable).
- Only the app is built at import; the session, decoders and rich are imported when files are dumped.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from typing import Annotated, Optional

import click
import typer

from ..common.boundary import package_version
from ..common.environment import Environment
from ..common.release_help import KAFKA_4_0
from ..common.shells import asked
from ..common.status import ExitStatus
from ..common.typer_app import KafkaChoice, run_app, usage_message
from .options import (
    ARGUMENT,
    DESCRIPTION,
    HELP,
    INT_MAX,
    MAX_MESSAGE_SIZE,
    MISSING_FILES,
    OPTIONS_4X,
    OUTPUT_SYNONYMS,
    OUTPUTS,
    SHARE_GROUP_STATE_DECODER,
    dump_options,
    help_text,
    java_int,
    with_optional_arguments,
)

PROG = "kafka-dump-log"


class JavaInt(click.ParamType):
    """An int option read as Integer.parseInt reads it, failing in jopt-simple's words."""

    name = "integer"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return java_int(str(value), param.opts[0] if param else "")
        except ValueError as e:
            self.fail(str(e), param, ctx)


class OutputFormat(KafkaChoice):
    """--output text|jsonl|yaml, with `json` read as `jsonl` (one JSON object per line)."""

    def __init__(self):
        super().__init__(list(OUTPUTS))

    def convert(self, value, param, ctx):
        return super().convert(OUTPUT_SYNONYMS.get(value, value), param, ctx)


def _flag(name: str):
    """Return the typer option of a flag without a value, with Kafka's help text."""
    return typer.Option(name, help=HELP[name])


def _valued(name: str, **kwargs):
    """Return the typer option of a flag with a value, shown with jopt-simple's argument display."""
    return typer.Option(name, help=HELP[name], metavar=ARGUMENT[name], **kwargs)


app = typer.Typer(name=PROG, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": []})


@app.command(help=DESCRIPTION)
def dump_log(ctx: typer.Context,
             cluster_metadata_decoder: Annotated[bool, _flag("--cluster-metadata-decoder")] = False,
             deep_iteration: Annotated[bool, _flag("--deep-iteration")] = False,
             files: Annotated[Optional[str], _valued("--files")] = None,
             show_help: Annotated[bool, _flag("--help")] = False,
             index_sanity_check: Annotated[bool, _flag("--index-sanity-check")] = False,
             key_decoder_class: Annotated[Optional[str], _valued("--key-decoder-class")] = None,
             max_bytes: Annotated[int, _valued("--max-bytes", click_type=JavaInt())] = INT_MAX,
             max_message_size: Annotated[int, _valued("--max-message-size", click_type=JavaInt())] = MAX_MESSAGE_SIZE,
             offsets_decoder: Annotated[bool, _flag("--offsets-decoder")] = False,
             output: Annotated[str, _valued("--output", click_type=OutputFormat())] = "text",
             print_data_log: Annotated[bool, _flag("--print-data-log")] = False,
             remote_log_metadata_decoder: Annotated[bool, _flag("--remote-log-metadata-decoder")] = False,
             share_group_state_decoder: Annotated[bool, typer.Option(
                 SHARE_GROUP_STATE_DECODER, help=KAFKA_4_0 + OPTIONS_4X[SHARE_GROUP_STATE_DECODER][1])] = False,
             skip_record_metadata: Annotated[bool, _flag("--skip-record-metadata")] = False,
             transaction_log_decoder: Annotated[bool, _flag("--transaction-log-decoder")] = False,
             value_decoder_class: Annotated[Optional[str], _valued("--value-decoder-class")] = None,
             verify_index_only: Annotated[bool, _flag("--verify-index-only")] = False,
             show_version: Annotated[bool, _flag("--version")] = False) -> int:
    return _dump(ctx.find_root().obj, locals())


def _dump(env: Environment, values: dict) -> int:
    """Answer --help, --version or a missing --files as Kafka does, else dump the files."""
    from ..common.kafka_release import kafka_release, version_line

    release = kafka_release(env)
    refused = [flag for flag in OPTIONS_4X if values[_parameter(flag)]] if release == "3.9" else []
    if refused:                       # Kafka 4.0's flags: 3.9's tool does not know them
        env.stderr.write(f"{PROG}: unrecognized arguments: {' '.join(refused)}\n")
        return ExitStatus.ERROR
    if values["show_help"]:
        return _usage(env, DESCRIPTION, release)
    if values["show_version"]:        # as every tool's --version (the boundary answers it when it comes first)
        env.stdout.write(version_line(PROG, package_version(), release))
        return ExitStatus.OK
    if values["files"] is None:
        return _usage(env, MISSING_FILES, release)
    from .session import DumpSession

    return DumpSession(replace(dump_options(values), release=release), env).run()


def _usage(env: Environment, head: str, release: str = "3.9") -> int:
    """Print `head` and jopt-simple's option table (as Kafka `release` lists it) on stderr; return Kafka's 1."""
    env.stderr.write(f"{head}\n{help_text(release)}\n")
    return ExitStatus.ERROR


def _one_line_usage_error(error: click.UsageError, prog: str) -> str:
    """Return a bad command line as one stderr line (jopt-simple fails with one exception message)."""
    return f"{prog}: {usage_message(error)}\n"


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-dump-log with `argv` in `env`; return the exit status."""
    if not argv and not asked(PROG, env.env):      # a completing shell runs the tool with no arguments
        from ..common.kafka_release import kafka_release

        return _usage(env, DESCRIPTION, kafka_release(env))
    return run_app(app, with_optional_arguments(list(argv)), env, prog=PROG, tool_env_name="dump_log",
                   usage_error=_one_line_usage_error, help_texts=_release_texts(env))


def _release_texts(env: Environment) -> dict:
    """Return what the release spoken changes in the declared options: Kafka 3.9's tool lacks 4.0's flags
    (OPTIONS_4X), so a 3.9 run does not offer them (completion; the usage table is its own)."""
    from ..common.kafka_release import kafka_release
    from ..common.release_help import NOT_IN_RELEASE

    return {(None, _parameter(flag)): NOT_IN_RELEASE for flag in OPTIONS_4X} if kafka_release(env) == "3.9" else {}


def _parameter(flag: str) -> str:
    """Return the typer parameter name of a long flag (--share-group-state-decoder: share_group_state_decoder)."""
    return flag.removeprefix("--").replace("-", "_")


def main() -> None:
    """Console script entry point (`kafka-dump-log`)."""
    from ..common.boundary import exit_with

    try:
        sys.stdout.reconfigure(encoding="utf-8", errors="replace")
    except (AttributeError, ValueError):
        pass
    exit_with(run, PROG)
