"""DescribeConfigs (v0-v4) as a Kafka 3.9 controller answers it: ConfigHelper over the node's own KafkaConfig.

Rules:
- TOPIC: every topic config; a TOPIC_CONFIG (1) synonym when the topic sets it, then the broker synonyms of its
  first broker synonym (configs_synonyms); topic configs without broker synonyms list only the topic entry.
  The value is the topic's, else the broker synonyms' effective value, else the topic default. Never read-only.
- BROKER "" lists the dynamic cluster defaults, with synonyms of that layer only. BROKER "<this node's id>" lists
  every defined broker config plus any other key a layer sets. Another id: INVALID_REQUEST "Unexpected broker id,
  expected N or empty string, but received X"; a name that is no integer: "Broker id must be an integer, ...".
- The source is the first synonym's, else DEFAULT_CONFIG (5). Sensitive keys (PASSWORD or unknown type) show null
  values; read_only is "not a dynamic broker config". Documentation is not sent (null).
- Dynamic layers keep what DynamicBrokerConfig.fromPersistentProps keeps: no known read-only key, no SSL store key
  without a listener prefix, no value that fails to parse, and at the cluster default no per-broker key.
- configuration_keys null or empty means every key. A topic's entries come in the order of Kafka's answer
  (ConfigHelper.allConfigs builds a Scala mutable.HashMap: java_hash_order.scala_hash_order), which decides the
  order of entries sharing a slot in a client's HashMap (kafka-topics' `Configs:`); broker entries are sorted by
  name.
"""
from __future__ import annotations

from typing import NamedTuple

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E

from .api_error import ApiError
from .broker_configs_schema import (
    BROKER_CONFIGS,
    CLUSTER_LEVEL_LISTENER_CONFIGS,
    PER_BROKER,
    SECURITY_CONFIGS,
    STATIC_DEFAULTS,
    broker_synonyms,
    config_type,
    is_sensitive,
    listener_base_name,
)
from .configs_synonyms import (
    DEFAULT_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    TOPIC_SYNONYMS,
    Layers,
    Synonym,
    config_synonyms,
    effective,
    java_value,
    topic_override,
)
from .context import ControllerContext, ControllerResult
from .java_hash_order import scala_hash_order
from .topic_configs_schema import CONFIG_TYPES, TOPIC_CONFIGS, topic_defaults
from .topics_names import TopicNameError, validate_topic_name

TOPIC, BROKER = 2, 4
TOPIC_CONFIG_SOURCE = 1
_RANGES = {"INT": 31, "LONG": 63, "SHORT": 15}


class Entry(NamedTuple):
    """One DescribeConfigsResourceResult before encoding."""

    name: str
    value: str | None
    source: int
    sensitive: bool
    read_only: bool
    type: str | None
    synonyms: list


def _parses(kind: str | None, text: str) -> bool:
    trimmed = text.strip()
    try:
        if kind in _RANGES:
            return -2 ** _RANGES[kind] <= int(trimmed, 10) < 2 ** _RANGES[kind]
        if kind == "DOUBLE":
            float(trimmed)
        return kind != "BOOLEAN" or trimmed.lower() in ("true", "false")
    except ValueError:
        return False


def _kept(key: str, value: str, per_broker: bool) -> bool:
    """Tell whether Kafka keeps a stored dynamic broker config (DynamicBrokerConfig.fromPersistentProps)."""
    d, base = BROKER_CONFIGS.get(key), listener_base_name(key)
    if (d is not None and not d.dynamic) or key in SECURITY_CONFIGS:
        return False
    if not per_broker and ((d is not None and d.mode == PER_BROKER)
                           or (base is not None and base not in CLUSTER_LEVEL_LISTENER_CONFIGS)):
        return False
    target = BROKER_CONFIGS.get(base or key)
    return target is None or not target.dynamic or _parses(target.type, value)


def _dynamic(ctx: ControllerContext, name: str, per_broker: bool) -> dict:
    stored = ctx.image.configs.resources.get((BROKER, name), {})
    return {k: v for k, v in stored.items() if v is not None and _kept(k, v, per_broker)}


def layers(ctx: ControllerContext) -> Layers:
    """Return this node's broker config layers: dynamic (own id, cluster default), static properties, defaults."""
    static = dict(ctx.config.server_properties)
    for key, other in (("node.id", "broker.id"), ("broker.id", "node.id")):  # KafkaConfig.populateSynonyms
        if key in static and other not in static:
            static[other] = static[key]
    return Layers(_dynamic(ctx, str(ctx.node_id), True), _dynamic(ctx, "", False), static, STATIC_DEFAULTS)


