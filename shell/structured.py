"""Structured output (--output json|yaml): the nodes a command matched as data built from the typed records.

Rules:
- A node's data comes from the image object behind its path (brokers, controllers, topics, partitions, ACLs,
  SCRAM credentials, delegation tokens, producer ids, provenance, features); any other directory is an object
  of its children's data and any other file its text.
- Names are snake_case (Kafka's field names); ids are Kafka's base64url Uuids; enums are Kafka's names.
- A broker's start_time_ms is kraftsman's (controller/image/start_time.py), -1 when the metadata has none.
- Secrets never appear: SCRAM salts and keys, delegation-token HMACs.
- cli/schemas/metadata-shell.schema.json describes every shape below; keep them together.
"""
from __future__ import annotations

from kraftsman.controller.image.acls import OPERATIONS, PATTERN_TYPES, PERMISSION_TYPES, RESOURCE_TYPES
from kraftsman.controller.image.partitions import LEADER_RECOVERY_STATES
from kraftsman.controller.image.render import SECURITY_PROTOCOLS, iso_zoned_utc
from kraftsman.controller.image.scram import MECHANISMS
from kraftsman.storage.protocol.uuids import Uuid, uuid_str

_UNTYPED = object()


def node_data(image, path: tuple, node):
    """Return the JSON-ready data of `node`, found at `path` (components) in `image`'s tree."""
    typed = _typed(image, path)
    if typed is not _UNTYPED:
        return typed
    if not node.is_directory:
        return node.text
    out = {}
    for name in sorted(node.child_names()):
        child = node.child(name)
        if child is not None:
            out[name] = node_data(image, path + (name,), child)
    return out


def _typed(image, path: tuple):
    if path[:1] != ("image",) or len(path) < 2:
        return _UNTYPED
    handler = _HANDLERS.get(path[1])
    return _UNTYPED if handler is None else handler(image, path[2:])


def _cluster(image, rest: tuple):
    if len(rest) != 2:
        return _UNTYPED
    table = image.cluster.brokers if rest[0] == "brokers" else image.cluster.controllers
    entry = _by_name(table, rest[1], str)
    if entry is None:
        return _UNTYPED
    return broker(entry) if rest[0] == "brokers" else controller(entry)


def _topics(image, rest: tuple):
    if len(rest) < 2:
        return _UNTYPED
    topics = image.topics
    topic = topics.by_name.get(rest[1]) if rest[0] == "byName" else _by_name(topics.by_id, rest[1], uuid_str)
    if topic is None:
        return _UNTYPED
    if len(rest) == 2:
        return topic_data(topic)
    if len(rest) == 3 and rest[2].isdigit():
        registration = topic.view_partition(int(rest[2]))
        return _UNTYPED if registration is None else partition(registration, int(rest[2]))
    return _UNTYPED


def _acls(image, rest: tuple):
    if len(rest) != 1:
        return _UNTYPED
    entry = _by_name(image.acls.entries, rest[0], uuid_str)
    return _UNTYPED if entry is None else acl(entry[0])


def _scram(image, rest: tuple):
    if len(rest) != 2:
        return _UNTYPED
    mechanism = next((m for m, name in MECHANISMS.items() if name == rest[0]), None)
    record = image.scram.users(mechanism).get(rest[1]) if mechanism is not None else None
    return _UNTYPED if record is None else scram(record)


def _tokens(image, rest: tuple):
    if len(rest) != 1:
        return _UNTYPED
    entry = image.delegation_tokens.entries.get(rest[0])
    return _UNTYPED if entry is None else token(entry[0])


def _producer_ids(image, rest: tuple):
    value = image.producer_ids.next_producer_id
    if not rest:
        return {"nextProducerId": value}
    return value if rest == ("nextProducerId",) else _UNTYPED


def _provenance(image, rest: tuple):
    return provenance(image.provenance) if not rest else _UNTYPED


def _features(image, rest: tuple):
    if len(rest) == 1 and rest[0].startswith("finalized_"):
        level = image.features.finalized.get(rest[0][len("finalized_"):])
        return _UNTYPED if level is None else level
    return _UNTYPED


def _by_name(table: dict, name: str, key_name):
    """Return the value whose key renders as `name` (tables keyed by ints or Uuid bytes), or None."""
    try:
        key = int(name) if key_name is str else bytes(Uuid.from_string(name))
    except ValueError:
        return None
    value = table.get(key)
    return value if value is not None and key_name(key) == name else None


