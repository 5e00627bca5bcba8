"""Topic config definitions of Kafka 3.9 (LogConfig): types, defaults and validators.

Rules:
- Defaults are what a Kafka 3.9 cluster with default broker settings reports (CreateTopics v5+ response
  configs); min.insync.replicas and unclean.leader.election.enable follow the controller's QuorumConfig.
- validate() parses like Java's ConfigDef (values trimmed) and raises ConfigError with ConfigException's
  text: "Invalid value V for configuration K: <reason>"; unknown names "Unknown topic config name: K".
- Only LIST configs can be APPENDed or SUBTRACTed (Kafka's isSplittable).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:       # an annotation only: kafka-topics' --help reads the names without the controller's context
    from .context import QuorumConfig

LONG_MAX = 9223372036854775807
CONFIG_TYPES = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7, "CLASS": 8,
                "PASSWORD": 9}
_INT_RANGE = (-2**31, 2**31 - 1)
_LONG_RANGE = (-2**63, 2**63 - 1)


class ConfigError(ValueError):
    """A config value or name is invalid (Kafka's ConfigException / InvalidConfigurationException)."""


@dataclass(frozen=True)
class ConfigDef:
    """One topic config: name, type, default text and validator bounds or choices."""

    name: str
    type: str
    default: str
    at_least: float | None = None
    at_most: float | None = None
    choices: tuple[str, ...] = ()


_M = str(LONG_MAX)
TOPIC_CONFIGS = {d.name: d for d in (
    ConfigDef("cleanup.policy", "LIST", "delete", choices=("compact", "delete")),
    ConfigDef("compression.gzip.level", "INT", "-1"),
    ConfigDef("compression.lz4.level", "INT", "9", 1, 17),
    ConfigDef("compression.type", "STRING", "producer",
              choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    ConfigDef("compression.zstd.level", "INT", "3", -131072, 22),
    ConfigDef("delete.retention.ms", "LONG", "86400000", 0),
    ConfigDef("file.delete.delay.ms", "LONG", "60000", 0),
    ConfigDef("flush.messages", "LONG", _M, 1),
    ConfigDef("flush.ms", "LONG", _M, 0),
    ConfigDef("follower.replication.throttled.replicas", "LIST", ""),
    ConfigDef("index.interval.bytes", "INT", "4096", 0),
    ConfigDef("leader.replication.throttled.replicas", "LIST", ""),
    ConfigDef("local.retention.bytes", "LONG", "-2", -2),
    ConfigDef("local.retention.ms", "LONG", "-2", -2),
    ConfigDef("max.compaction.lag.ms", "LONG", _M, 1),
    ConfigDef("max.message.bytes", "INT", "1048588", 0),
    ConfigDef("message.downconversion.enable", "BOOLEAN", "true"),
    ConfigDef("message.format.version", "STRING", "3.0-IV1"),
    ConfigDef("message.timestamp.after.max.ms", "LONG", _M, 0),
    ConfigDef("message.timestamp.before.max.ms", "LONG", _M, 0),
    ConfigDef("message.timestamp.difference.max.ms", "LONG", _M, 0),
    ConfigDef("message.timestamp.type", "STRING", "CreateTime", choices=("CreateTime", "LogAppendTime")),
    ConfigDef("min.cleanable.dirty.ratio", "DOUBLE", "0.5", 0, 1),
    ConfigDef("min.compaction.lag.ms", "LONG", "0", 0),
    ConfigDef("min.insync.replicas", "INT", "1", 1),
    ConfigDef("preallocate", "BOOLEAN", "false"),
    ConfigDef("remote.log.copy.disable", "BOOLEAN", "false"),
    ConfigDef("remote.log.delete.on.disable", "BOOLEAN", "false"),
    ConfigDef("remote.storage.enable", "BOOLEAN", "false"),
    ConfigDef("retention.bytes", "LONG", "-1"),
    ConfigDef("retention.ms", "LONG", "604800000", -1),
    ConfigDef("segment.bytes", "INT", "1073741824", 14),
    ConfigDef("segment.index.bytes", "INT", "10485760", 4),
    ConfigDef("segment.jitter.ms", "LONG", "0", 0),
    ConfigDef("segment.ms", "LONG", "604800000", 1),
    ConfigDef("unclean.leader.election.enable", "BOOLEAN", "false"),
)}


def topic_defaults(config: QuorumConfig) -> dict[str, str]:
    """Return every topic config's default value, with the controller's cluster-wide settings."""
    defaults = {name: d.default for name, d in TOPIC_CONFIGS.items()}
    defaults["min.insync.replicas"] = str(config.min_insync_replicas)
    defaults["unclean.leader.election.enable"] = "true" if config.unclean_leader_election else "false"
    return defaults


def is_list(name: str) -> bool:
    """Tell whether a topic config is a LIST (so APPEND and SUBTRACT apply)."""
    d = TOPIC_CONFIGS.get(name)
    return d is not None and d.type == "LIST"


def _invalid(d: ConfigDef, value: str, reason: str) -> ConfigError:
    return ConfigError(f"Invalid value {value} for configuration {d.name}: {reason}")


def _number(d: ConfigDef, value: str):
    text = value.strip()
    try:
        number = float(text) if d.type == "DOUBLE" else int(text, 10)
    except ValueError:
        raise _invalid(d, value, f"Not a number of type {d.type}") from None
    lo, hi = _INT_RANGE if d.type == "INT" else _LONG_RANGE
    if d.type != "DOUBLE" and not lo <= number <= hi:
        raise _invalid(d, value, f"Not a number of type {d.type}")
    return number


def _check_value(d: ConfigDef, value: str) -> None:
    if d.type in ("INT", "LONG", "DOUBLE"):
        number = _number(d, value)
        if d.at_least is not None and number < d.at_least:
            raise _invalid(d, value, f"Value must be at least {_java_number(d.at_least)}")
        if d.at_most is not None and number > d.at_most:
            raise _invalid(d, value, f"Value must be no more than {_java_number(d.at_most)}")
    elif d.type == "BOOLEAN":
        if value.strip().lower() not in ("true", "false"):
            raise _invalid(d, value, "Expected value to be either true or false")
    elif d.choices:
        parts = [p.strip() for p in value.split(",")] if d.type == "LIST" else [value.strip()]
        for part in parts:
            if part not in d.choices:
                raise _invalid(d, part, f"String must be one of: {', '.join(d.choices)}")


def _java_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def validate_topic_configs(configs: dict[str, str | None]) -> None:
    """Raise ConfigError for an unknown name, a null value or a value Kafka would refuse."""
    nulls = [name for name, value in configs.items() if value is None]
    if nulls:
        raise ConfigError("Null value not supported for topic configs: " + ",".join(nulls))
    for name, value in configs.items():
        d = TOPIC_CONFIGS.get(name)
        if d is None:
            raise ConfigError(f"Unknown topic config name: {name}")
        _check_value(d, value)
