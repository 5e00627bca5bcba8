"""Kafka's config calls: describe_configs (DescribeConfigs), incremental_alter_configs (IncrementalAlterConfigs) and
alter_configs (the legacy AlterConfigs).

Rules:
- Resources are (resource type, name) pairs with DescribeConfigs' ResourceType codes (TOPIC, BROKER, ...). As
  Kafka's admin client routes them: a BROKER or BROKER_LOGGER resource with a name (a node id) goes to that node
  (core.on_node); every other resource goes, in one request, to any node (core.any_node).
- describe_configs returns a Config per resource, in the order asked: its entries in Kafka's Config order
  (results.Config), or its error (a ServerError, Kafka's message rule) instead.
- Synonyms (v1+) and documentation (v3+) only when asked; v0 answers carry IsDefault, read as source 5
  (DEFAULT_CONFIG) or 0 (UNKNOWN), as Kafka's client reads them.
- Writes, one resource per call: an incremental alter of a broker named by id goes to that node with bootstrap
  servers (a BROKER_LOGGER's always), every other one to the controller (core.on_controller); a legacy
  AlterConfigs of a broker id goes to that broker with bootstrap servers and to the active controller with
  bootstrap controllers (Kafka's ConstantBrokerOrActiveKController). The resource's error is a ServerError.
- source_name(id) is Kafka's public ConfigEntry.ConfigSource name of a wire ConfigSource id (TOPIC_CONFIG is
  DYNAMIC_TOPIC_CONFIG; an unknown id is UNKNOWN, as ConfigSource.forId answers).
"""
from __future__ import annotations

from typing import NamedTuple

from .. import sync_client as sc
from .core import ServerError, error_message, raise_for
from .results import Config, ConfigEntry, ConfigSynonym

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS = 2, 4, 8, 16      # ConfigResource.Type
DEFAULT_CONFIG = 5
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3                      # AlterConfigOp.OpType
SOURCES = ("UNKNOWN", "DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG",
           "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG", "DYNAMIC_BROKER_LOGGER_CONFIG", "DYNAMIC_CLIENT_METRICS_CONFIG")


class AlterConfigOp(NamedTuple):
    """One incremental change: SET, APPEND or SUBTRACT a value, or DELETE the key."""

    name: str
    op: int
    value: str | None = None


def source_name(source_id: int) -> str:
    """Return Kafka's ConfigEntry.ConfigSource name of a wire ConfigSource id."""
    return SOURCES[source_id] if 0 <= source_id < len(SOURCES) else "UNKNOWN"


class ConfigCalls:
    """DescribeConfigs (a part of Admin)."""

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

    def incremental_alter_configs(self, resource: tuple[int, str], ops: list[AlterConfigOp],
                                  validate_only: bool = False) -> None:
        """Apply `ops` to one resource (IncrementalAlterConfigs); raise its ServerError."""
        from kraftsman.storage.protocol import codec

        cls = codec.message_class("IncrementalAlterConfigsRequest")
        configs = [cls.AlterableConfig(name=o.name, config_operation=o.op, value=o.value) for o in ops]
        body = cls(resources=[cls.AlterConfigsResource(resource_type=resource[0], resource_name=resource[1],
                                                       configs=configs)], validate_only=validate_only)
        direct = _node_bound(resource) and (resource[0] == BROKER_LOGGER or not self.config.bootstrap_controllers)
        self._alter(resource, "IncrementalAlterConfigs", body, direct)

    def alter_configs(self, resource: tuple[int, str], entries: list[tuple[str, str | None]],
                      validate_only: bool = False) -> None:
        """Replace every dynamic config of one resource by `entries` (the legacy AlterConfigs: keys left out are
        deleted); raise its ServerError."""
        from kraftsman.storage.protocol import codec

        cls = codec.message_class("AlterConfigsRequest")
        configs = [cls.AlterableConfig(name=name, value=value) for name, value in entries]
        body = cls(resources=[cls.AlterConfigsResource(resource_type=resource[0], resource_name=resource[1],
                                                       configs=configs)], validate_only=validate_only)
        self._alter(resource, "AlterConfigs", body, _node_bound(resource) and not self.config.bootstrap_controllers)

    def _alter(self, resource: tuple[int, str], api: str, body, direct: bool) -> None:
        def attempt(conn: sc.SyncConnection) -> None:
            response = conn.request(api, conn.pick_version(api), body, self.deadline)
            result = next((r for r in response.responses if (r.resource_type, r.resource_name) == resource), None)
            if result is None:
                raise ServerError(-1, f"The {api} response did not contain a result for the resource")
            raise_for(result.error_code, result.error_message)

        if direct:
            return self.on_node(int(resource[1]), attempt, api)
        return self.on_controller(attempt, api)


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
