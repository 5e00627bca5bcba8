"""The connection options every remote command takes (typer), and how a profile fills what they leave out.

Rules:
- Kafka's names: --bootstrap-server/-b | --bootstrap-controller/-C (exactly one, checked here with argparse's
  words), --config/-c (client properties file); kraftsman's: --output text|json|yaml, --timeout SECONDS,
  --profile NAME, -X/--client-property key=value (repeatable; wins over the profile's client settings).
- settings() turns the parsed options into the namespace the tools' commands take, with a profile applied:
  flag > KRAFTSMAN_<TOOL>_<FLAG> > profile > default (click tells which options kept their default).
- A missing bootstrap after the profile is argparse's "one of the arguments ... is required" usage error.
"""
from __future__ import annotations

import argparse
from typing import Annotated, Literal, Optional

import click
import typer

from .common import Environment
from .common import profiles as profile_file
from .common.typer_app import is_default

SERVER_HELP = "A list of host/port pairs to use for establishing the connection to the Kafka cluster."
CONTROLLER_HELP = "A list of host/port pairs to use for establishing the connection to the KRaft controllers."
CONFIG_HELP = "A property file containing configurations for the Admin client."

BootstrapServer = Annotated[Optional[str], typer.Option("--bootstrap-server", "-b", help=SERVER_HELP)]
BootstrapController = Annotated[Optional[str], typer.Option("--bootstrap-controller", "-C", help=CONTROLLER_HELP)]
ClientConfig = Annotated[Optional[str], typer.Option("--config", "-c", help=CONFIG_HELP)]
Output = Annotated[Literal["text", "json", "yaml"], typer.Option(
    "--output", help="kraftsman: print text (Kafka's), or one JSON or YAML object.")]
Timeout = Annotated[Optional[float], typer.Option(
    "--timeout", metavar="SECONDS",
    help="kraftsman: give up after this many seconds in total (default: request.timeout.ms).")]
Profile = Annotated[Optional[str], typer.Option(
    "--profile", help="kraftsman: take bootstrap, client settings, timeout and output from this profile "
                      "(default: KRAFTSMAN_PROFILE, else the current profile).")]
ClientProperty = Annotated[Optional[list[str]], typer.Option(
    "--client-property", "-X", metavar="KEY=VALUE",
    help="kraftsman: a client setting (repeatable), over the --config file and the profile.")]

BOOTSTRAP_FLAGS = ("--bootstrap-server/-b", "--bootstrap-controller/-C")


def settings(ctx: typer.Context, command: str, values: dict) -> argparse.Namespace:
    """Return the namespace a command takes: parsed `values`, the profile filling what was left out."""
    env: Environment = ctx.find_root().obj
    args = argparse.Namespace(command=command, **{k: v for k, v in values.items() if k != "ctx"})
    args.client = _client_overrides(ctx, args.client_property or [])
    if args.bootstrap_server and args.bootstrap_controller:
        raise click.UsageError(f"argument {BOOTSTRAP_FLAGS[1]}: not allowed with argument {BOOTSTRAP_FLAGS[0]}",
                               ctx)
    _apply_profile(ctx, args, env)
    if not (args.bootstrap_server or args.bootstrap_controller):
        raise click.UsageError(f"one of the arguments {' '.join(BOOTSTRAP_FLAGS)} is required", ctx)
    return args


def _client_overrides(ctx: typer.Context, pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"argument --client-property/-X: expected KEY=VALUE, got {pair!r}", ctx)
        found[key.strip()] = value.strip()
    return found


def _apply_profile(ctx: typer.Context, args: argparse.Namespace, env: Environment) -> None:
    """Fill options that kept their default from the chosen profile (see Rules)."""
    chosen = profile_file.select(profile_file.load(env.env), args.profile, env.env)
    if chosen is None:
        return
    if not (args.bootstrap_server or args.bootstrap_controller):
        args.bootstrap_controller = chosen.bootstrap_controller
        args.bootstrap_server = None if chosen.bootstrap_controller else chosen.bootstrap_server
    if is_default(ctx, "config") and chosen.client_config:
        args.config = chosen.client_config
    args.client = {**chosen.client, **args.client}
    if is_default(ctx, "timeout") and chosen.timeout is not None:
        args.timeout = chosen.timeout
    if is_default(ctx, "output") and chosen.output is not None:
        args.output = chosen.output
