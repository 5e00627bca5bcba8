"""kraftsman profile: list, show, use, create and delete connection profiles (cli/common/profiles.py).

Rules:
- The file is written atomically and kept private (0600); `show` masks secrets, as `list` never prints them.
- A profile or file that cannot be used is one line and exit 64; success is exit 0.
- `--output json|yaml` prints one object, as every data-bearing command does.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional

import typer

from ..common import client_settings
from ..common import profiles as pf
from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.key_values import BadPair
from ..common.output import render, structured
from ..common.status import ExitStatus
from ..common.typer_app import run_app

PROG = "kraftsman profile"
app = typer.Typer(name="profile", help="Manage connection profiles (bootstrap, client settings, timeout, output).",
                  add_completion=False, rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]})
ProfileName = Annotated[str, typer.Argument(help="The profile's name.", autocompletion=pf.complete_names)]
SomeProfileName = Annotated[Optional[str], typer.Argument(help="The profile's name.", autocompletion=pf.complete_names)]
OutputFormat = Annotated[Literal["text", "json", "yaml"], typer.Option("--output", help="Print text, JSON or YAML.")]


def _env(ctx: typer.Context) -> Environment:
    return ctx.find_root().obj


@app.command("list", help="List the profiles; the current one is marked with *.")
def list_profiles(ctx: typer.Context, output: OutputFormat = "text") -> int:
    env = _env(ctx)
    found = pf.load(env.env)
    if structured(output):
        env.stdout.write(render({"file": str(found.path), "current": found.current,
                                 "profiles": sorted(found.profiles)}, output))
    for name in sorted(found.profiles) if not structured(output) else ():
        env.stdout.write(f"{'*' if name == found.current else ' '} {name}\n")
    return ExitStatus.OK


@app.command("show", help="Show a profile (default: the one in use), secrets masked.")
def show(ctx: typer.Context, name: SomeProfileName = None,
         output: OutputFormat = "yaml") -> int:
    env = _env(ctx)
    chosen = pf.select(pf.load(env.env), name, env.env)
    if chosen is None:
        raise pf.ProfileError(f"{pf.config_path(env.env)}: no profile in use (kraftsman profile use NAME)")
    obj = {"name": chosen.name, **chosen.as_dict(masked=True)}
    if output == "text":
        env.stdout.write("".join(f"{key}: {value}\n" for key, value in obj.items()))
    else:
        env.stdout.write(render(obj, output))
    return ExitStatus.OK


@app.command("use", help="Make a profile the current one.")
def use(ctx: typer.Context, name: ProfileName) -> int:
    env = _env(ctx)
    found = pf.load(env.env)
    pf.select(found, name, env.env)          # refuses a name that is not there
    found.current = name
    pf.save(found)
    env.stderr.write(f"Using profile {name}.\n")
    return ExitStatus.OK


@app.command("create", help="Create (or with --force replace) a profile.")
def create(ctx: typer.Context, name: ProfileName,
           bootstrap_controller: Annotated[Optional[str], typer.Option("--bootstrap-controller", "-C")] = None,
           bootstrap_server: Annotated[Optional[str], typer.Option("--bootstrap-server", "-b")] = None,
           client_config: Annotated[Optional[str], typer.Option(
               "--client-config", "-c", help="A client properties file.")] = None,
           client_property: Annotated[Optional[list[str]], typer.Option(
               "--client-property", "-X", metavar="KEY=VALUE", help="A client setting (repeatable).")] = None,
           timeout: Annotated[Optional[float], typer.Option("--timeout", metavar="SECONDS")] = None,
           output: Annotated[Optional[Literal["text", "json", "yaml"]], typer.Option(
               "--output", help="The output format commands use with this profile.")] = None,
           use_it: Annotated[bool, typer.Option("--use", help="Also make it the current profile.")] = False,
           force: Annotated[bool, typer.Option("--force", help="Replace a profile of that name.")] = False) -> int:
    env = _env(ctx)
    found = pf.load(env.env)
    if name in found.profiles and not force:
        raise pf.ProfileError(f"{found.path}: profile {name!r} exists (--force replaces it)")
    if timeout is not None and timeout <= 0:
        raise pf.ProfileError(f"profile {name!r}: timeout must be positive")
    try:
        client = client_settings.overrides(client_property or ())
    except BadPair as e:
        raise pf.ProfileError(f"--client-property: expected KEY=VALUE, got {e.pair!r}") from None
    except client_settings.UnknownSetting as e:
        raise pf.ProfileError(f"--client-property: {e}") from None
    found.profiles[name] = pf.Profile(name, bootstrap_controller, bootstrap_server, client, client_config, timeout,
                                      output)
    if use_it or found.current is None:
        found.current = name
    pf.save(found)
    env.stderr.write(f"Created profile {name}{' (current)' if found.current == name else ''} in {found.path}.\n")
    return ExitStatus.OK


@app.command("delete", help="Delete a profile.")
def delete(ctx: typer.Context, name: ProfileName) -> int:
    env = _env(ctx)
    found = pf.load(env.env)
    pf.select(found, name, env.env)
    del found.profiles[name]
    if found.current == name:
        found.current = None
    pf.save(found)
    env.stderr.write(f"Deleted profile {name}.\n")
    return ExitStatus.OK


def run(argv: list[str], env: Environment) -> int:
    """Run `kraftsman profile` with `argv`; return the exit status."""
    return run_app(app, argv, env, prog=PROG, tool_env_name="profile",
                   usage_status=lambda argv: usage_exit(PROG, argv))
