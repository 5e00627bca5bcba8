"""The connection options every remote command takes (typer), and how a profile fills what they leave out.

Rules:
- Kafka's names: --bootstrap-server/-b | --bootstrap-controller/-C (exactly one, checked here with argparse's
  words), the client properties file as Kafka 4.2's kafka-cluster names it: --command-config/-c, or --config
  (Kafka 3.9-4.1's name; 4.2 deprecates it and says so on stdout; both at once is a usage error); kraftsman's:
  --output text|json|yaml, --timeout SECONDS, --profile NAME, -X/--client-property key=value (repeatable; wins
  over the profile's client settings; only the keys the client honours: client_settings).
- settings() turns the parsed options into the namespace the tools' commands take, with a profile applied:
  flag > KRAFTSMAN_<TOOL>_<FLAG> > profile > default (click tells which options kept their default); `command` is
  the sub-command's name as typed, `config_given` whether --config/--command-config came from the command line or
  a variable (not the profile).
- admin_command() is the one way a sub-command runs: the typer function hands its parameters and its
  implementation, which gets (args, Context) or, with connect=False, (args, env) to check its arguments first; a
  Failure is printed as --output asks (admin.fail).
- Options may sit on the tool's root (before the sub-command, as Kafka's kafka-metadata-quorum and kafka-features
  take their connection flags) and on the sub-command: each value comes from the context that got it best
  (command line, then variable, then default; the sub-command's first), -X pairs from both.
- A missing bootstrap after the profile is argparse's "one of the arguments ... is required" usage error, naming
  the group as the tool's Kafka original does (`group`).
"""
from __future__ import annotations

import argparse
from typing import Annotated, Literal, Optional

import click
import typer

from . import client_settings
from . import profiles as profile_file
from .admin import Context, Failure, fail
from .environment import Environment
from .kafka_release import kafka_release
from .key_values import BadPair
from .typer_app import parameter_source

SERVER_HELP = "A list of host/port pairs to use for establishing the connection to the Kafka cluster."
CONTROLLER_HELP = "A list of host/port pairs to use for establishing the connection to the KRaft controllers."
CONFIG_HELP = "A property file containing configurations for the Admin client."

BootstrapServer = Annotated[Optional[str], typer.Option("--bootstrap-server", "-b", help=SERVER_HELP)]
BootstrapController = Annotated[Optional[str], typer.Option("--bootstrap-controller", "-C", help=CONTROLLER_HELP)]
CONFIG_DEPRECATED = ("Option --config has been deprecated and will be removed in a future version. "
                     "Use --command-config instead.")
# --config as Kafka 4.2's ClusterTool words it (its own texts: common.release_help)
CONFIG_HELP_4_2 = ("(DEPRECATED) A property file containing configurations for the Admin client. This option will be "
                   "removed in a future version. Use --command-config instead.")
ClientConfig = Annotated[Optional[str], typer.Option(
    "--config", metavar="FILE", help=CONFIG_HELP + " (Kafka 4.2 deprecates it for --command-config.)")]
CommandConfig = Annotated[Optional[str], typer.Option("--command-config", "-c", metavar="FILE",
                                                      help="Config properties file for the Admin client.")]
Output = Annotated[Literal["text", "json", "yaml"], typer.Option(
    "--output", help="kraftsman: print text (Kafka's), or one JSON or YAML object.")]
Timeout = Annotated[Optional[float], typer.Option(
    "--timeout", metavar="SECONDS",
    help="kraftsman: give up after this many seconds in total (default: request.timeout.ms).")]
Profile = Annotated[Optional[str], typer.Option(
    "--profile", autocompletion=profile_file.complete_names,
    help="kraftsman: take bootstrap, client settings, timeout and output from this profile "
         "(default: KRAFTSMAN_PROFILE, else the current profile).")]
ClientProperty = Annotated[Optional[list[str]], typer.Option(
    "--client-property", "-X", metavar="KEY=VALUE",
    help="kraftsman: a client setting (repeatable), over the client config file (--config, or --command-config) "
         "and the profile.")]

BOOTSTRAP_FLAGS = ("--bootstrap-server/-b", "--bootstrap-controller/-C")


def admin_command(ctx: typer.Context, values: dict, implementation, *, group: tuple[str, str] = BOOTSTRAP_FLAGS,
                  connect: bool = True) -> int:
    """Run one sub-command: `implementation(args, Context)` (or `(args, env)` without `connect`) on its settings
    (`values`: the typer function's parameters); return its exit status, a Failure printed as --output asks."""
    args = settings(ctx, values, group)
    env: Environment = ctx.find_root().obj
    try:
        return implementation(args, Context(args, env) if connect else env)
    except Failure as e:
        return fail(args, env, str(e), e.status, e.hint, ctx.find_root().info_name)


