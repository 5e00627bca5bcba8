"""The node tree the metadata shell browses: Kafka 3.9's /image/... and /local/... layout, each node's text and
its data (--output json|yaml), in one place.

Rules:
- A node is a directory (child_names, child) or a leaf (text); children are built on demand,
  so a million partitions cost nothing until listed.
- Names and leaf texts follow Kafka 3.9's image/node classes and the records' toString() forms.
- child_names() order is unspecified; the shell sorts.
- data() is a node's JSON-ready value: the typed record behind it where there is one (brokers, controllers,
  topics, partitions, ACLs, SCRAM credentials, delegation tokens, producer ids, provenance, finalized feature
  levels), else an object of its children's data (a directory) or its text (a leaf). It is built when asked.
- Data names are snake_case (Kafka's field names); ids are Kafka's base64url Uuids; enums are Kafka's names. A
  broker's start_time_ms is kraftsman's (start_time.py), -1 when the metadata has none. Secrets never appear:
  SCRAM salts and keys, delegation-token HMACs. cli/schemas/metadata-shell.schema.json describes every shape.
"""
from __future__ import annotations

from kraftsman.storage.protocol.javafmt import java_double
from kraftsman.storage.protocol.uuids import Uuid, uuid_str

from .acls import OPERATIONS, PATTERN_TYPES, PERMISSION_TYPES, RESOURCE_TYPES, standard_acl
from .configs import resource_node_name
from .image import MetadataImage
from .partitions import LEADER_RECOVERY_STATES
from .quotas import entity_node_name
from .render import SECURITY_PROTOCOLS, iso_zoned_utc
from .scram import MECHANISMS, scram_credential
from .tokens import delegation_token

KAFKA_COMPAT_VERSION = "3.9.0"


class Leaf:
    """A file: one line of text, and the typed data behind it when there is some."""

    __slots__ = ("text", "_data")
    is_directory = False

    def __init__(self, text: str, data=None):
        self.text, self._data = text, data        # data: a function returning the typed value, or None

    def data(self):
        """Return the leaf's JSON-ready value: its typed data, else its text."""
        return self.text if self._data is None else self._data()


class Directory:
    """A directory whose children come from `names()` and `make(name)` functions."""

    __slots__ = ("_names", "_make", "_data")
    is_directory = True

    def __init__(self, names, make, data=None):
        self._names, self._make, self._data = names, make, data

    def child_names(self) -> list[str]:
        """Return the children's names (unsorted)."""
        return list(self._names())

    def child(self, name: str):
        """Return the child called `name`, or None."""
        return self._make(name)

    def data(self):
        """Return the directory's JSON-ready value: its typed data, else an object of its children's data."""
        if self._data is not None:
            return self._data()
        found = {}
        for name in sorted(self.child_names()):
            child = self.child(name)
            if child is not None:
                found[name] = child.data()
        return found


def static(children: dict, data=None) -> Directory:
    """Return a directory over a fixed name -> node (or node factory) mapping."""
    def make(name):
        value = children.get(name)
        return value() if callable(value) else value
    return Directory(children.keys, make, data)


def mapping(table: dict, render, key_of=str, data=None) -> Directory:
    """Return a directory listing `table`'s keys (named by key_of) as leaves rendered by `render`, each with
    `data(value)` as its typed data when given."""
    names = {key_of(key): key for key in table}

    def make(name):
        if name not in names:
            return None
        value = table[names[name]]
        return Leaf(render(value), None if data is None else lambda: data(value))
    return Directory(names.keys, make)


def root_node(image: MetadataImage, local: dict | None = None) -> Directory:
    """Return the shell's root: /image and /local (local values may be zero-argument callables)."""
    local = local or {"version": KAFKA_COMPAT_VERSION, "commitId": "unknown"}
    return static({"image": lambda: image_node(image),
                   "local": lambda: static({k: (lambda v=v: Leaf(v() if callable(v) else v))
                                            for k, v in local.items()})})


