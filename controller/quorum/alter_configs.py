"""Topic and broker config changes: IncrementalAlterConfigs and AlterConfigs (legacy), plus topic creation configs.

Rules:
- Resources: TOPIC (2) and BROKER (4, "" = cluster default, else a broker id); an unknown type answers
  UNSUPPORTED_VERSION "Unknown resource type N.", a repeated resource INVALID_REQUEST "Duplicate resource."
  (ControllerApis). Other types answer INVALID_REQUEST.
- A change produces one ConfigRecord per key whose value changes (always for BROKER, KAFKA-14136);
  AlterConfigs also deletes (value null) every key the request leaves out.
- Validation as ConfigurationControlManager.validateAlterConfig: the resulting topic configs are checked
  (unknown names, types, ranges: INVALID_CONFIG), then the resource must exist (topic: UNKNOWN_TOPIC_OR_PARTITION,
  broker: BROKER_ID_NOT_REGISTERED), except for topics being created.
- validate_only answers as if applied but returns no records. DescribeConfigs lives in describe_configs.
- While eligible.leader.replicas.version >= 1 (Kafka 4.x's ELR): a broker-level min.insync.replicas cannot be
  set or removed, nor the cluster-level one removed (INVALID_CONFIG, Kafka's texts), and every min.insync.replicas
  change is followed by a ClearElrRecord (the topic's name, or empty: every topic).
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .api_error import OK, ApiError
from .context import ControllerContext, ControllerResult
from .partitions import elr_enabled
from .topic_configs_schema import TOPIC_CONFIGS, ConfigError, is_list, validate_topic_configs
from .topics_names import TopicNameError, validate_topic_name

TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
KNOWN_TYPES = {0, 2, 4, 8, 16, 32}
TOPIC_CONFIG_SOURCE, DEFAULT_CONFIG = 1, 5
_CONFIG = codec.message_class("ConfigRecord")
_CLEAR_ELR = codec.message_class("ClearElrRecord")
MIN_ISR = "min.insync.replicas"


def config_record(kind: int, name: str, key: str, value: str | None) -> ApiMessageAndVersion:
    """Return one ConfigRecord."""
    return ApiMessageAndVersion(_CONFIG(resource_type=kind, resource_name=name, name=key, value=value), 0)


def _current(ctx: ControllerContext, kind: int, name: str) -> dict:
    return ctx.image.configs.resources.get((kind, name), {})


def _parts(value: str | None, key: str) -> list[str]:
    if value is None:
        d = TOPIC_CONFIGS.get(key)
        value = d.default if d else None
    return [] if value is None else [p for p in value.split(",") if p]


def _apply_op(op: int, key: str, current: str | None, value: str | None) -> str | None:
    if op == SET:
        return value
    if op == DELETE:
        return None
    if op in (APPEND, SUBTRACT):
        if not is_list(key):
            verb = "APPEND" if op == APPEND else "SUBTRACT"
            raise ApiError(E.INVALID_CONFIG, f"Can't {verb} to key {key} because its type is not LIST.")
        parts = _parts(current, key)
        for item in (value or "").split(","):
            if op == APPEND and item not in parts:
                parts.append(item)
            elif op == SUBTRACT and item in parts:
                parts.remove(item)
        return ",".join(parts)
    raise ApiError(E.INVALID_REQUEST, f"Unknown config operation {op}.")


def _validate(ctx: ControllerContext, kind: int, name: str, result: dict, creating: bool) -> None:
    if kind == TOPIC:
        if not name:
            raise ApiError(E.INVALID_REQUEST, "Default topic resources are not allowed.")
        try:
            validate_topic_name(name)
            validate_topic_configs(result)
        except TopicNameError as e:
            raise ApiError(E.INVALID_TOPIC_EXCEPTION, str(e)) from None
        except ConfigError as e:
            raise ApiError(E.INVALID_CONFIG, str(e)) from None
        if not creating and name not in ctx.image.topics.by_name:
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    elif kind == BROKER:
        _check_broker(ctx, name)
    else:
        raise ApiError(E.INVALID_REQUEST, f"Unsupported resource type {kind}.")


def _check_broker(ctx: ControllerContext, name: str) -> None:
    if not name:
        return
    try:
        broker_id = int(name)
    except ValueError:
        raise ApiError(E.INVALID_REQUEST, f"Invalid broker name {name}") from None
    controllers = {c.node_id for c in ctx.controllers}
    if broker_id not in ctx.image.cluster.brokers and broker_id not in controllers:
        raise ApiError(E.BROKER_ID_NOT_REGISTERED, f"No broker with id {broker_id} found.")


def incremental_changes(ctx: ControllerContext, kind: int, name: str, ops: dict, creating: bool = False) -> list:
    """Return the ConfigRecords of incremental ops {key: (op, value)} on one resource, or raise ApiError."""
    current = _current(ctx, kind, name)
    result, records = dict(current), []
    for key, (op, value) in ops.items():
        new = _apply_op(op, key, current.get(key), value)
        if new != current.get(key) or kind == BROKER:
            records.append(config_record(kind, name, key, new))
        if new is None:
            result.pop(key, None)
        else:
            result[key] = new
    _validate(ctx, kind, name, result, creating)
    return records


def legacy_changes(ctx: ControllerContext, kind: int, name: str, configs: dict) -> list:
    """Return the ConfigRecords replacing a resource's whole config (AlterConfigs), or raise ApiError."""
    current = _current(ctx, kind, name)
    records = [config_record(kind, name, key, value) for key, value in configs.items()
               if value != current.get(key) or kind == BROKER]
    records += [config_record(kind, name, key, None) for key in current if key not in configs]
    result = {k: v for k, v in configs.items() if v is not None}  # a null value deletes the key
    _validate(ctx, kind, name, result, False)
    return records