def _listeners(end_points) -> list:
    return [{"name": e.name, "security_protocol": SECURITY_PROTOCOLS.get(e.security_protocol, "UNKNOWN"),
             "host": e.host, "port": e.port} for e in sorted(end_points, key=lambda e: e.name)]


def _supported(features) -> dict:
    return {f.name: {"min_version": f.min_supported_version, "max_version": f.max_supported_version}
            for f in sorted(features, key=lambda f: f.name)}


def broker(registration) -> dict:
    """Return a BrokerRegistration as data."""
    r = registration.record
    directories = sorted((Uuid(d) for d in (r.log_dirs or ())), key=Uuid.sort_key)
    return {"id": r.broker_id, "epoch": r.broker_epoch, "incarnation_id": uuid_str(r.incarnation_id),
            "listeners": _listeners(r.end_points), "features": _supported(r.features), "rack": r.rack,
            "fenced": bool(r.fenced), "in_controlled_shutdown": bool(r.in_controlled_shutdown),
            "is_migrating_zk_broker": bool(r.is_migrating_zk_broker),
            "directories": [uuid_str(d) for d in directories], "start_time_ms": registration.start_time_ms}


def controller(registration) -> dict:
    """Return a ControllerRegistration as data."""
    r = registration.record
    return {"id": r.controller_id, "incarnation_id": uuid_str(r.incarnation_id),
            "zk_migration_ready": bool(r.zk_migration_ready), "listeners": _listeners(r.end_points),
            "features": _supported(r.features)}


def partition(p, partition_id: int) -> dict:
    """Return a PartitionRegistration as data."""
    return {"partition_id": partition_id, "replicas": list(p.replicas), "isr": list(p.isr),
            "removing_replicas": list(p.removing_replicas), "adding_replicas": list(p.adding_replicas),
            "elr": list(p.elr or ()), "last_known_elr": list(p.last_known_elr or ()), "leader": p.leader,
            "leader_recovery_state": LEADER_RECOVERY_STATES.get(p.leader_recovery_state,
                                                                str(p.leader_recovery_state)),
            "leader_epoch": p.leader_epoch, "partition_epoch": p.partition_epoch,
            "directories": [uuid_str(d) for d in p.directories]}


def topic_data(topic) -> dict:
    """Return a topic with its partitions (by id, as strings) as data."""
    partitions = {}
    for partition_id in sorted(topic.partitions):
        partitions[str(partition_id)] = partition(topic.view_partition(partition_id), partition_id)
    return {"name": topic.name, "topic_id": uuid_str(topic.topic_id), "partitions": partitions}


def _enum(table: list, code: int) -> str:
    return table[code] if 0 <= code < len(table) else "UNKNOWN"


def acl(record) -> dict:
    """Return an AccessControlEntryRecord as data."""
    return {"id": uuid_str(record.id), "resource_type": _enum(RESOURCE_TYPES, record.resource_type),
            "resource_name": record.resource_name, "pattern_type": _enum(PATTERN_TYPES, record.pattern_type),
            "principal": record.principal, "host": record.host,
            "operation": _enum(OPERATIONS, record.operation),
            "permission_type": _enum(PERMISSION_TYPES, record.permission_type)}


def scram(record) -> dict:
    """Return a SCRAM credential without its salt and keys."""
    return {"user": record.name, "mechanism": MECHANISMS.get(record.mechanism, "UNKNOWN"),
            "iterations": record.iterations}


def token(record) -> dict:
    """Return a delegation token without its HMAC."""
    return {"token_id": record.token_id, "owner": record.owner, "requester": record.requester,
            "renewers": list(record.renewers), "issue_timestamp": record.issue_timestamp,
            "max_timestamp": record.max_timestamp, "expiration_timestamp": record.expiration_timestamp}


def provenance(p) -> dict:
    """Return an image's provenance as data."""
    return {"offset": p.offset, "epoch": p.epoch, "time_ms": p.time_ms, "time": iso_zoned_utc(p.time_ms)}


_HANDLERS = {"cluster": _cluster, "topics": _topics, "acls": _acls, "scram": _scram, "delegationToken": _tokens,
             "producerIds": _producer_ids, "provenance": _provenance, "features": _features}