def settings(ctx: typer.Context, values: dict, group: tuple[str, str] = BOOTSTRAP_FLAGS) -> argparse.Namespace:
    """Return the namespace a command takes: parsed `values` over its parents' options, the profile filling what
    was left out; `group` names the bootstrap flags in the usage errors."""
    env: Environment = ctx.find_root().obj
    args = argparse.Namespace(command=ctx.info_name, **merged(ctx, values))
    args.config_given = not kept_default(ctx, "config")
    old_name = "command_config" in values and _command_config(ctx, args)
    args.client = _client_overrides(ctx, args.client_property or [])
    owner = _owner(ctx, "bootstrap_server")
    if args.bootstrap_server and args.bootstrap_controller:
        raise click.UsageError(f"argument {group[1]}: not allowed with argument {group[0]}", owner)
    _apply_profile(ctx, args, env)
    if not (args.bootstrap_server or args.bootstrap_controller):
        raise click.UsageError(f"one of the arguments {' '.join(group)} is required", owner)
    if old_name and kafka_release(env, args) == "4.2":
        stream = env.stdout if args.output == "text" else env.stderr     # stdout holds one object with --output
        stream.write(CONFIG_DEPRECATED + "\n")
    return args


def _command_config(ctx: typer.Context, args: argparse.Namespace) -> bool:
    """Fold --command-config and --config into args.config (both at once is Kafka 4.2's usage error); return
    whether the file came by the old name, --config."""
    new, old = not kept_default(ctx, "command_config"), args.config_given
    if new and old:
        raise click.UsageError("--config and --command-config cannot be specified together.", _owner(ctx, "config"))
    if new:
        args.config, args.config_given = args.command_config, True
    return old


def merged(ctx: click.Context, values: dict) -> dict:
    """Return `values` (the command's parameters) with its parents' options: each from the context whose
    source ranks best, the command's own on a tie; -X pairs given at every level, the parents' first."""
    found = {k: v for k, v in values.items() if k != "ctx"}
    ranks = {name: _rank(ctx, name) for name in found}
    pairs = list(found.get("client_property") or [])
    for parent in _parents(ctx):
        for name, value in parent.params.items():
            rank = _rank(parent, name)
            if name not in found or rank < ranks[name]:
                found[name], ranks[name] = value, rank
        if name_given(parent, "client_property"):
            pairs = [*parent.params["client_property"], *pairs]
    if "client_property" in found:
        found["client_property"] = pairs or found["client_property"]
    return found


def _parents(ctx: click.Context):
    parent = ctx.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _rank(ctx: click.Context, name: str) -> int:
    """Rank where a value came from: 0 the command line, 1 a variable, 2 a default."""
    source = parameter_source(ctx, name)
    ranks = {click.core.ParameterSource.COMMANDLINE: 0, click.core.ParameterSource.ENVIRONMENT: 1}
    return ranks.get(source, 2)


def name_given(ctx: click.Context, name: str) -> bool:
    """Tell whether the command line or a variable gave the parameter `name` of `ctx`'s command."""
    return name in ctx.params and _rank(ctx, name) < 2


def kept_default(ctx: click.Context, name: str) -> bool:
    """Tell whether the option `name` kept its default in `ctx` and every parent context."""
    return not any(name_given(c, name) for c in (ctx, *_parents(ctx)))


def _owner(ctx: click.Context, name: str) -> click.Context:
    """Return the innermost context whose command takes the parameter `name` (for its usage line)."""
    return next((c for c in (ctx, *_parents(ctx)) if name in c.params), ctx)


def _client_overrides(ctx: typer.Context, pairs: list[str]) -> dict[str, str]:
    try:
        return client_settings.overrides(pairs)
    except BadPair as e:
        raise click.UsageError(f"argument --client-property/-X: expected KEY=VALUE, got {e.pair!r}", ctx) from None
    except client_settings.UnknownSetting as e:
        raise click.UsageError(f"argument --client-property/-X: {e}", ctx) from None


def _apply_profile(ctx: typer.Context, args: argparse.Namespace, env: Environment) -> None:
    """Fill options that kept their default from the chosen profile (see Rules); a broken profile file is a
    warning for a command line that names its bootstrap (profiles.select_for)."""
    prog = ctx.find_root().info_name
    named = args.bootstrap_server or args.bootstrap_controller
    chosen = profile_file.select_for(env.env, args.profile, needed=not named,
                                     warn=lambda text: env.stderr.write(f"{prog}: warning: {text}\n"))
    given = lambda name: (name == "config" and args.config_given) or not kept_default(ctx, name)  # noqa: E731
    profile_file.fill(args, chosen, given)
