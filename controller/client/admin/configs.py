"""Kafka's config calls: describe_configs (DescribeConfigs) and incremental_alter_configs (IncrementalAlterConfigs).

Rules:
- Resources are (resource type, name) pairs with DescribeConfigs' ResourceType codes (TOPIC, BROKER, ...). As
  Kafka's admin client routes them: a BROKER or BROKER_LOGGER resource with a name (a node id) goes to that node
  (core.on_node); every other resource goes, in one request, to any node (core.any_node).
- describe_configs returns a Config per resource, in the order asked: its entries in Kafka's Config order
  (results.Config), or its error (a ServerError, Kafka's message rule) instead.
- Synonyms (v1+) and documentation (v3+) only when asked; v0 answers carry IsDefault, read as source 5
  (DEFAULT_CONFIG) or 0 (UNKNOWN), as Kafka's client reads them.
- incremental_alter_configs takes {(type, name): [(key, value or None, SET/DELETE/APPEND/SUBTRACT)]} and returns
  {(type, name): None or ServerError}. Routing as Kafka's: a named BROKER or BROKER_LOGGER resource at that node,
  the others in one request to any node; with bootstrap controllers every resource but a BROKER_LOGGER goes to
  the active controller (kraftsman's controllers take broker configs; Kafka 3.9's admin client would look for the
  broker among the controllers and time out). A resource the answer leaves out fails; NOT_CONTROLLER is a refusal.
"""
from __future__ import annotations

from .. import sync_client as sc
from .core import ServerError, error_message
from .results import Config, ConfigEntry, ConfigSynonym

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8          # DescribeConfigs' ResourceType
DEFAULT_CONFIG = 5
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3      # IncrementalAlterConfigs' ConfigOperation


class ConfigCalls:
    """DescribeConfigs and IncrementalAlterConfigs (a part of Admin)."""

    def describe_configs(self, resources: list[tuple[int, str]], include_synonyms: bool = False,
                         include_documentation: bool = False) -> dict[tuple[int, str], Config]:
        """Describe the configs of `resources` [(type, name)]; return {(type, name): Config} in that order."""
        def ask(group: list[tuple[int, str]]):
            return lambda conn: _describe_on(conn, group, include_synonyms, include_documentation, self.deadline)

        found: dict[tuple[int, str], Config] = {}
        shared = [r for r in resources if not _node_bound(r)]
        if shared:
            found.update(self.any_node(ask(shared), "DescribeConfigs"))
        for resource in (r for r in resources if _node_bound(r)):
            found.update(self.on_node(int(resource[1]), ask([resource]), "DescribeConfigs"))
        return {r: found.get(r) or _missing(r) for r in resources}

    def incremental_alter_configs(self, changes: dict, validate_only: bool = False) -> dict:
        """Apply {(type, name): [(key, value, operation)]}; return {(type, name): None or ServerError} (see Rules)."""
        def send(group: dict):
            return lambda conn: _alter_on(conn, group, validate_only, self.deadline)

        controllers = self.config.bootstrap_controllers
        at_node = {r: ops for r, ops in changes.items()
                   if _node_bound(r) and (r[0] == BROKER_LOGGER or not controllers)}
        shared = {r: ops for r, ops in changes.items() if r not in at_node}
        outcome: dict = {}
        if shared:
            route = self.on_controller if controllers else self.any_node
            outcome.update(route(send(shared), "IncrementalAlterConfigs"))
        for resource, ops in at_node.items():
            outcome.update(self.on_node(int(resource[1]), send({resource: ops}), "IncrementalAlterConfigs"))
        return {r: outcome[r] if r in outcome else _missing(r).error for r in changes}


def _node_bound(resource: tuple[int, str]) -> bool:
    kind, name = resource
    return kind in (BROKER, BROKER_LOGGER) and name != ""


def _missing(resource: tuple[int, str]) -> Config:
    from kraftsman.storage.protocol.errors import Errors

    return Config(*resource, error=ServerError(Errors.UNKNOWN_SERVER_ERROR,
                                               f"The server did not answer for resource {resource[1]!r}"))


def _describe_on(conn: sc.SyncConnection, resources: list[tuple[int, str]], synonyms: bool, documentation: bool,
                 deadline: float) -> dict[tuple[int, str], Config]:
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeConfigsRequest")
    body = cls(resources=[cls.DescribeConfigsResource(resource_type=kind, resource_name=name,
                                                      configuration_keys=None) for kind, name in resources],
               include_synonyms=synonyms, include_documentation=documentation)
    response = conn.request("DescribeConfigs", conn.pick_version("DescribeConfigs"), body, deadline)
    return {(r.resource_type, r.resource_name): _config(r) for r in response.results}


def _config(result) -> Config:
    from kraftsman.controller.quorum.java_hash_order import JavaHashMap

    if result.error_code:
        error = ServerError(result.error_code, error_message(result.error_code, result.error_message))
        return Config(result.resource_type, result.resource_name, error=error)
    entries = JavaHashMap()
    for c in result.configs:
        entries.put(c.name, _entry(c))
    return Config(result.resource_type, result.resource_name, [entry for _, entry in entries.items()])


def _entry(c) -> ConfigEntry:
    source = getattr(c, "config_source", None)
    if source is None or source == -1:
        source = DEFAULT_CONFIG if getattr(c, "is_default", False) else 0
    synonyms = [ConfigSynonym(s.name, s.value, s.source) for s in getattr(c, "synonyms", None) or []]
    return ConfigEntry(c.name, c.value, source, bool(c.read_only), bool(c.is_sensitive), synonyms,
                       getattr(c, "config_type", 0) or 0, getattr(c, "documentation", None))


def _alter_on(conn: sc.SyncConnection, changes: dict, validate_only: bool, deadline: float) -> dict:
    from kraftsman.storage.protocol import codec
    from kraftsman.storage.protocol.errors import Errors

    from ..active_controller import Refused

    cls = codec.message_class("IncrementalAlterConfigsRequest")
    resources = [cls.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
        cls.AlterableConfig(name=key, config_operation=op, value=value) for key, value, op in ops])
        for (kind, name), ops in changes.items()]
    body = cls(resources=resources, validate_only=validate_only)
    response = conn.request("IncrementalAlterConfigs", conn.pick_version("IncrementalAlterConfigs"), body, deadline)
    if any(r.error_code == Errors.NOT_CONTROLLER for r in response.responses):
        raise Refused(Errors.NOT_CONTROLLER.name)
    return {(r.resource_type, r.resource_name): ServerError(r.error_code, error_message(r.error_code, r.error_message))
            if r.error_code else None for r in response.responses}
