"""Kafka's config calls: describe_configs (DescribeConfigs).

Rules:
- Resources are (resource type, name) pairs with DescribeConfigs' ResourceType codes (TOPIC, BROKER, ...). As
  Kafka's admin client routes them: a BROKER or BROKER_LOGGER resource with a name (a node id) goes to that node
  (core.on_node); every other resource goes, in one request, to any node (core.any_node).
- describe_configs returns a Config per resource, in the order asked: its entries in Kafka's Config order
  (results.Config), or its error (a ServerError, Kafka's message rule) instead.
- Synonyms (v1+) and documentation (v3+) only when asked; v0 answers carry IsDefault, read as source 5
  (DEFAULT_CONFIG) or 0 (UNKNOWN), as Kafka's client reads them.
"""
from __future__ import annotations

from .. import sync_client as sc
from .core import ServerError, error_message
from .results import Config, ConfigEntry, ConfigSynonym

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8          # DescribeConfigs' ResourceType
DEFAULT_CONFIG = 5


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
