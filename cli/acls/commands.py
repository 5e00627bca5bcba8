"""kafka-acls' run: AclCommand.main's order (checkArgs, then the one action through the Admin client) and its failures.

Rules:
- Heavy modules (the Admin client, bindings) are imported when the action runs: --help stays light.
- The parsed options are read under Kafka's option names (Options); bindings.check_args runs first (a Usage is
  printUsageAndExit: jopt.UsageExit). Without a bootstrap flag Kafka needs --authorizer-properties (Kafka's
  "Missing required argument") and then uses ZooKeeper: kraftsman prints Kafka's deprecation line and refuses.
- Failures inside the action are AclCommand's catch-all (acl_error): "Error while executing ACL command: <message>"
  and the stack trace, then a blank line, on stdout, exit 1 (69 when the cluster cannot be reached). A server
  error is the ExecutionException its Admin future throws.
- --output json|yaml prints one object: the ACLs listed, added or removed; 6 when an --add or --remove changed
  nothing. --remove's questions then go to stderr, so stdout holds only the object.
"""
from __future__ import annotations

from ..common import jopt
from ..common.status import ExitStatus

EXECUTION = "java.util.concurrent.ExecutionException"
DEPRECATION = ("Warning: support for ACL configuration directly through the authorizer is deprecated and will be "
               "removed in a future release. Please use --bootstrap-server instead to set ACLs through the admin "
               "client.")


class Options:
    """The run's options under Kafka's names (has, values, value), as bindings reads them."""

    def __init__(self, r: jopt.Run):
        self.r = r

    @staticmethod
    def _param(name: str) -> str:
        return {"list": "list_"}.get(name, name.replace("-", "_"))

    def has(self, name: str) -> bool:
        return self.r.has(self._param(name))

    def values(self, name: str) -> list[str]:
        value = getattr(self.r.args, self._param(name), None)
        return list(value) if isinstance(value, list) else [value] if isinstance(value, str) else []

    def value(self, name: str) -> str | None:
        values = self.values(name)
        return values[0] if values else None


def acl_error(r: jopt.Run, error: jopt.KafkaError) -> None:
    """Print AclCommand's catch-all failure on stdout: the message, the stack trace, a blank line."""
    r.env.stdout.write(f"Error while executing ACL command: {error.message}\n{jopt.stack_trace(error)}\n")


def option_error(error, prog: str) -> str:
    """Return a bad command line as the JVM prints the jopt-simple exception AclCommand's options throw."""
    from kraftsman.cli.common.jopt import KafkaError, stack_trace, usage_error

    message = usage_error(error, prog).split("\n", 1)[0]
    java_class = "joptsimple.UnrecognizedOptionException" if "is not a recognized option" in message else \
        "joptsimple.OptionMissingRequiredArgumentException" if "requires an argument" in message else \
        "joptsimple.OptionException"
    failure = KafkaError(message, java_class)
    failure.__traceback__ = error.__traceback__
    return f'Exception in thread "main" {stack_trace(failure)}'


def run(r: jopt.Run) -> int:
    """Check the command line, then list, add or remove; return the exit status."""
    from . import bindings
    from .bindings import Usage

    opts = Options(r)
    try:
        bindings.check_args(opts)
    except Usage as e:
        raise jopt.UsageExit(str(e)) from None
    r.args.command = next(a for a in ("add", "remove", "list") if opts.has(a))
    if not (opts.has("bootstrap-server") or opts.has("bootstrap-controller")):
        r.env.stderr.write(DEPRECATION + "\n")
        raise jopt.KafkaError("kraftsman's kafka-acls manages ACLs through the cluster (--bootstrap-server or "
                              "--bootstrap-controller); it does not write them to ZooKeeper through an authorizer",
                              form=lambda run, e: run.env.stderr.write(f"{e.message}\n"))
    admin = r.admin()
    action = {"add": add, "remove": remove, "list": list_}[r.args.command]
    try:
        return action(r, opts, admin)
    except Usage as e:
        raise jopt.UsageExit(str(e)) from None


def call(fn, *args):
    """Return fn(*args) (a flow over Admin calls), its failures as AclCommand reports them (see Rules)."""
    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.active_controller import CONNECTION_ERRORS
    from kraftsman.controller.client.admin import ServerError
    from kraftsman.storage.protocol.errors import exception_class

    from .bindings import Failed

    try:
        return fn(*args)
    except Failed as e:
        raise jopt.KafkaError(e.message, e.java_class) from None
    except ServerError as e:
        cause = jopt.KafkaError(e.message, exception_class(e.code), traced=False)
        raise jopt.KafkaError(f"{cause.java_class}: {e.message}", EXECUTION, cause=cause) from None
    except CONNECTION_ERRORS as e:
        raise jopt.KafkaError(str(e), jopt.TIMEOUT_EXCEPTION, traced=False, status=ExitStatus.UNAVAILABLE) from None
    except sc.UnsupportedVersion as e:
        raise jopt.KafkaError(str(e), jopt.UNSUPPORTED_EXCEPTION, traced=False) from None


def _writer(r: jopt.Run, stream=None):
    target = stream or r.env.stdout
    return (lambda text: None) if r.structured and stream is None else target.write


def _bindings(found) -> list[dict]:
    from kraftsman.controller.image.acls import OPERATIONS, PATTERN_TYPES, PERMISSION_TYPES, RESOURCE_TYPES

    return [{"resource_type": RESOURCE_TYPES[b.pattern.resource_type], "resource_name": b.pattern.name,
             "pattern_type": PATTERN_TYPES[b.pattern.pattern_type], "principal": b.entry.principal,
             "host": b.entry.host, "operation": OPERATIONS[b.entry.operation],
             "permission_type": PERMISSION_TYPES[b.entry.permission_type]} for b in found]


def list_(r: jopt.Run, opts: Options, admin) -> int:
    """--list: print the ACLs (or their JSON/YAML object)."""
    from .actions import list_acls

    shown = call(list_acls, opts, admin, _writer(r))
    r.emit("", acls=_bindings(shown))
    return ExitStatus.OK


def add(r: jopt.Run, opts: Options, admin) -> int:
    """--add: create the ACLs; in json/yaml, 6 when every one was there already."""
    from kraftsman.controller.client.admin.acls import AclBinding

    from .actions import add_acls
    from .bindings import patterns_to_add

    changed = call(add_acls, opts, admin, _writer(r), r.structured)
    status = ExitStatus.OK if changed or not r.structured else jopt.EXIT_UNCHANGED
    added = [AclBinding(p, a) for p, acls in call(patterns_to_add, opts).items() for a in acls]
    r.emit("", status=status, changed=changed, acls=_bindings(added))
    return status


def remove(r: jopt.Run, opts: Options, admin) -> int:
    """--remove: delete the ACLs after asking (unless --force); in json/yaml, 6 when nothing was deleted."""
    from .actions import NoAnswer, remove_acls

    def read_answer() -> str | None:
        line = r.env.stdin.readline()
        return line or None

    ask = _writer(r, r.env.stderr if r.structured else r.env.stdout)
    try:
        removed = call(remove_acls, opts, admin, ask, read_answer, opts.has("force"))
    except NoAnswer as e:
        raise jopt.KafkaError(str(e), form=lambda run, err: run.env.stderr.write(f"{err.message}\n")) from None
    status = ExitStatus.OK if removed or not r.structured else jopt.EXIT_UNCHANGED
    r.emit("", status=status, changed=bool(removed), removed=_bindings(removed))
    return status
