"""Environment overrides: every flag from KRAFTSMAN_<TOOL>_<FLAG>, server properties from KAFKA_* (opt-in).

Rules:
- Precedence is flag > environment > config file > built-in default, for every tool.
- A long option `--some-flag` of tool `storage` reads `KRAFTSMAN_STORAGE_SOME_FLAG` when the command line
  does not give it (the tool name keeps `-c/--config` of kafka-storage apart from kafka-cluster's). Only
  kraftsman's own prefix is read, so no variable set for another program changes a Kafka-compatible default.
- A value goes through the option's own type and choices; a bad one is a usage error naming the variable.
- Flags without a value take 1/true/yes/on or 0/false/no/off; repeatable flags take one value per line.
- A variable for one member of a mutually exclusive group is ignored when another member is on the command line.
- Kafka's container convention (KAFKA_NODE_ID -> node.id; `___` -> `_`, `__` -> `-`, `_` -> `.`) overrides the
  server .properties file's keys, only when KRAFTSMAN_KAFKA_ENV=1 (Kafka's own scripts never read them), and
  never for the variables Kafka's scripts use for themselves (KAFKA_HEAP_OPTS, KAFKA_OPTS, ...).
"""
from __future__ import annotations

import argparse
from typing import Mapping

from .app import TOOLS as REGISTRY
from .common import ToolError, ExitStatus

PREFIX = "KRAFTSMAN_"
TRUE, FALSE = frozenset({"1", "true", "yes", "on"}), frozenset({"0", "false", "no", "off"})
KAFKA_ENV_SWITCH = "KRAFTSMAN_KAFKA_ENV"
# Variables Kafka's launch scripts and images read for themselves: never server properties.
KAFKA_SCRIPT_VARIABLES = frozenset({
    "KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_LOG4J_OPTS",
    "KAFKA_JMX_OPTS", "KAFKA_JMX_PORT", "KAFKA_JMX_HOSTNAME", "KAFKA_DEBUG", "KAFKA_HOME", "KAFKA_VERSION",
    "KAFKA_LOG4J_ROOT_LOGLEVEL", "KAFKA_LOG4J_LOGGERS", "KAFKA_TOOLS_LOG4J_LOGLEVEL", "KAFKA_LOG_DIR",
    "KAFKA_CLASSPATH", "KAFKA_MODE", "KAFKA_URL", "KAFKA_CLUSTER_ID",
})


# Console script -> the tool name in its variables (the registry's env_name).
TOOLS = {t.script: t.env_name for t in REGISTRY}
SERVER_PROPERTIES_TOOLS = frozenset({"kafka-storage", "kafka-controller"})


def variable_name(tool: str, option: str) -> str:
    """Return the environment variable that stands for `option` (a long flag) of `tool`."""
    return PREFIX + f"{tool}_{option.lstrip('-')}".upper().replace("-", "_")


def apply_flag_environment(parser: argparse.ArgumentParser, tool: str, argv: list[str],
                           environ: Mapping[str, str]) -> None:
    """Set the defaults of `parser`'s options (and its sub-commands') from the environment, before parsing."""
    given = {s.split("=", 1)[0] for s in argv if s.startswith("-")}
    for action in _actions(parser):
        long = next((s for s in action.option_strings if s.startswith("--")), None)
        if long is None or long in ("--help", "--version"):
            continue
        name = variable_name(tool, long)
        if name not in environ or _group_taken(parser, action, given):
            continue
        action.default = _convert(action, environ[name], name)
        action.required = False


def _actions(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _actions(sub)
        elif action.option_strings:
            yield action


def _group_taken(parser: argparse.ArgumentParser, action: argparse.Action, given: set[str]) -> bool:
    """Tell whether another member of `action`'s mutually exclusive group is on the command line."""
    for group in _groups(parser):
        if action in group._group_actions:
            return any(s in given for other in group._group_actions if other is not action
                       for s in other.option_strings)
    return False


def _groups(parser: argparse.ArgumentParser):
    yield from parser._mutually_exclusive_groups
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _groups(sub)


def _convert(action: argparse.Action, text: str, name: str):
    """Return `text` as `action` would store it, or raise a usage ToolError naming the variable."""
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        flag = _boolean(text, name)
        return flag if isinstance(action, argparse._StoreTrueAction) else not flag
    if isinstance(action, argparse._CountAction):
        return _typed(int, text, name)
    if isinstance(action, argparse._AppendAction):
        return [_one(action, line, name) for line in text.splitlines() if line.strip()]
    if action.nargs in ("+", "*") or isinstance(action.nargs, int):
        return [_one(action, word, name) for word in text.split()]
    return _one(action, text, name)


def _one(action: argparse.Action, text: str, name: str):
    value = _typed(action.type, text, name) if callable(action.type) else text
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise ToolError(f"{name}: invalid choice {text!r} (choose from {choices})", ExitStatus.USAGE)
    return value


def _typed(kind, text: str, name: str):
    try:
        return kind(text)
    except (TypeError, ValueError, argparse.ArgumentTypeError) as e:
        raise ToolError(f"{name}: invalid value {text!r} ({e})", ExitStatus.USAGE) from None


def _boolean(text: str, name: str) -> bool:
    word = text.strip().lower()
    if word in TRUE or word in FALSE:
        return word in TRUE
    raise ToolError(f"{name}: expected one of 1/true/yes/on or 0/false/no/off, not {text!r}", ExitStatus.USAGE)


def kafka_environment_properties(environ: Mapping[str, str]) -> dict[str, str]:
    """Return the server properties Kafka's container convention gives (empty unless KRAFTSMAN_KAFKA_ENV=1)."""
    if environ.get(KAFKA_ENV_SWITCH, "").strip().lower() not in TRUE:
        return {}
    found = {}
    for name, value in environ.items():
        if name.startswith("KAFKA_") and name not in KAFKA_SCRIPT_VARIABLES and len(name) > 6:
            found[property_name(name[6:])] = value
    return found


def property_name(suffix: str) -> str:
    """Return the property a KAFKA_ variable suffix names: `___` is `_`, `__` is `-`, `_` is `.`."""
    parts = suffix.lower().split("___")
    return "_".join(part.replace("__", "-").replace("_", ".") for part in parts)


def with_kafka_environment(props: dict[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """Return `props` (a server .properties file's keys) overridden by the KAFKA_* environment, if enabled."""
    overrides = kafka_environment_properties(environ)
    return {**props, **overrides} if overrides else props


def with_environment(parser: argparse.ArgumentParser, tool: str, argv: list[str],
                     environ: Mapping[str, str]) -> argparse.ArgumentParser:
    """Return `parser` with its defaults taken from the KRAFTSMAN_<TOOL>_* environment (see the rules)."""
    apply_flag_environment(parser, tool, argv, environ)
    return parser
