"""Run a typer app as a kraftsman tool: in-process with injected streams and environment, Kafka-style usage errors.

Rules:
- `run_app(app, argv, env, ...)` is a typer tool's `run(argv, env)`: click parses with standalone_mode=False,
  help goes to env.stdout, the Environment is the context's `obj`, and the command's return value is the
  exit status.
- Every long option reads KRAFTSMAN_<TOOL>_<FLAG> from the injected environment (flag > variable > profile >
  default), a repeatable one a value per line; a bad value there is a one-line usage error naming the variable
  (exit 64).
- A bad command line prints `usage: <usage>` and `<command path>: error: <argparse's words>` on stderr (the
  words Kafka-compatible scripts and their tests know: "the following arguments are required: ...",
  "argument --id/-i: invalid int value: 'x'", "unrecognized arguments: ..."), then returns the tool's usage
  status (`usage_status(argv)`: Kafka's 1, or 64 where the tool says so). A tool with its own words for a bad
  command line passes `usage_error(error, prog)`, which returns the stderr text instead.
- A shell asking for completion candidates (`_<PROG>_COMPLETE` set) is answered from the same command,
  before anything runs (shells.py); options named in FILE_FLAGS / DIR_FLAGS, and FILE_ARGUMENTS, complete paths.
- `-X list` / `-X help` print the client settings -X takes, in any tool that takes -X (client_settings).
- `help_texts` give a run the help of the Kafka release it speaks for, the declared texts back after it
  (common.release_help).
- Global flags may come before or after the sub-command (option_order.hoist moves each to the side that
  takes it), in every tool.
- A closed stdout (EPIPE: `| head`) is success, as for any Unix filter: click's main would turn it into exit 1
  before the error boundary sees it, so the command's BrokenPipeError is carried past click (_PipeClosed) and
  re-raised for run_command, which answers 0.
- Typer and click are imported here and in the tools' app modules only (cli layer).
"""
from __future__ import annotations

import contextlib
from types import MethodType
from typing import Callable

import click
from click.shell_completion import CompletionItem
from typer.main import get_command

from . import client_settings
from .environment import Environment
from .option_order import hoist
from .shells import answer, asked
from .status import ExitStatus, ToolError

_CLICK_OF_APP: dict[int, click.Command] = {}


class KafkaInt(click.ParamType):
    """An int option whose bad value reads as argparse's ("invalid int value: 'x'")."""

    name = "integer"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return int(value)
        except (TypeError, ValueError):
            self.fail(f"invalid int value: {value!r}", param, ctx)


class KafkaFloat(click.ParamType):
    """A float option whose bad value reads as argparse's ("invalid float value: 'x'")."""

    name = "float"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)):
            return float(value)
        try:
            return float(value)
        except (TypeError, ValueError):
            self.fail(f"invalid float value: {value!r}", param, ctx)


class KafkaChoice(click.Choice):
    """A choice whose bad value reads as argparse's ("invalid choice: 'x' (choose from 'a', 'b')")."""

    def convert(self, value, param, ctx):
        if value in self.choices:
            return value
        choices = ", ".join(repr(c) for c in self.choices)
        self.fail(f"invalid choice: {value!r} (choose from {choices})", param, ctx)


def option_names(param: click.Parameter) -> str:
    """Return a parameter's names as argparse shows them (`--id/-i`, longest first)."""
    if isinstance(param, click.Argument):
        return param.human_readable_name
    names = sorted(param.opts, key=lambda o: (not o.startswith("--"), o))
    return "/".join(names)


class _PipeClosed(Exception):
    """The reader of stdout went away: a BrokenPipeError wrapped so that click's main does not exit 1 on it."""


def _invoke_through_pipe_errors(command: click.Command, ctx: click.Context):
    """Invoke `command` as click does, turning a BrokenPipeError into _PipeClosed (not an OSError)."""
    try:
        return type(command).invoke(command, ctx)
    except BrokenPipeError as e:
        raise _PipeClosed() from e


