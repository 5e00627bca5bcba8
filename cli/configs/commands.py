"""kafka-configs' run: ConfigCommand.main's order (checkArgs, the Admin client, the action) and its three ways to fail.

Rules:
- The parsed options become an entities.Occurrences (Kafka's option names), the --entity-name / --entity-default
  occurrences in the order the raw command line gives them (ARGV, which tool.run sets for the run; Kafka's
  failure text quotes it too); then entities.check_args.
- Failures, as ConfigCommand.main prints them, all exit 1: a Usage is printUsageAndExit (jopt.UsageExit); a
  Refusal (IllegalArgumentException, InvalidConfigurationException, a jopt-simple OptionException, a bad
  command-line option included) is its message alone on stderr; anything else is config_error: "Error while
  executing config command with args '<the command line>'" and the Java exception's stack trace on stderr (a
  server error as the ExecutionException its Admin future throws; a node that never appears as a bare
  java.util.concurrent.TimeoutException). Cannot reach the cluster: the same text, exit 69 (the suite's).
- Relative --add-config-file paths are read from the run's working directory (Environment.cwd).
"""
from __future__ import annotations

import contextvars
import os

from ..common import jopt
from ..common.status import ExitStatus
from . import entities
from .entities import Occurrences, Refusal, Usage

FLAGS = ("all", "alter", "broker-defaults", "client-defaults", "describe", "entity-default", "force", "ip-defaults",
         "user-defaults")
VALUED = ("add-config", "add-config-file", "bootstrap-controller", "bootstrap-server", "broker", "broker-logger",
          "client", "command-config", "delete-config", "entity-type", "ip", "topic", "user", "zk-tls-config-file",
          "zookeeper")
EXECUTION = "java.util.concurrent.ExecutionException"
ARGV: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("kafka_configs_argv", default=None)
UNSUPPORTED_ENDPOINT = ("org.apache.kafka.common.errors.UnsupportedEndpointTypeException", "This Admin API is not yet "
                        "supported when communicating directly with the controller quorum.")


def config_error(r: jopt.Run, error: jopt.KafkaError) -> None:
    """Print ConfigCommand's catch-all failure: the command line, then the exception's stack trace, on stderr."""
    r.env.stderr.write(f"Error while executing config command with args '{' '.join(ARGV.get() or [])}'\n"
                       f"{jopt.stack_trace(error)}")


def message_only(r: jopt.Run, error: jopt.KafkaError) -> None:
    """Print a refusal as ConfigCommand does: its message alone on stderr."""
    r.env.stderr.write(f"{error.message}\n")


def option_error(error, prog: str) -> str:
    """Return a bad command line as ConfigCommand prints jopt-simple's exception: its message alone."""
    return jopt.usage_error(error, prog).split("\n", 1)[0] + "\n"


def refusal(message: str) -> jopt.KafkaError:
    """Return a Refusal as a KafkaError printed in its message-only form."""
    return jopt.KafkaError(message, form=message_only)


def occurrences(r: jopt.Run, argv: list[str]) -> Occurrences:
    """Return the run's options under Kafka's names (see Rules)."""
    given: list[tuple[str, str | None]] = [(name, None) for name in FLAGS if name != "entity-default"
                                           and r.has(_param(name))]
    for name in VALUED:
        value = getattr(r.args, _param(name), None)
        given += [(name, v) for v in (value if isinstance(value, list) else [value] if value else [])]
    names = iter(getattr(r.args, "entity_name", None) or [])
    for word in argv:
        if word == "--entity-default":
            given.append(("entity-default", None))
        elif word == "--entity-name" or word.startswith("--entity-name="):
            given.append(("entity-name", next(names, "")))
    given += [("entity-name", rest) for rest in names]      # a name the scan missed (a variable, a profile)
    if r.has("entity_default") and not any(n == "entity-default" for n, _ in given):
        given.append(("entity-default", None))
    return Occurrences(given)


def _param(name: str) -> str:
    return {"all": "all_", "client": "client_"}.get(name, name.replace("-", "_"))    # args.client: -X pairs


