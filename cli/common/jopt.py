"""Kafka's jopt-simple command lines (kafka-topics, kafka-configs, kafka-acls, kafka-leader-election,
kafka-reassign-partitions, kafka-broker-api-versions) over typer: options, usage errors, --help, --version,
failures in Kafka's forms, and the suite's conventions on top.

A tool is one typer command (context_settings=SETTINGS) whose parameters are Kafka's options, declared with
`flag()` / `valued()` (Kafka's help text; an argument display such as "String: topic"), plus kraftsman's
additions (help starting "kraftsman:"; Output, Timeout, Profile, ClientProperty, AddedBootstrapController). Its
body is `return jopt.run(ctx, locals(), implementation, TOOL)`; `run_tool(app, argv, env, TOOL)` is its run().

Rules:
- Kafka's manners (CommandLineUtils, CommandDefaultOptions): no arguments (a KRAFTSMAN_<TOOL>_<FLAG> variable
  counts as one, a profile does not) prints `TOOL.no_args` and the option table on stderr, --help `TOOL.help`
  and the table (then kraftsman's additions), both exit 1 as Kafka 3.9's printUsageAndExit does; --version
  prints the Kafka version of the release spoken for (KRAFTSMAN_KAFKA_VERSION; exit 0). UsageExit(message) is
  printUsageAndExit: the message and the table of Kafka's options only (kraftsman's additions are left out, so it
  is Kafka's byte for byte), exit 1. `missing_argument`,
  `cannot_combine` and `exactly_one` raise it with Kafka's words.
- A bad command line reads as jopt-simple's exceptions: "bogus is not a recognized option", "Option topic
  requires an argument", printed as Kafka's main() prints an uncaught exception (message, stack trace, blank
  line), or as the JVM does when the tool parses outside its try (`Tool.parse_in_thread`: kafka-reassign-
  partitions' `Exception in thread "main" ...`); extra words are ignored, as jopt-simple collects them. Values
  are strings: a tool converts them where Kafka does (java_int), so a bad number fails where Kafka's fails.
- Failures: the implementation raises KafkaError (message, Java class, whether it carries a stack trace, exit
  status, and optionally the form to print it in); Run.call(fn, ...) turns an Admin call's failure into one
  (ServerError: its code's class, no trace; cannot reach the cluster: TimeoutException, exit 69; unsupported:
  UnsupportedVersionException). A KafkaError is printed in its form or the tool's (`TOOL.form`): logged()
  (stdout "<prefix><message>", stderr a log4j ERROR line with the trace: kafka-topics), uncaught() (stderr
  message, trace, blank line: Kafka's mainNoExit), thread() (`Exception in thread "main" ...`), stdout_error()
  (stdout "Error: <message>" and the trace: kafka-reassign-partitions); a failure to set the client up (a bad
  --command-config or bootstrap list) in `TOOL.connect_form` where it differs. wrapped(cls, cause) is Java's
  `new Cls(cause)` (its message the cause's toString()); suppressed exceptions print after the frames, as Java's
  "\tSuppressed: ..." lines. A trace's frames are the Python frames
  the error was raised through, written as Java's ("\tat module.function(source:line)"), innermost first; log4j
  lines carry the current local time as Kafka's layout writes it ("[2026-11-27 21:37:27,551]").
- The suite's conventions: flag > KRAFTSMAN_<TOOL>_<FLAG> > profile > default (typer_app wires the variables; a
  profile fills the bootstrap, client settings, timeout and output left out); --command-config (parameter
  `command_config`) is the client properties file (SSL, SASL PLAIN/SCRAM through sync_client.ClientConfig), -X
  pairs over it; a tool's own `config` parameter stays its own (kafka-topics' --config); --output
  json|yaml prints one object (Run.emit) and every failure as one object {"command", "status", "error"}; a
  usage failure exits 1 whatever --output asks (the suite's one rule); EXIT_UNCHANGED (6) tells "already so"
  from "changed" in json/yaml mode.
  A tool whose Kafka options include --timeout (kafka-reassign-partitions) names that parameter otherwise and
  leaves out Timeout: the deadline is then request.timeout.ms or the profile's timeout.
"""
from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass
from typing import Annotated, Callable, Optional