def click_command(app, tool_env_name: str) -> click.Command:
    """Return the click command of a typer `app`, its options reading KRAFTSMAN_<TOOL>_<FLAG> (built once)."""
    key = id(app)
    if key not in _CLICK_OF_APP:
        command = get_command(app)
        _wire_variables(command, tool_env_name)
        command.invoke = MethodType(_invoke_through_pipe_errors, command)
        _CLICK_OF_APP[key] = command
    return _CLICK_OF_APP[key]


GLOBAL_FLAGS = ("Global flags (every tool): --quiet prints nothing on stdout (the exit code tells), --verbose traces "
                "each client request on stderr, --debug shows a traceback instead of the one-line error, --no-color "
                "(or NO_COLOR) turns colour off, --version prints the version. KRAFTSMAN_KAFKA_VERSION names the "
                "Kafka release spoken where 3.9 and 4.x differ: 3.9 (default), 4.0, 4.1 or 4.2.")


def _wire_variables(command: click.Command, tool_env_name: str) -> None:
    from .env_overrides import variable_name

    command.epilog = command.epilog or GLOBAL_FLAGS
    for param in command.params:
        param.type = _argparse_type(param.type)
        _complete_paths(param)
        long = next((o for o in param.opts if o.startswith("--")), None)
        if isinstance(param, click.Option) and long not in (None, "--help", "--version"):
            param.envvar = variable_name(tool_env_name, long)
            param.resolve_envvar_value = MethodType(_injected_variable, param)
            if param.multiple:
                param.value_from_envvar = MethodType(_one_value_a_line, param)
    for sub in getattr(command, "commands", {}).values():
        _wire_variables(sub, tool_env_name)


FILE_FLAGS = frozenset({"--config", "--command-config", "--files", "--snapshot", "--file", "--report",
                        "--client-config"})
DIR_FLAGS = frozenset({"--directory", "--output-dir"})
FILE_ARGUMENTS = frozenset({"paths"})       # positional file arguments (kafka-metadata-export's PATH...)


def _complete_paths(param: click.Parameter) -> None:
    """Make a file or directory option (or a positional file argument) without a completer of its own complete
    paths (click's 'file'/'dir': the shell then lists them, expanding `$VAR/` and `~/` as for any command)."""
    if getattr(param, "_custom_shell_complete", None) is not None:
        return
    if isinstance(param, click.Argument):
        kind = "file" if param.name in FILE_ARGUMENTS else None
    else:
        names = set(param.opts)
        kind = "file" if names & FILE_FLAGS else "dir" if names & DIR_FLAGS else None
    if kind is not None:
        param.shell_complete = MethodType(lambda self, ctx, incomplete: [CompletionItem(incomplete, type=kind)],
                                          param)


def _argparse_type(kind: click.ParamType) -> click.ParamType:
    """Return the Kafka* type that words its errors as argparse does, for click's int, float and choice."""
    if isinstance(kind, click.types.IntParamType) and not isinstance(kind, click.IntRange):
        return KafkaInt()
    if isinstance(kind, click.types.FloatParamType) and not isinstance(kind, click.FloatRange):
        return KafkaFloat()
    if isinstance(kind, click.Choice) and not isinstance(kind, KafkaChoice):
        return KafkaChoice(list(kind.choices), kind.case_sensitive)
    return kind


def _one_value_a_line(param: click.Option, ctx: click.Context):
    """Read a repeatable option's variable as one value a line (a value may hold spaces, as SCRAM specs do)."""
    text = param.resolve_envvar_value(ctx)
    if text is None:
        return None
    return [line.strip() for line in text.splitlines() if line.strip()]


def _injected_variable(param: click.Parameter, ctx: click.Context) -> str | None:
    """Read the option's variable from the command's injected Environment (not os.environ)."""
    obj = ctx.find_root().obj
    environ = obj.env if isinstance(obj, Environment) else {}
    return environ.get(param.envvar) or None


