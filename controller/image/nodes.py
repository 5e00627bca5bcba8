"""The node tree the metadata shell browses: Kafka 3.9's /image/... and /local/... layout.

Rules:
- A node is a directory (child_names, child) or a leaf (text); children are built on demand,
  so a million partitions cost nothing until listed.
- Names and leaf texts follow Kafka 3.9's image/node classes and the records' toString() forms.
- child_names() order is unspecified; the shell sorts.
- What differs by release is one table (NODE_RULES): 4.x prints metadataVersion as an Optional (`Optional[4.2-IV1]`,
  `Optional.empty` before any is set), puts the ACLs under /image/acls/byId, and 4.2 drops zkMigrationState.
"""
from __future__ import annotations

from typing import NamedTuple

from kraftsman.storage.protocol.javafmt import java_double
from kraftsman.storage.protocol.uuids import uuid_str

from .acls import standard_acl
from .configs import resource_node_name
from .image import MetadataImage
from .quotas import entity_node_name
from .scram import MECHANISMS, scram_credential
from .tokens import delegation_token

KAFKA_COMPAT_VERSION = "3.9.0"


class NodeRules(NamedTuple):
    """What one release's image nodes print differently."""

    optional_metadata_version: bool   # FeaturesImage.metadataVersion() is an Optional (4.0+)
    zk_migration_state: bool          # /image/features/zkMigrationState (gone in 4.2)
    acls_by_id: bool                  # /image/acls/byId/<id> (4.x) instead of /image/acls/<id>


NODE_RULES = {"3.9": NodeRules(False, True, False), "4.0": NodeRules(True, True, True),
              "4.1": NodeRules(True, True, True), "4.2": NodeRules(True, False, True)}


class Leaf:
    """A file: one line of text."""

    __slots__ = ("text",)
    is_directory = False

    def __init__(self, text: str):
        self.text = text


class Directory:
    """A directory whose children come from `names()` and `make(name)` functions."""

    __slots__ = ("_names", "_make")
    is_directory = True

    def __init__(self, names, make):
        self._names, self._make = names, make

    def child_names(self) -> list[str]:
        """Return the children's names (unsorted)."""
        return list(self._names())

    def child(self, name: str):
        """Return the child called `name`, or None."""
        return self._make(name)


def static(children: dict) -> Directory:
    """Return a directory over a fixed name -> node (or node factory) mapping."""
    def make(name):
        value = children.get(name)
        return value() if callable(value) else value
    return Directory(children.keys, make)


def mapping(table: dict, render, key_of=str) -> Directory:
    """Return a directory listing `table`'s keys (named by key_of) as leaves rendered by `render`."""
    names = {key_of(key): key for key in table}
    return Directory(names.keys, lambda name: Leaf(render(table[names[name]])) if name in names else None)


def root_node(image: MetadataImage, local: dict | None = None, release: str = "3.9") -> Directory:
    """Return the shell's root: /image and /local (local values may be zero-argument callables), as `release`'s
    shell shows them."""
    local = local or {"version": KAFKA_COMPAT_VERSION, "commitId": "unknown"}
    return static({"image": lambda: image_node(image, release),
                   "local": lambda: static({k: (lambda v=v: Leaf(v() if callable(v) else v))
                                            for k, v in local.items()})})


def image_node(image: MetadataImage, release: str = "3.9") -> Directory:
    """Return /image with Kafka's children (`release`'s rules)."""
    rules = NODE_RULES[release]
    return static({
        "acls": lambda: _acls(image, rules),
        "clientQuotas": lambda: _quotas(image),
        "cluster": lambda: static({
            "brokers": lambda: mapping(image.cluster.brokers, str),
            "controllers": lambda: mapping(image.cluster.controllers, str)}),
        "configs": lambda: _configs(image),
        "delegationToken": lambda: mapping(image.delegation_tokens.entries, lambda mv: delegation_token(mv[0])),
        "features": lambda: _features(image, rules),
        "producerIds": lambda: static({"nextProducerId": Leaf(str(image.producer_ids.next_producer_id))}),
        "provenance": lambda: Leaf(str(image.provenance)),
        "scram": lambda: static({name: (lambda m=mech: mapping(image.scram.users(m), scram_credential))
                                 for mech, name in MECHANISMS.items()}),
        "topics": lambda: _topics(image),
    })


def _acls(image: MetadataImage, rules: NodeRules) -> Directory:
    by_id = mapping(image.acls.entries, lambda mv: standard_acl(mv[0]), uuid_str)
    return static({"byId": by_id}) if rules.acls_by_id else by_id


def _features(image: MetadataImage, rules: NodeRules) -> Directory:
    features = image.features
    version = features.metadata_version_name
    if rules.optional_metadata_version:
        version = "Optional.empty" if features.metadata_version is None else f"Optional[{version}]"
    children = {"metadataVersion": Leaf(version)}
    if rules.zk_migration_state:
        children["zkMigrationState"] = Leaf(features.zk_migration_state_name)
    for name, level in features.finalized.items():
        children["finalized_" + name] = Leaf(str(level))
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
            return Leaf(str(topic.view_partition(int(name))))
        return None
    return Directory(names, make)
