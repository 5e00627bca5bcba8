"""The typed columns of a `records` row, read straight from the decoded message.

`extractor(name, version)` generates, once per record type and version, a function message -> tuple
in the column order of tables.TYPED. It gives what reading the record's data JSON back would give
(`typed_from_json`, kept as the reference and for records decoded on the slow path), without
rendering and parsing JSON twice: a field the version lacks is None, a tagged field at its default
is None (Kafka's JSON leaves it out), a uuid is its base64url text, an array a list.

Rules:
- Generated from the specs (storage.protocol.schema), never from field lists typed here, except the
  table below naming which JSON field feeds which column for which record type.
- tests/cli/pipeline/test_decode.py checks both ways agree on every record of the real fixtures.
"""
from __future__ import annotations

import functools
import json

from kraftsman.storage.protocol.codegen import not_default
from kraftsman.storage.protocol.schema import json_name, load, snake_name
from kraftsman.storage.protocol.uuids import bounded_memo, uuid_str

from .tables import TYPED

_FENCE = frozenset({"FenceBrokerRecord", "UnfenceBrokerRecord"})
TYPED_RECORDS = frozenset({
    "RegisterBrokerRecord", "UnregisterBrokerRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
    "BrokerRegistrationChangeRecord", "TopicRecord", "PartitionRecord", "PartitionChangeRecord",
    "RemoveTopicRecord", "ConfigRecord"})
NO_TYPED = (None,) * len(TYPED)
_uuid, _ = bounded_memo(uuid_str, 1 << 16)  # topic ids repeat on every partition


def source_fields(record: str) -> list[str | None]:
    """Return, per typed column, the JSON field of `record` that feeds it (None: always null)."""
    fence, config = record in _FENCE, record == "ConfigRecord"
    by_column = {
        "broker_id": "id" if fence else "brokerId", "broker_epoch": "epoch" if fence else "brokerEpoch",
        "topic_id": "topicId", "topic_name": "name" if record == "TopicRecord" else None,
        "partition_id": "partitionId", "leader": "leader", "leader_epoch": "leaderEpoch", "isr": "isr",
        "replicas": "replicas", "adding_replicas": "addingReplicas", "removing_replicas": "removingReplicas",
        "config_resource_type": "resourceType" if config else None,
        "config_resource_name": "resourceName" if config else None, "config_name": "name" if config else None,
    }
    return [by_column[column] for column, _ in TYPED]


def typed_from_json(record: str | None, data: str | None) -> tuple:
    """Return the typed columns of a record from its schema name and data JSON (the reference way)."""
    if data is None or record not in TYPED_RECORDS:
        return NO_TYPED
    d = json.loads(data)
    return tuple(None if f is None else d.get(f) for f in source_fields(record))


@functools.lru_cache(maxsize=None)
def extractor(record: str, version: int):
    """Return fn(message) -> typed columns for `record` at `version` (NO_TYPED for untyped records)."""
    if record not in TYPED_RECORDS:
        return lambda message: NO_TYPED
    spec = load(record)
    flexible = version in spec.flexible_versions
    fields = {json_name(f.name): f for f in spec.fields if version in f.versions}
    parts = [_expression(fields.get(name) if name else None, version, flexible) for name in source_fields(record)]
    source = f"def _typed(o):\n    return ({', '.join(parts)},)\n"
    namespace = {"_uuid": _uuid}
    exec(compile(source, f"<pipeline typed {record} v{version}>", "exec"), namespace)
    return namespace["_typed"]


def _expression(field, version: int, flexible: bool) -> str:
    if field is None:
        return "None"
    x = "o." + snake_name(field.name)
    if field.type == "uuid":
        value = f"_uuid({x})"
    elif field.is_array:
        value = f"(None if {x} is None else list({x}))"
    else:
        value = x
    if field.type == "uuid" and field.nullable_versions and version in field.nullable_versions:
        value = f"(None if {x} is None else {value})"
    if flexible and version in field.tagged_versions:
        return f"({value} if {not_default(field, x)} else None)"
    return value
