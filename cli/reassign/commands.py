"""kafka-reassign-partitions' checks and dispatch: ReassignPartitionsCommand.validateAndParseArgs and handleAction, in
Kafka's order and words.

Rules:
- check(r), after --help and --version: exactly one action ("Command must include exactly one action: --generate,
  --execute, --verify, --cancel, --list"), a bootstrap ("Please specify --bootstrap-server"), the action's
  required options ('Missing required argument "[reassignment-json-file]"'), then no option the action does not
  take ('Option "[throttle]" can\'t be used with action "[verify]"'): each is Kafka's printUsageAndExit (stderr:
  the message and the option table, exit 1). kraftsman's additions go with every action.
- Then the action: its input file read first (a file Java cannot read fails as Kafka's does), numbers converted as
  jopt-simple converts Longs, then actions.py / execute.py / verify.py. Kafka's TerseException is its message
  alone on stdout; any other failure "Error: <message>" and the stack trace on stdout (the tool's form); exit 1.
- --output json|yaml: one object {"command": <action>, "status", ...}; --verify's status tells done (0), still in
  progress (75) and not as planned (1) apart; Kafka's text mode always exits 0 after a --verify that ran.
"""
from __future__ import annotations

import random
import re

from ..common import jopt
from ..common.status import ExitStatus

ACTIONS = ("generate", "execute", "verify", "cancel", "list_")
ONE_ACTION = "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"
REQUIRED = {"verify": ("reassignment_json_file",), "generate": ("topics_to_move_json_file", "broker_list"),
            "execute": ("reassignment_json_file",), "cancel": ("reassignment_json_file",), "list_": ()}
PERMITTED = {"verify": ("bootstrap_server", "command_config", "preserve_throttles"),
             "generate": ("bootstrap_server", "broker_list", "command_config", "disable_rack_aware"),
             "execute": ("additional", "bootstrap_server", "command_config", "throttle",
                         "replica_alter_log_dirs_throttle", "move_timeout"),
             "cancel": ("bootstrap_server", "command_config", "preserve_throttles", "move_timeout"),
             "list_": ("bootstrap_server", "command_config")}
KAFKA_OPTIONS = ("additional", "broker_list", "cancel", "command_config", "disable_rack_aware", "execute", "generate",
                 "list_", "preserve_throttles", "reassignment_json_file", "replica_alter_log_dirs_throttle",
                 "throttle", "move_timeout", "topics_to_move_json_file", "verify")
VERIFY_STATUS = {"done": ExitStatus.OK, "in progress": ExitStatus.TIMED_OUT, "failed": ExitStatus.ERROR}
_NAMES = {"list_": "list", "move_timeout": "timeout"}


def option(name: str) -> str:
    """Return the jopt option name of parameter `name`."""
    return _NAMES.get(name, name.replace("_", "-"))


def check(r: jopt.Run) -> str:
    """Return the action, or raise the usage failure validateAndParseArgs would (see Rules)."""
    jopt.exactly_one(r, list(ACTIONS), ONE_ACTION)
    action = next(a for a in ACTIONS if r.has(a))
    if not (r.has("bootstrap_server") or r.has("bootstrap_controller")):
        raise jopt.UsageExit("Please specify --bootstrap-server")
    if r.has("bootstrap_server") and r.has("bootstrap_controller"):
        raise jopt.UsageExit("Only one of --bootstrap-server or --bootstrap-controller can be specified")
    for name in REQUIRED[action]:
        if not r.has(name):
            raise jopt.missing_argument(option(name))
    for name in KAFKA_OPTIONS:
        if r.has(name) and name != action and name not in REQUIRED[action] and name not in PERMITTED[action]:
            raise jopt.UsageExit(f'Option "[{option(name)}]" can\'t be used with action "[{option(action)}]"')
    return action


def java_long(r: jopt.Run, name: str, default: int) -> int:
    """Return option `name` as jopt-simple's Long conversion reads it (Long.valueOf), or its default."""
    text = getattr(r.args, name)
    if text is None:
        return default
    if re.fullmatch(r"[-+]?[0-9]+", text) and -2**63 <= int(text) < 2**63:
        return int(text)
    number = jopt.KafkaError(f'For input string: "{text}"', "java.lang.NumberFormatException")
    reflection = jopt.KafkaError(f'java.lang.NumberFormatException: For input string: "{text}"',
                                 "joptsimple.internal.ReflectionException", cause=number)
    raise jopt.KafkaError(f"Cannot parse argument '{text}' of option {option(name)}",
                          "joptsimple.OptionArgumentConversionException", cause=reflection)


def terse(r: jopt.Run, error: jopt.KafkaError) -> None:
    """Print Kafka's TerseException: its message alone, on stdout."""
    r.env.stdout.write(error.message + "\n")


def run(r: jopt.Run) -> int:
    """Check the command line, then run the action; return the exit status."""
    from .texts import TerseException

    action = check(r)
    try:
        return _action(r, action)
    except TerseException as e:
        failure = jopt.KafkaError(str(e), form=terse)
        failure.fields = dict(e.fields)
        raise failure from None


def _action(r: jopt.Run, action: str) -> int:
    from ..common import kafka_json
    from . import actions

    r.args.command = option(action)
    say = (lambda line: None) if r.structured else (lambda line: r.env.stdout.write(line + "\n"))
    raw = (lambda text: None) if r.structured else r.env.stdout.write
    if action == "list_":
        fields = r.call(actions.list_reassignments, r.admin(), say)
    elif action == "generate":
        text = kafka_json.read_file(r.args.topics_to_move_json_file, r.env.cwd)
        fields = r.call(actions.generate, r.admin(), text, r.args.broker_list, not r.has("disable_rack_aware"),
                        random.Random(), say)
    else:
        text = kafka_json.read_file(r.args.reassignment_json_file, r.env.cwd)
        fields = _on_plan(r, action, text, say, raw)
        if action == "verify":
            r.emit("", VERIFY_STATUS[fields["outcome"]], **fields)
            return VERIFY_STATUS[fields["outcome"]] if r.structured else ExitStatus.OK
    r.emit("", **fields)
    return ExitStatus.OK


def _on_plan(r: jopt.Run, action: str, text: str, say, raw) -> dict:
    from . import execute, verify

    if action == "execute":
        throttle = java_long(r, "throttle", -1)
        log_dirs = java_long(r, "replica_alter_log_dirs_throttle", -1)
        java_long(r, "move_timeout", 10_000)
        return r.call(execute.execute, r.admin(), text, r.has("additional"), throttle, log_dirs, say)
    if action == "verify":
        return r.call(verify.verify, r.admin(), text, r.has("preserve_throttles"), say)
    java_long(r, "move_timeout", 10_000)
    return r.call(verify.cancel, r.admin(), text, r.has("preserve_throttles"), say, raw)
