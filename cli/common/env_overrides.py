"""Environment overrides: the KRAFTSMAN_<TOOL>_<FLAG> names, and server properties from KAFKA_* (opt-in).

Rules:
- Precedence is flag > environment > config file > built-in default, for every tool.
- A long option `--some-flag` of tool `storage` reads `KRAFTSMAN_STORAGE_SOME_FLAG` when the command line
  does not give it (the tool name keeps `-c/--config` of kafka-storage apart from kafka-cluster's). Only
  kraftsman's own prefix is read, so no variable set for another program changes a Kafka-compatible default.
  The names are made here; click reads them for every typer tool (common/typer_app.py): a value goes through
  the option's own type and choices, a bad one is a usage error naming the variable; flags without a value
  take 1/true/yes/on or 0/false/no/off, repeatable flags one value per line.
- A container convention overrides the server .properties file's keys with KAFKA_* variables, only when
  KRAFTSMAN_KAFKA_ENV asks (Kafka's own scripts never read them), and never for the variables Kafka's scripts
  use for themselves (KAFKA_HEAP_OPTS, KAFKA_OPTS, ...). `apache` (or 1/true/yes/on) is the apache/kafka image's
  mapping (KAFKA_NODE_ID -> node.id; `___` -> `-`, `__` -> `_`, `_` -> `.`); `confluent` is Confluent's images'
  (`___` -> `_`, `__` -> `-`, `_` -> `.`); another value is a usage error naming the variable.
"""
from __future__ import annotations

from typing import Mapping

from ..app import TOOLS as REGISTRY
from .status import ExitStatus, ToolError

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


# convention -> (what `___` stands for, what `__` stands for); a single `_` is always `.`
CONVENTIONS = {"apache": ("-", "_"), "confluent": ("_", "-")}


def container_convention(environ: Mapping[str, str]) -> str | None:
    """Return the container convention KRAFTSMAN_KAFKA_ENV asks for (None: off); raise a usage ToolError."""
    word = environ.get(KAFKA_ENV_SWITCH, "").strip().lower()
    if word in FALSE or not word:
        return None
    if word in TRUE:
        return "apache"
    if word in CONVENTIONS:
        return word
    raise ToolError(f"{KAFKA_ENV_SWITCH}: expected apache, confluent, 1 (apache) or 0, not "
                    f"{environ[KAFKA_ENV_SWITCH]!r}", ExitStatus.USAGE)


def kafka_environment_properties(environ: Mapping[str, str]) -> dict[str, str]:
    """Return the server properties the container convention gives (empty unless KRAFTSMAN_KAFKA_ENV asks)."""
    convention = container_convention(environ)
    if convention is None:
        return {}
    found = {}
    for name, value in environ.items():
        if name.startswith("KAFKA_") and name not in KAFKA_SCRIPT_VARIABLES and len(name) > 6:
            found[property_name(name[6:], convention)] = value
    return found


def property_name(suffix: str, convention: str = "apache") -> str:
    """Return the property a KAFKA_ variable suffix names under `convention` (see the rules)."""
    triple, double = CONVENTIONS[convention]
    return triple.join(double.join(piece.replace("_", ".") for piece in part.split("__"))
                       for part in suffix.lower().split("___"))


def with_kafka_environment(props: dict[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """Return `props` (a server .properties file's keys) overridden by the KAFKA_* environment, if enabled."""
    overrides = kafka_environment_properties(environ)
    return {**props, **overrides} if overrides else props


def load_server_properties(path: str, environ: Mapping[str, str], error: type[Exception] = ToolError) -> dict[str, str]:
    """Read a server .properties file with the container's KAFKA_* variables over it (when asked); raise `error`
    with the one line Kafka's tools print for a missing or unreadable file."""
    from kraftsman.storage import properties

    try:
        return with_kafka_environment(properties.load(path), environ)
    except FileNotFoundError:
        raise error(f"{path} (No such file or directory)") from None
    except (OSError, properties.PropertiesError) as e:
        raise error(f"Unable to read {path}: {e}") from None
