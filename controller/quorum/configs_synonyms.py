"""Config layers and synonyms as Kafka 3.9's ConfigHelper walks them, and Java's rendering of config values.

Rules:
- A node's broker configs come in four layers, most specific first: its dynamic broker config (source 2), the
  dynamic cluster default (3), its static server properties (4), the ConfigDef defaults (5).
- The synonyms of a name: for each layer in turn, each synonym name found there (in the synonyms' order); then
  every entry before the first one under the name itself is dropped (ConfigHelper.configSynonyms). So a name
  found nowhere under itself has no synonyms at all, even when its fallbacks are set (retention.ms and
  log.retention.hours).
- A topic config stands on its first broker synonym (ServerTopicConfigSynonyms); its effective value is the first
  synonym set in a layer, converted to milliseconds where the synonym counts hours or minutes.
- Values are rendered as ConfigDef.convertToString renders the parsed value (lists joined by ",", Java doubles).
"""
from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 2, 3, 4, 5
HOURS, MINUTES = 3_600_000, 60_000


class Layers(NamedTuple):
    """A node's broker config layers ({name: text}), most specific first."""

    dynamic_broker: dict
    dynamic_default: dict
    static: dict
    defaults: dict


class Synonym(NamedTuple):
    """One DescribeConfigsSynonym: a name, its value text (None when sensitive) and its source."""

    name: str
    value: str | None
    source: int


def _log(*names: str) -> list[tuple[str, int]]:
    return [("log." + n, HOURS if n.endswith("hours") else MINUTES if n.endswith("minutes") else 1) for n in names]


# topic config -> [(broker config, factor to the topic's unit)], first = highest precedence (ServerTopicConfigSynonyms)
TOPIC_SYNONYMS: dict[str, list[tuple[str, int]]] = {
    "segment.bytes": _log("segment.bytes"),
    "segment.ms": _log("roll.ms", "roll.hours"),
    "segment.jitter.ms": _log("roll.jitter.ms", "roll.jitter.hours"),
    "segment.index.bytes": _log("index.size.max.bytes"),
    "flush.messages": _log("flush.interval.messages"),
    "flush.ms": _log("flush.interval.ms", "flush.scheduler.interval.ms"),
    "retention.bytes": _log("retention.bytes"),
    "retention.ms": _log("retention.ms", "retention.minutes", "retention.hours"),
    "max.message.bytes": [("message.max.bytes", 1)],
    "index.interval.bytes": _log("index.interval.bytes"),
    "delete.retention.ms": _log("cleaner.delete.retention.ms"),
    "min.compaction.lag.ms": _log("cleaner.min.compaction.lag.ms"),
    "max.compaction.lag.ms": _log("cleaner.max.compaction.lag.ms"),
    "file.delete.delay.ms": _log("segment.delete.delay.ms"),
    "min.cleanable.dirty.ratio": _log("cleaner.min.cleanable.ratio"),
    "cleanup.policy": _log("cleanup.policy"),
    "unclean.leader.election.enable": [("unclean.leader.election.enable", 1)],
    "min.insync.replicas": [("min.insync.replicas", 1)],
    "compression.type": [("compression.type", 1)],
    "compression.gzip.level": [("compression.gzip.level", 1)],
    "compression.lz4.level": [("compression.lz4.level", 1)],
    "compression.zstd.level": [("compression.zstd.level", 1)],
    "preallocate": _log("preallocate"),
    "message.format.version": _log("message.format.version"),
    "message.timestamp.type": _log("message.timestamp.type"),
    "message.timestamp.difference.max.ms": _log("message.timestamp.difference.max.ms"),
    "message.timestamp.before.max.ms": _log("message.timestamp.before.max.ms"),
    "message.timestamp.after.max.ms": _log("message.timestamp.after.max.ms"),
    "message.downconversion.enable": _log("message.downconversion.enable"),
    "local.retention.ms": _log("local.retention.ms"),
    "local.retention.bytes": _log("local.retention.bytes"),
}


def config_synonyms(layers: Layers, name: str, names: list[str], sensitive: bool) -> list[Synonym]:
    """Return the synonyms of `name` (whose synonym names are `names`) from the layers, Kafka's order and cut."""
    found = [Synonym(n, None if sensitive else layer[n], source)
             for layer, source in zip(layers, (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
                                               STATIC_BROKER_CONFIG, DEFAULT_CONFIG))
             for n in names if n in layer]
    first = next((i for i, s in enumerate(found) if s.name == name), len(found))
    return found[first:]


def effective(layers: Layers, name: str, with_defaults: bool = True) -> str | None:
    """Return the text a name takes from the most specific layer that sets it (None when none does)."""
    for layer in layers if with_defaults else layers[:3]:
        if name in layer:
            return layer[name]
    return None


def topic_override(layers: Layers, topic_key: str, kind: str) -> str | None:
    """Return a topic config's value set through its broker synonyms above the defaults, or None."""
    for broker_key, factor in TOPIC_SYNONYMS.get(topic_key, ()):
        text = effective(layers, broker_key, with_defaults=False)
        if text is None:
            continue
        if factor == 1:
            return java_value(kind, text)
        millis = int(text.strip()) * factor
        return str(-1 if topic_key == "retention.ms" and millis < 0 else millis)
    return None


def java_value(kind: str | None, text: str | None) -> str | None:
    """Return a config text as Kafka renders its parsed value (ConfigDef.parseType then convertToString)."""
    if text is None or kind is None:
        return text
    trimmed = text.strip()
    if kind in ("INT", "LONG", "SHORT"):
        return str(int(trimmed))
    if kind == "DOUBLE":
        return java_double(float(trimmed))
    if kind == "BOOLEAN":
        return trimmed.lower()
    if kind == "LIST":
        return ",".join(p.strip() for p in trimmed.split(",")) if trimmed else ""
    return text if kind == "PASSWORD" else trimmed


def java_double(x: float) -> str:
    """Return Java's Double.toString of x (plain between 1e-3 and 1e7, else d.dddE<n>)."""
    if x != x or x in (float("inf"), float("-inf")):
        return "NaN" if x != x else ("Infinity" if x > 0 else "-Infinity")
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = repr(x)
        return text if "e" not in text else format(Decimal(text), "f")
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    mantissa = "".join(map(str, digits)).rstrip("0") or "0"
    return ("-" if sign else "") + mantissa[0] + "." + (mantissa[1:] or "0") + "E" + str(len(digits) - 1 + exponent)