def _collect(resources, ops_of) -> tuple[list, list]:
    """Split request resources into (errors, [(kind, name, changes)]) the way ControllerApis does."""
    errors, changes, seen, duplicates = [], {}, set(), set()
    for resource in resources:
        key = (resource.resource_type, resource.resource_name)
        if resource.resource_type not in KNOWN_TYPES or resource.resource_type == 0:
            errors.append((key, ApiError(35, f"Unknown resource type {resource.resource_type}.")))
        elif key in duplicates:
            continue
        elif key in seen:
            duplicates.add(key)
            changes.pop(key, None)
            errors.append((key, ApiError(E.INVALID_REQUEST, "Duplicate resource.")))
        else:
            seen.add(key)
            changes[key] = ops_of(resource)
    return errors, list(changes.items())


def _alter(ctx: ControllerContext, request, ops_of, changes_of, response_name: str) -> ControllerResult:
    errors, changes = _collect(request.resources, ops_of)
    records, results = [], list(errors)
    for (kind, name), ops in changes:
        try:
            changed = changes_of(ctx, kind, name, ops)
            _elr_guard(ctx, changed)
            records += changed
            results.append(((kind, name), OK))
        except ApiError as e:
            results.append(((kind, name), e))
    records += clear_elr_records(ctx, records)
    cls = codec.message_class(response_name)
    responses = [cls.AlterConfigsResourceResponse(error_code=e.code, error_message=e.message, resource_type=kind,
                                                  resource_name=name) for (kind, name), e in results]
    return ControllerResult([] if request.validate_only else records, cls(throttle_time_ms=0, responses=responses))


def _elr_guard(ctx: ControllerContext, records: list) -> None:
    """Refuse the min.insync.replicas changes ELR forbids (ConfigurationControlManager's two checks)."""
    if not elr_enabled(ctx.image):
        return
    for record in records:
        m = record.message
        if m.name == MIN_ISR and m.resource_type == BROKER and m.resource_name:
            raise ApiError(E.INVALID_CONFIG, f"Broker-level {MIN_ISR} cannot be altered while ELR is enabled.")
        if m.name == MIN_ISR and m.resource_type == BROKER and m.value is None:
            raise ApiError(E.INVALID_CONFIG, f"Cluster-level {MIN_ISR} cannot be removed while ELR is enabled.")


def clear_elr_records(ctx: ControllerContext, records: list) -> list:
    """Return a ClearElrRecord per min.insync.replicas ConfigRecord while ELR is on (createClearElrRecordsAsNeeded)."""
    if not elr_enabled(ctx.image):
        return []
    return [ApiMessageAndVersion(_CLEAR_ELR(topic_name=r.message.resource_name if r.message.resource_type == TOPIC
                                            else ""), 0)
            for r in records if r.message.api_key == 4 and r.message.name == MIN_ISR]


def incremental_alter_configs(ctx: ControllerContext, request) -> ControllerResult:
    """Handle IncrementalAlterConfigs (v0-v1): SET, DELETE, APPEND, SUBTRACT on TOPIC and BROKER resources."""
    def ops_of(resource):
        """Return {key: (operation, value)} of one resource."""
        return {c.name: (c.config_operation, c.value) for c in resource.configs}
    return _alter(ctx, request, ops_of, incremental_changes, "IncrementalAlterConfigsResponse")


def alter_configs(ctx: ControllerContext, request) -> ControllerResult:
    """Handle AlterConfigs (v0-v2): replace the whole config of each resource."""
    def ops_of(resource):
        """Return {key: value} of one resource."""
        return {c.name: c.value for c in resource.configs}
    return _alter(ctx, request, ops_of, legacy_changes, "AlterConfigsResponse")