def image_node(image: MetadataImage) -> Directory:
    """Return /image with Kafka 3.9's children."""
    next_id = image.producer_ids.next_producer_id
    return static({
        "acls": lambda: mapping(image.acls.entries, lambda mv: standard_acl(mv[0]), uuid_str, lambda mv: acl(mv[0])),
        "clientQuotas": lambda: _quotas(image),
        "cluster": lambda: static({
            "brokers": lambda: mapping(image.cluster.brokers, str, data=broker),
            "controllers": lambda: mapping(image.cluster.controllers, str, data=controller)}),
        "configs": lambda: _configs(image),
        "delegationToken": lambda: mapping(image.delegation_tokens.entries, lambda mv: delegation_token(mv[0]),
                                           data=lambda mv: token(mv[0])),
        "features": lambda: _features(image),
        "producerIds": lambda: static({"nextProducerId": Leaf(str(next_id), lambda: next_id)},
                                      lambda: {"nextProducerId": next_id}),
        "provenance": lambda: Leaf(str(image.provenance), lambda: provenance(image.provenance)),
        "scram": lambda: static({name: (lambda m=mech: mapping(image.scram.users(m), scram_credential, data=scram))
                                 for mech, name in MECHANISMS.items()}),
        "topics": lambda: _topics(image),
    })


def _features(image: MetadataImage) -> Directory:
    features = image.features
    children = {"metadataVersion": Leaf(features.metadata_version_name),
                "zkMigrationState": Leaf(features.zk_migration_state_name)}
    for name, level in features.finalized.items():
        children["finalized_" + name] = Leaf(str(level), lambda level=level: level)
    return static(children)


def _configs(image: MetadataImage) -> Directory:
    resources = image.configs.resources
    names = {resource_node_name(r): r for r in resources}
    return Directory(names.keys, lambda n: mapping(resources[names[n]], str) if n in names else None)


def _quotas(image: MetadataImage) -> Directory:
    entities = image.client_quotas.entities
    names = {entity_node_name(e): e for e in entities}
    return Directory(names.keys, lambda n: mapping(entities[names[n]], java_double) if n in names else None)


def _topics(image: MetadataImage) -> Directory:
    topics = image.topics
    by_id = {uuid_str(t): t for t in topics.by_id}
    return static({
        "byName": lambda: Directory(topics.by_name.keys,
                                    lambda n: topic_node(topics.by_name[n]) if n in topics.by_name else None),
        "byId": lambda: Directory(by_id.keys,
                                  lambda n: topic_node(topics.by_id[by_id[n]]) if n in by_id else None),
    })


class TopicDirectory(Directory):
    """A topic's directory, which can also give its whole subtree's text at once (tree_text)."""

    __slots__ = ("topic",)

    def tree_text(self, indent: int) -> str:
        """Return what printing this directory child by child gives: each child, sorted, as '<name>:' at `indent`
        and its leaf's text a level deeper; the partitions' texts come straight from their records."""
        topic = self.topic
        pad, inner = "  " * indent, "  " * (indent + 1)
        lines = topic.partition_lines(pad, ":\n" + inner, "\n")
        lines["name"] = f"{pad}name:\n{inner}{topic.name}\n"
        lines["id"] = f"{pad}id:\n{inner}{uuid_str(topic.topic_id)}\n"
        return "".join([lines[name] for name in sorted(lines)])


def topic_node(topic) -> Directory:
    """Return a topic's directory: name, id and one leaf per partition."""
    def names():
        return ["name", "id"] + [str(p) for p in topic.partitions]

    def make(name):
        if name == "name":
            return Leaf(topic.name)
        if name == "id":
            return Leaf(uuid_str(topic.topic_id))
        if name.lstrip("-").isdigit() and int(name) in topic.partitions and str(int(name)) == name:
            registration = topic.view_partition(int(name))
            return Leaf(str(registration), (lambda: partition(registration, int(name))) if name.isdigit() else None)
        return None
    node = TopicDirectory(names, make, lambda: topic_data(topic))
    node.topic = topic
    return node


# ---------------------------------------------------------------- typed data (--output json|yaml)


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