def topic_entries(ctx: ControllerContext, layers_: Layers, name: str) -> list[Entry]:
    """Return a topic's configs with their synonyms (ConfigHelper.createTopicConfigEntry)."""
    overrides = ctx.image.configs.resources.get((TOPIC, name), {})
    defaults = topic_defaults(ctx.config)
    entries = []
    for key in scala_hash_order(TOPIC_CONFIGS):
        kind = TOPIC_CONFIGS[key].type
        value = java_value(kind, overrides[key]) if key in overrides else topic_override(layers_, key, kind)
        value = defaults[key] if value is None else value
        synonyms = _topic_synonyms(layers_, key)
        if key in overrides:
            synonyms.insert(0, Synonym(key, value, TOPIC_CONFIG_SOURCE))
        entries.append(Entry(key, value, synonyms[0].source if synonyms else DEFAULT_CONFIG, False, False, kind,
                             synonyms))
    return entries


def _topic_synonyms(layers_: Layers, key: str) -> list[Synonym]:
    if key not in TOPIC_SYNONYMS:
        return []
    first = TOPIC_SYNONYMS[key][0][0]
    return config_synonyms(layers_, first, broker_synonyms(first), False)


def broker_entries(ctx: ControllerContext, layers_: Layers, name: str) -> list[Entry]:
    """Return a BROKER resource's configs (ConfigHelper.createBrokerConfigEntry), or raise ApiError."""
    if not name:
        defaults = layers_.dynamic_default
        return [_broker_entry(layers_, key, defaults[key], False) for key in sorted(defaults)]
    try:
        broker_id = int(name)
    except ValueError:
        raise ApiError(E.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}") from None
    if broker_id != ctx.node_id:
        raise ApiError(E.INVALID_REQUEST,
                       f"Unexpected broker id, expected {ctx.node_id} or empty string, but received {name}")
    keys = set(BROKER_CONFIGS).union(*layers_[:3])
    return [_broker_entry(layers_, key, effective(layers_, key), True) for key in sorted(keys)]


def _broker_entry(layers_: Layers, key: str, text: str | None, per_broker: bool) -> Entry:
    kind = config_type(key)
    sensitive = is_sensitive(kind)
    synonyms = config_synonyms(layers_, key, broker_synonyms(key), sensitive)
    if not per_broker:
        synonyms = [s for s in synonyms if s.source == DYNAMIC_DEFAULT_BROKER_CONFIG]
    parsed = per_broker and key in BROKER_CONFIGS  # the node's KafkaConfig values; the default level shows text
    value = None if sensitive else java_value(kind, text) if parsed else text
    d = BROKER_CONFIGS.get(key)
    return Entry(key, value, synonyms[0].source if synonyms else DEFAULT_CONFIG, sensitive,
                 d is None or not d.dynamic, kind, synonyms)


def _entries(ctx: ControllerContext, kind: int, name: str) -> list[Entry]:
    if kind == TOPIC:
        validate_topic_name(name)
        if name not in ctx.image.topics.by_name:
            error = ApiError(E.UNKNOWN_TOPIC_OR_PARTITION)
            error.message = ""  # ConfigHelper sets the code alone: the message keeps its default, ""
            raise error
        return topic_entries(ctx, layers(ctx), name)
    if kind == BROKER:
        return broker_entries(ctx, layers(ctx), name)
    raise ApiError(E.INVALID_REQUEST, f"Unsupported resource type {kind}.")


def _describe_one(ctx: ControllerContext, resource, cls, include_synonyms: bool):
    kind, name = resource.resource_type, resource.resource_name
    result = cls.DescribeConfigsResult(error_code=0, error_message=None, resource_type=kind, resource_name=name)
    try:
        entries = _entries(ctx, kind, name)
    except TopicNameError as e:
        result.error_code, result.error_message = E.INVALID_TOPIC_EXCEPTION, str(e)
        return result
    except ApiError as e:
        result.error_code, result.error_message = e.code, e.message
        return result
    keys = resource.configuration_keys
    result.configs = [_encode(cls, e, include_synonyms, ctx.api_version) for e in entries if not keys or e.name in keys]
    return result


def _encode(cls, entry: Entry, include_synonyms: bool, version: int):
    message = cls.DescribeConfigsResourceResult(
        name=entry.name, value=entry.value, read_only=entry.read_only, config_source=entry.source,
        is_default=version == 0 and entry.source == DEFAULT_CONFIG, is_sensitive=entry.sensitive,
        config_type=CONFIG_TYPES.get(entry.type, 0), documentation=None)
    message.synonyms = [cls.DescribeConfigsSynonym(name=s.name, value=s.value, source=s.source)
                        for s in entry.synonyms] if include_synonyms else []
    return message


def describe_configs(ctx: ControllerContext, request) -> ControllerResult:
    """Handle DescribeConfigs (v0-v4): topic and broker configs with Kafka's synonyms and sources."""
    cls = codec.message_class("DescribeConfigsResponse")
    include_synonyms = bool(getattr(request, "include_synonyms", False)) and ctx.api_version >= 1
    results = [_describe_one(ctx, r, cls, include_synonyms) for r in request.resources]
    return ControllerResult([], cls(throttle_time_ms=0, results=results))