def run_app(app, argv: list[str], env: Environment, *, prog: str, tool_env_name: str,
            usage_status: Callable[[list[str]], int] = lambda argv: ExitStatus.ERROR,
            usage_error: Callable[[click.UsageError, str], str] | None = None, help_texts=None) -> int:
    """Run the typer `app` on `argv` (see Rules); return the exit status. `help_texts`: the help of the release
    spoken where it is not the declared one (common.release_help), or a function of the click command giving it."""
    from .release_help import speaking

    command = click_command(app, tool_env_name)
    texts = (help_texts(command) if callable(help_texts) else help_texts) or {}
    with speaking(command, texts), contextlib.redirect_stdout(env.stdout):
        instruction = asked(prog, env.env)
        if instruction:                 # a shell asks for candidates (shells.py)
            return answer(command, prog, instruction, env)
        listed = client_settings.asked_listing(argv)
        if listed and client_settings.takes_settings(command):     # -X list / -X help
            env.stdout.write(client_settings.listing(listed))
            return ExitStatus.OK
        try:
            # click's own main, not typer's: typer turns Ctrl-C into a bare exit 130, losing "Interrupted."
            result = click.Command.main(command, args=hoist(command, argv), prog_name=prog, standalone_mode=False,
                                        obj=env)
        except click.exceptions.Exit as e:
            return int(e.exit_code or 0)
        except click.exceptions.Abort:
            raise KeyboardInterrupt from None
        except _PipeClosed:
            raise BrokenPipeError from None
        except click.UsageError as e:
            _from_variable(e)
            env.stderr.write((usage_error or usage_text)(e, prog))
            return int(usage_status(list(argv)))
    return int(result or 0)


def _from_variable(e: click.UsageError) -> None:
    """Raise a one-line usage ToolError when the bad value came from a KRAFTSMAN_* variable."""
    param, ctx = getattr(e, "param", None), e.ctx
    if param is None or ctx is None or not isinstance(e, click.BadParameter):
        return
    if ctx.get_parameter_source(param.name) == click.core.ParameterSource.ENVIRONMENT:
        raise ToolError(f"{param.envvar}: {e.message}", ExitStatus.USAGE) from None


def usage_text(e: click.UsageError, prog: str) -> str:
    """Return argparse's two-part usage error for a click UsageError."""
    ctx = e.ctx
    usage = ctx.get_usage() if ctx is not None else f"Usage: {prog}"
    usage = "usage:" + usage.removeprefix("Usage:")
    where = ctx.command_path if ctx is not None else prog
    return f"{usage}\n{where}: error: {usage_message(e)}\n"


def usage_message(e: click.UsageError) -> str:
    """Return argparse's words for a click usage error."""
    param = getattr(e, "param", None)
    if isinstance(e, click.MissingParameter) and param is not None:
        return f"the following arguments are required: {option_names(param)}"
    if isinstance(e, click.NoSuchOption):
        return f"unrecognized arguments: {e.option_name}"
    if isinstance(e, click.BadOptionUsage):
        return f"argument {e.option_name}: expected one argument"
    if isinstance(e, click.BadParameter) and param is not None:
        return f"argument {option_names(param)}: {e.message}"
    text = e.message
    if text == "Missing command." and e.ctx is not None:
        names = ",".join(getattr(e.ctx.command, "commands", {}))
        return f"the following arguments are required: {{{names}}}"
    if text.startswith("No such command") and e.ctx is not None:
        names = ", ".join(repr(n) for n in getattr(e.ctx.command, "commands", {}))
        word = text.split("'")[1] if "'" in text else text
        return f"argument command: invalid choice: {word!r} (choose from {names})"
    if text.startswith("Got unexpected extra argument"):
        return "unrecognized arguments: " + text.split("(", 1)[-1].rstrip(")")
    return text


def parameter_source(ctx: click.Context, name: str):
    """Return where a parameter's value came from (click's ParameterSource)."""
    return ctx.get_parameter_source(name)


def is_default(ctx: click.Context, name: str) -> bool:
    """Tell whether a parameter kept its default (neither the command line nor a variable gave it)."""
    return ctx.get_parameter_source(name) in (None, click.core.ParameterSource.DEFAULT)