def run(r: jopt.Run, argv: list[str]) -> int:
    """Check the command line, then describe or alter; return the exit status."""
    try:
        opts = occurrences(r, argv)
        entities.check_args(opts)
    except Usage as e:
        raise jopt.UsageExit(str(e)) from None
    except Refusal as e:
        raise refusal(str(e)) from None
    r.args.command = "alter" if opts.has("alter") else "describe"
    if opts.has("zookeeper"):
        raise refusal("kraftsman's kafka-configs talks to the cluster (--bootstrap-server or --bootstrap-controller); "
                      "it does not write configs to ZooKeeper")
    admin = r.admin()
    try:
        entities.check_names_per_type(opts)
        return (alter_entities if opts.has("alter") else describe_entities)(r, admin, opts)
    except Refusal as e:
        raise refusal(str(e)) from None


def describe_entities(r: jopt.Run, admin, opts: Occurrences) -> int:
    """Print what --describe asks for (lines as they are known), or its one JSON/YAML object."""
    from .describe import describe

    out = (lambda line: None) if r.structured else (lambda line: r.env.stdout.write(line + "\n"))
    found = call(r, describe, admin, entities.entity_types(opts), entities.entity_names(opts), opts.has("all"), out)
    r.emit("", entities=found)
    return ExitStatus.OK


def alter_entities(r: jopt.Run, admin, opts: Occurrences) -> int:
    """Apply --alter; print Kafka's "Completed updating ..." line, or the JSON/YAML object (6: nothing changed)."""
    from .add_config import ConfigFileError, configs_to_add, configs_to_delete
    from .alter import alter
    from .texts import completed_line

    types, names = entities.entity_types(opts), entities.entity_names(opts)
    warnings = r.env.stderr if r.structured else r.env.stdout
    files = [("add-config-file", read_path(r, p)) for p in opts.values("add-config-file")]
    try:
        adds = configs_to_add(Occurrences([g for g in opts.given if g[0] != "add-config-file"] + files),
                              lambda line: warnings.write(line + "\n"))
    except ConfigFileError as e:
        java_class, _, message = e.java.partition(": ")
        raise jopt.KafkaError(message, java_class) from None
    changed = call(r, alter, admin, types, names, adds, configs_to_delete(opts))
    status = ExitStatus.OK if changed or not r.structured else jopt.EXIT_UNCHANGED
    r.emit(completed_line(types[0], names[0]), status=status, entity_types=types, entity_names=names,
           changed=changed)
    return status


def call(r: jopt.Run, fn, *args):
    """Return fn(*args) (a flow over Admin calls), its failures as ConfigCommand reports them (see Rules)."""
    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.active_controller import CONNECTION_ERRORS
    from kraftsman.controller.client.admin import ServerError
    from kraftsman.controller.client.admin.core import NodeUnavailable

    try:
        return fn(*args)
    except ServerError as e:
        raise execution_error(e.code, e.message) from None
    except NodeUnavailable:
        raise jopt.KafkaError(None, "java.util.concurrent.TimeoutException") from None
    except CONNECTION_ERRORS as e:
        raise jopt.KafkaError(str(e), jopt.TIMEOUT_EXCEPTION, traced=False, status=ExitStatus.UNAVAILABLE) from None
    except sc.UnsupportedVersion as e:
        if r.args.bootstrap_controller:
            cause = jopt.KafkaError(UNSUPPORTED_ENDPOINT[1], UNSUPPORTED_ENDPOINT[0], traced=False)
            raise jopt.KafkaError(f"{cause.java_class}: {cause.message}", EXECUTION, cause=cause) from None
        raise jopt.KafkaError(str(e), jopt.UNSUPPORTED_EXCEPTION, traced=False) from None


def execution_error(code: int, message: str) -> jopt.KafkaError:
    """Return the ExecutionException an Admin future throws for a server error (the cause: Kafka's exception)."""
    from kraftsman.storage.protocol.errors import exception_class

    cause = jopt.KafkaError(message, exception_class(code), traced=False)
    return jopt.KafkaError(f"{cause.java_class}: {message}", EXECUTION, cause=cause)


def read_path(r: jopt.Run, path: str) -> str:
    """Return `path` as the run sees it: relative to the run's working directory."""
    return path if os.path.isabs(path) else os.path.join(r.env.cwd, path)