import click
import typer

from .admin import Context, Failure
from .admin_options import ClientProperty, Output, Profile, Timeout, kept_default, merged
from .environment import Environment
from .output import render, structured
from .status import ExitStatus

SETTINGS = {"help_option_names": [], "allow_extra_args": True}
EXIT_UNCHANGED = ExitStatus.UNCHANGED        # json/yaml: --if-exists / --if-not-exists found it already so
ADDITION = "kraftsman:"            # the help of kraftsman's additions starts so
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
COMMAND_FAILED = "org.apache.kafka.server.common.AdminCommandFailedException"
TIMEOUT_EXCEPTION = "org.apache.kafka.common.errors.TimeoutException"
UNSUPPORTED_EXCEPTION = "org.apache.kafka.common.errors.UnsupportedVersionException"
CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException"

# the ZooKeeper TLS properties --zk-tls-config-file's help names (ZkConfigs.ZK_SSL_CONFIG_TO_SYSTEM_PROPERTY_MAP)
ZK_TLS_KEYS = ", ".join("zookeeper." + k for k in (
    "clientCnxnSocket", "ssl.cipher.suites", "ssl.client.enable", "ssl.crl.enable", "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type",
    "ssl.ocsp.enable", "ssl.protocol", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type"))

__all__ = ["ClientProperty", "Output", "Profile", "Timeout"]     # re-exported for the tools' signatures


# ---------------------------------------------------------------- declaring options


_RAW_HELP: dict[str, str] = {}      # click's cleaned help (tabs expanded) -> Kafka's text, for the table


def _kafka_help(text: str) -> str:
    """Return `text` for click, remembering it when click would change it (click expands tabs: Kafka's
    --config help lists the topic configs one a line after a tab)."""
    import inspect

    _RAW_HELP[inspect.cleandoc(text)] = text
    return text


def flag(name: str, text: str):
    """Return a jopt-simple option without an argument (a typer bool option) with Kafka's help text."""
    return Annotated[bool, typer.Option(name, help=_kafka_help(text))]


def valued(name: str, text: str, argument: str, *, completer=None, multiple: bool = False, optional: bool = False):
    """Return a jopt-simple option with an argument, shown as `<argument>` ("String: topic"), or `[argument]` when
    Kafka declares it optional (withOptionalArg; here a value is still required)."""
    kind = Optional[list[str]] if multiple else Optional[str]
    metavar = f"[{argument}]" if optional else f"<{argument}>"
    return Annotated[kind, typer.Option(name, help=_kafka_help(text), metavar=metavar, autocompletion=completer)]


HelpFlag = flag("--help", "Print usage information.")
VersionFlag = flag("--version", "Display Kafka version.")
AddedBootstrapController = valued("--bootstrap-controller", "kraftsman: the KRaft controllers to connect to "
                                  "instead of --bootstrap-server (requests go to the active controller).",
                                  "String: controllers")


def app(prog: str) -> typer.Typer:
    """Return the typer app of a jopt tool (one command; no click help option: --help is Kafka's)."""
    return typer.Typer(name=prog, add_completion=False, rich_markup_mode=None, context_settings=SETTINGS)


# ---------------------------------------------------------------- the help table


def table(command: click.Command, additions: bool = False) -> str:
    """Return jopt-simple's table of the command's Kafka options (or of kraftsman's additions)."""
    from .jopt_help import option_display, render

    rows = []
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        text = _RAW_HELP.get(param.help or "", param.help or "")
        if text.startswith(ADDITION) != additions:
            continue
        names = ", ".join(sorted(param.opts, key=lambda o: (o.startswith("--"), o)))     # jopt: -X, --long
        optional = bool(param.metavar) and param.metavar.startswith("[") and param.metavar.endswith("]")
        rows.append((option_display(names, None if param.is_flag else _argument(param), optional), text))
    return render(sorted(rows, key=lambda r: r[0].lstrip("-").lower()))


def _argument(param: click.Option) -> str:
    """Return an option's argument display: its metavar ("String: topic", without its <> or, for an optional
    argument, [] brackets), its choices, or its name."""
    if param.metavar:
        return param.metavar[1:-1] if param.metavar[:1] in "<[" else param.metavar
    if isinstance(param.type, click.Choice):
        return "|".join(map(str, param.type.choices))
    return param.name.upper()


# ---------------------------------------------------------------- failures


class UsageExit(Exception):
    """Kafka's printUsageAndExit: the message, then the option table, on stderr; exit 1."""


class KafkaError(Exception):
    """A failure as Kafka reports it: message, Java exception class, whether a stack trace is printed (client-side
    exceptions have one, the server's errors none), exit status, and the form to print it in (None: the tool's)."""

    def __init__(self, message: str | None, java_class: str = ILLEGAL_ARGUMENT, *, traced: bool = True,
                 status: int = ExitStatus.ERROR, form: Callable | None = None, cause: "KafkaError | None" = None,
                 suppressed: tuple = ()):
        super().__init__(message or "")
        self.message, self.java_class, self.traced = message, java_class, traced     # message None: Java's null
        self.status, self.form, self.cause = int(status), form, cause
        self.suppressed = list(suppressed)     # Throwable.addSuppressed's, printed after the frames
        self.fields: dict = {}             # added to the json/yaml failure object (what was applied, ...)

    def java_string(self) -> str:
        """Return Java's Throwable.toString(): `class: message` (the class alone when the message is null)."""
        return self.java_class if self.message is None else f"{self.java_class}: {self.message}"


def wrapped(java_class: str, cause: KafkaError) -> KafkaError:
    """Return Java's `new <java_class>(cause)`: its message is the cause's toString()."""
    return KafkaError(cause.java_string(), java_class, cause=cause)


def missing_argument(name: str) -> UsageExit:
    """Return CommandLineUtils.checkRequiredArgs' failure for option `name` (without dashes)."""
    return UsageExit(f'Missing required argument "[{name}]"')


def cannot_combine(used: str, other: str) -> UsageExit:
    """Return CommandLineUtils.checkInvalidArgs' failure: option `used` given with `other`."""
    return UsageExit(f'Option "[{used}]" can\'t be used with option "[{other}]"')


def exactly_one(run: "Run", actions: list[str], message: str) -> None:
    """Raise UsageExit(message) unless exactly one of `actions` (parameter names) was given."""
    if sum(1 for a in actions if run.has(a)) != 1:
        raise UsageExit(message)


def java_int(text: str, option: str) -> int:
    """Return `text` as Integer.parseInt reads it; KafkaError in jopt-simple's words when it cannot."""
    if re.fullmatch(r"[-+]?\d+", text) and -2 ** 31 <= int(text) < 2 ** 31:
        return int(text)
    raise KafkaError(f"Cannot parse argument '{text}' of option {option}",
                     "joptsimple.OptionArgumentConversionException")


def java_split(text: str, separator: str = ",") -> list[str]:
    """Split like Java's String.split(separator): no trimming, trailing empty strings dropped."""
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def stack_trace(error: KafkaError) -> str:
    """Return Java's printStackTrace text of `error`: `class: message`, its frames, its suppressed exceptions
    (indented by a tab, each with its frames), then its causes."""
    lines, current = [], error
    while current is not None:
        lines.append(current.java_string() if current is error else f"Caused by: {current.java_string()}")
        lines += [f"\tat {frame}" for frame in _frames(current)] if current.traced else []
        for other in current.suppressed:
            lines.append(f"\tSuppressed: {other.java_string()}")
            lines += [f"\t\tat {frame}" for frame in _frames(other)] if other.traced else []
        current = current.cause
    return "\n".join(lines) + "\n"


def _frames(error: BaseException) -> list[str]:
    """Return the frames `error` was raised through, innermost first, as Java writes them."""
    frames, tb = [], error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        module = tb.tb_frame.f_globals.get("__name__", "?")
        name = getattr(code, "co_qualname", code.co_name)
        frames.append(f"{module}.{name}({code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno})")
        tb = tb.tb_next
    return list(reversed(frames)) or ["<unknown>"]


def log4j(level: str, text: str, logger: str) -> str:
    """Return a log4j line as Kafka's tools-log4j layout writes it: `[time] LEVEL text (logger)`."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + f",{int(now * 1000) % 1000:03d}"
    return f"[{stamp}] {level} {text} ({logger})\n"


def logged(prefix: str, logger: str) -> Callable:
    """Return the form `stdout: <prefix><message>; stderr: a log4j ERROR line holding the stack trace`."""
    def form(run: "Run", error: KafkaError) -> None:
        run.env.stdout.write(f"{prefix}{error.message}\n")
        run.env.stderr.write(log4j("ERROR", stack_trace(error), logger))
    return form


def uncaught(run: "Run", error: KafkaError) -> None:
    """Print Kafka's mainNoExit form on stderr: the message, the stack trace, a blank line."""
    run.env.stderr.write(f"{error.message}\n{stack_trace(error)}\n")


def thread(run: "Run", error: KafkaError) -> None:
    """Print the JVM's uncaught-exception form on stderr: `Exception in thread "main" <stack trace>`."""
    run.env.stderr.write(f'Exception in thread "main" {stack_trace(error)}')


def stdout_error(run: "Run", error: KafkaError) -> None:
    """Print `Error: <message>` and the stack trace on stdout (kafka-reassign-partitions)."""
    run.env.stdout.write(f"Error: {error.message}\n{stack_trace(error)}\n")


# ---------------------------------------------------------------- running


@dataclass(frozen=True)
class Tool:
    """A jopt-simple tool's constants: program name, its --help and no-arguments messages, and its failure form."""

    prog: str
    help: str
    form: Callable = uncaught
    no_args: str | None = None          # None: the --help message
    connect_form: Callable | None = None    # a bad --command-config or bootstrap list (None: `form`)
    parse_in_thread: bool = False       # a bad command line escapes main(): the JVM's "Exception in thread" form


class Run:
    """One run of a jopt tool: its options (args), streams (env), the click context, and the connection."""

    def __init__(self, ctx: click.Context, args: argparse.Namespace, env: Environment, tool: Tool):
        self.ctx, self.args, self.env, self.tool = ctx, args, env, tool
        self._context: Context | None = None
        self._admins: list = []

    def has(self, name: str) -> bool:
        """Tell whether option `name` (its parameter name) was given: jopt's options.has(), which a variable
        or a profile's setting also answers."""
        value = getattr(self.args, name, None)
        return value not in (None, False, [], ())

    @property
    def structured(self) -> bool:
        """Tell whether --output json or yaml was asked for."""
        return structured(getattr(self.args, "output", "text") or "text")

    def context(self) -> Context:
        """Return the connection settings (made once: the client properties are read, the deadline starts)."""
        if self._context is None:
            settings = argparse.Namespace(**{**vars(self.args), "config": self.args.command_config})
            try:
                self._context = Context(settings, self.env)
            except Failure as e:
                raise KafkaError(str(e), "java.io.IOException" if self.args.command_config else CONFIG_EXCEPTION,
                                 status=e.status, form=self.tool.connect_form) from None
        return self._context

    def admin(self):
        """Return an Admin (controller.client.admin) to the run's cluster; closed when the run ends."""
        admin = self.context().admin()
        self._admins.append(admin)
        return admin

    def call(self, fn, *args):
        """Return fn(*args) (an Admin call); its failure becomes a KafkaError (see Rules)."""
        from kraftsman.controller.client import sync_client as sc
        from kraftsman.controller.client.active_controller import CONNECTION_ERRORS
        from kraftsman.controller.client.admin import ServerError

        try:
            return fn(*args)
        except ServerError as e:
            raise server_error(e) from None
        except CONNECTION_ERRORS as e:
            raise KafkaError(str(e), TIMEOUT_EXCEPTION, traced=False, status=ExitStatus.UNAVAILABLE) from None
        except sc.UnsupportedVersion as e:
            raise KafkaError(str(e), UNSUPPORTED_EXCEPTION, traced=False) from None

    def emit(self, text: str, status: int = ExitStatus.OK, **fields) -> None:
        """Print Kafka's text, or the one JSON (YAML) object {"command", "status", ...fields}."""
        if self.structured:
            self.env.stdout.write(render({"command": self.args.command, "status": int(status)} | fields,
                                         self.args.output))
        elif text:
            self.env.stdout.write(text if text.endswith("\n") else text + "\n")

    def close(self) -> None:
        """Close the connections of every Admin this run made."""
        for admin in self._admins:
            admin.close()


def server_error(error) -> KafkaError:
    """Return the KafkaError of a controller.client.admin.ServerError (its code's class, no stack trace)."""
    from kraftsman.storage.protocol.errors import exception_class

    return KafkaError(error.message, exception_class(error.code), traced=False)


def run(ctx: click.Context, values: dict, implementation: Callable[[Run], int], tool: Tool) -> int:
    """Run one jopt tool's command (see Rules): answer --help, --version and an empty line as Kafka does, then
    implementation(Run); print a failure as the run's output asks; return the exit status."""
    env: Environment = ctx.find_root().obj
    current = Run(ctx, namespace(ctx, values), env, tool)
    try:
        status = _answer(current)
        return implementation(current) if status is None else status
    except UsageExit as e:
        return _fail(current, KafkaError(str(e), status=ExitStatus.USAGE, form=_usage))
    except KafkaError as e:
        return _fail(current, e)
    finally:
        current.close()


def _usage(current: Run, error: KafkaError) -> None:
    """Print printUsageAndExit's text: the message, then the table of Kafka's options, on stderr."""
    current.env.stderr.write(f"{error.message}\n{table(current.ctx.command)}\n")


def _answer(current: Run) -> int | None:
    """Answer no arguments, --help and --version as Kafka does (exit 1, 1 and 0); None: go on."""
    ctx, env, tool = current.ctx, current.env, current.tool
    if not _words(ctx):
        env.stderr.write(f"{tool.no_args or tool.help}\n{table(ctx.command)}\n")
        return ExitStatus.ERROR
    if current.args.show_help:
        import textwrap

        from .typer_app import GLOBAL_FLAGS

        env.stderr.write(f"{tool.help}\n{table(ctx.command)}\n\n{table(ctx.command, additions=True)}\n"
                         f"{textwrap.fill(GLOBAL_FLAGS, 80)}\n")
        return ExitStatus.ERROR
    if current.args.show_version:          # the release's Kafka version (KRAFTSMAN_KAFKA_VERSION), as Kafka's tools
        from kraftsman.storage.releases import KAFKA_VERSIONS

        from .kafka_release import kafka_release

        env.stdout.write(f"{KAFKA_VERSIONS[kafka_release(env)]}\n")
        return ExitStatus.OK
    return None


def _words(ctx: click.Context) -> list[str]:
    """Return the options the command line held (jopt's args), those a variable gave counted in (flag > variable:
    `KRAFTSMAN_BROKER_API_VERSIONS_BOOTSTRAP_SERVER=h:9092 kafka-broker-api-versions` is not an empty line)."""
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    return [p for p in ctx.params if ctx.get_parameter_source(p) in given] + list(ctx.args)


def _fail(current: Run, error: KafkaError) -> int:
    """Print a failure: one JSON/YAML object when asked, else in its Kafka form (a usage failure exits 1 either way)."""
    status = ExitStatus.ERROR if error.status == ExitStatus.USAGE else error.status
    if current.structured:
        message = error.message if error.message is not None else error.java_class
        obj = {"command": current.args.command, "status": status, "error": " ".join(message.split())}
        current.env.stdout.write(render(obj | error.fields, current.args.output))
        return status
    (error.form or current.tool.form)(current, error)
    return status


def namespace(ctx: click.Context, values: dict) -> argparse.Namespace:
    """Return the run's options: the parameters, `config` the client properties file (--command-config),
    `client` the -X pairs, `command` the tool's name; a profile fills what the line and variables left out."""
    from . import profiles

    found = merged(ctx, values)
    args = argparse.Namespace(**found)
    args.command = ctx.info_name
    timeout = found.get("timeout")
    connection = argparse.Namespace(
        bootstrap_server=found.get("bootstrap_server"), bootstrap_controller=found.get("bootstrap_controller"),
        config=found.get("command_config"), client=_pairs(ctx, found.get("client_property") or []),
        timeout=timeout if isinstance(timeout, float) else None, output=found.get("output") or "text")
    env: Environment = ctx.find_root().obj
    chosen = profiles.select(profiles.load(env.env), found.get("profile"), env.env)

    def given(name: str) -> bool:
        return not kept_default(ctx, "command_config" if name == "config" else name)
    profiles.fill(connection, chosen, given, output="output" in found)
    args.bootstrap_server, args.bootstrap_controller = connection.bootstrap_server, connection.bootstrap_controller
    args.command_config, args.client = connection.config, connection.client
    args.timeout, args.output = connection.timeout, connection.output
    return args


def _pairs(ctx: click.Context, pairs: list[str]) -> dict[str, str]:
    from .key_values import BadPair, key_values

    try:
        return key_values(pairs)
    except BadPair as e:
        raise click.UsageError(f"argument --client-property/-X: expected KEY=VALUE, got {e.pair!r}", ctx) from None


def usage_error(error: click.UsageError, prog: str, tool: Tool | None = None) -> str:
    """Return a bad command line as Kafka's main prints jopt-simple's exception (message, trace, blank line), or as
    the JVM prints it when it escapes main() (`tool.parse_in_thread`)."""
    name = getattr(error, "option_name", None) or ""
    if isinstance(error, click.NoSuchOption):
        failure = KafkaError(f"{name.lstrip('-')} is not a recognized option", "joptsimple.UnrecognizedOptionException")
    elif isinstance(error, click.BadOptionUsage) and "requires an argument" in error.message:
        failure = KafkaError(f"Option {name.lstrip('-')} requires an argument",
                             "joptsimple.OptionMissingRequiredArgumentException")
    else:
        failure = KafkaError(error.format_message(), "joptsimple.OptionException")
    failure.__traceback__ = error.__traceback__
    if tool is not None and tool.parse_in_thread:
        return f'Exception in thread "main" {stack_trace(failure)}'
    return f"{failure.message}\n{stack_trace(failure)}\n"


_kafka_usage_error = usage_error        # run_tool's parameter of the same name shadows it


def run_tool(app, argv: list[str], env: Environment, tool: Tool, tool_env_name: str,
             usage_error: Callable[[click.UsageError, str], str] | None = None) -> int:
    """Run a jopt tool's typer `app` on `argv` (its run(argv, env)); return the exit status. `usage_error` prints a
    bad command line (default: Kafka's uncaught jopt-simple exception in the tool's form, usage_error above)."""
    from .typer_app import run_app

    printer = usage_error or (lambda error, prog: _kafka_usage_error(error, prog, tool))
    # a bad command line is Kafka's 1 whatever --output asks (the suite's one rule, issue 31)
    return run_app(app, argv, env, prog=tool.prog, tool_env_name=tool_env_name, usage_error=printer)
