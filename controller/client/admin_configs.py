"""Kafka's Admin calls on configs: describeConfigs, incrementalAlterConfigs and the legacy alterConfigs, with the
result types they return (ConfigEntry, ConfigSynonym), mixed into the Admin class (controller.client.admin).

Rules:
- Routing is KafkaAdminClient's: a BROKER or BROKER_LOGGER resource named by id is described at that node
  (node_routing: with bootstrap controllers only a controller's own id can be found); every other describe, and
  every incremental alter, goes where Admin sends controller-bound calls (on_active_controller: the first
  broker that answers, or the active controller), except a BROKER_LOGGER alter, which goes to its node. A legacy
  AlterConfigs for a broker id goes to that broker with bootstrap servers and to the active controller with
  bootstrap controllers (Kafka's ConstantBrokerOrActiveKController).
- One resource per call; the request asks every key (ConfigurationKeys null). A resource's error code is a
  ServerError with the server's message ("" kept as ""; null becomes Kafka's default message for the code);
  NOT_CONTROLLER is a refusal (the call goes on to the active controller).
- Sources are the wire's ConfigSource ids; source_name() gives Kafka's public ConfigEntry.ConfigSource name (the
  wire's TOPIC_CONFIG is DYNAMIC_TOPIC_CONFIG; an id Kafka does not know is UNKNOWN, as ConfigSource.forId).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kraftsman.storage.protocol.errors import Errors

from . import sync_client as sc
from .active_controller import Refused
from .node_routing import on_node

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS = 2, 4, 8, 16          # ConfigResource.Type
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3                          # AlterConfigOp.OpType
SOURCES = ("UNKNOWN", "DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG",
           "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG", "DYNAMIC_BROKER_LOGGER_CONFIG", "DYNAMIC_CLIENT_METRICS_CONFIG")


class ConfigResource(NamedTuple):
    """A config resource: its type (TOPIC, BROKER, ...) and name ("" for the cluster-wide broker default)."""

    type: int
    name: str

    def node(self) -> int | None:
        """Return the node id a BROKER or BROKER_LOGGER resource names, else None (any node answers)."""
        if self.type in (BROKER, BROKER_LOGGER) and self.name:
            return int(self.name)
        return None


@dataclass
class ConfigSynonym:
    """One synonym of a config entry (Kafka's ConfigEntry.ConfigSynonym)."""

    name: str
    value: str | None
    source: int


@dataclass
class ConfigEntry:
    """One config of a resource as DescribeConfigs reports it (Kafka's ConfigEntry)."""

    name: str
    value: str | None
    source: int = 0
    sensitive: bool = False
    read_only: bool = False
    synonyms: list[ConfigSynonym] = field(default_factory=list)


class AlterConfigOp(NamedTuple):
    """One incremental change: SET or APPEND/SUBTRACT a value, or DELETE the key."""

    name: str
    op: int
    value: str | None = None


def source_name(source_id: int) -> str:
    """Return Kafka's ConfigEntry.ConfigSource name for a wire ConfigSource id."""
    return SOURCES[source_id] if 0 <= source_id < len(SOURCES) else "UNKNOWN"


def _error(code: int, message: str | None):
    from .admin import ServerError, error_message

    return ServerError(code, error_message(code, message))


class ConfigCalls:
    """describeConfigs, incrementalAlterConfigs and alterConfigs (mixed into Admin: addresses, config, deadline)."""

    def describe_configs(self, resource: ConfigResource, include_synonyms: bool = False) -> list[ConfigEntry]:
        """Return every config of `resource` in the server's order (DescribeConfigs)."""
        def attempt(conn: sc.SyncConnection) -> list[ConfigEntry]:
            return _describe_on(conn, resource, include_synonyms, self.deadline)

        if resource.node() is not None:
            return on_node(self, resource.node(), attempt, "DescribeConfigs")
        return self._on_active_controller(attempt, "DescribeConfigs")

    def incremental_alter_configs(self, resource: ConfigResource, ops: list[AlterConfigOp],
                                  validate_only: bool = False) -> None:
        """Apply `ops` to `resource` in one IncrementalAlterConfigs request."""
        def attempt(conn: sc.SyncConnection) -> None:
            _alter_on(conn, "IncrementalAlterConfigs", _incremental_body(resource, ops, validate_only),
                      self.deadline)

        node = resource.node()
        if node is not None and (resource.type == BROKER_LOGGER or not self.config.bootstrap_controllers):
            return on_node(self, node, attempt, "IncrementalAlterConfigs")
        return self._on_active_controller(attempt, "IncrementalAlterConfigs")

    def alter_configs(self, resource: ConfigResource, entries: list[tuple[str, str | None]],
                      validate_only: bool = False) -> None:
        """Replace every dynamic config of `resource` by `entries` (the legacy AlterConfigs: keys left out are
        deleted)."""
        def attempt(conn: sc.SyncConnection) -> None:
            _alter_on(conn, "AlterConfigs", _legacy_body(resource, entries, validate_only), self.deadline)

        node = resource.node()
        if node is not None and not self.config.bootstrap_controllers:
            return on_node(self, node, attempt, "AlterConfigs")
        return self._on_active_controller(attempt, "AlterConfigs")


def _describe_on(conn: sc.SyncConnection, resource: ConfigResource, synonyms: bool, deadline: float):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeConfigsRequest")
    body = cls(resources=[cls.DescribeConfigsResource(resource_type=resource.type, resource_name=resource.name,
                                                      configuration_keys=None)],
               include_synonyms=synonyms, include_documentation=False)
    response = conn.request("DescribeConfigs", conn.pick_version("DescribeConfigs"), body, deadline)
    result = next((r for r in response.results
                   if (r.resource_type, r.resource_name) == (resource.type, resource.name)), None)
    if result is None:
        raise _error(Errors.UNKNOWN_SERVER_ERROR, "The node response did not contain a result for config "
                                                  f"resource {describe_resource(resource)}")
    if result.error_code == Errors.NOT_CONTROLLER:
        raise Refused(Errors.NOT_CONTROLLER.name)
    if result.error_code:
        raise _error(result.error_code, result.error_message)
    return [_entry(c) for c in result.configs]


def _entry(c) -> ConfigEntry:
    synonyms = [ConfigSynonym(s.name, s.value, s.source) for s in (getattr(c, "synonyms", None) or [])]
    return ConfigEntry(c.name, c.value, getattr(c, "config_source", 0), c.is_sensitive, c.read_only, synonyms)


def describe_resource(resource: ConfigResource) -> str:
    """Return Kafka's ConfigResource.toString()."""
    kinds = {TOPIC: "TOPIC", BROKER: "BROKER", BROKER_LOGGER: "BROKER_LOGGER", CLIENT_METRICS: "CLIENT_METRICS"}
    return f"ConfigResource(type={kinds.get(resource.type, 'UNKNOWN')}, name='{resource.name}')"


def _incremental_body(resource: ConfigResource, ops: list[AlterConfigOp], validate_only: bool):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("IncrementalAlterConfigsRequest")
    configs = [cls.AlterableConfig(name=o.name, config_operation=o.op, value=o.value) for o in ops]
    return cls(resources=[cls.AlterConfigsResource(resource_type=resource.type, resource_name=resource.name,
                                                   configs=configs)], validate_only=validate_only)


def _legacy_body(resource: ConfigResource, entries: list[tuple[str, str | None]], validate_only: bool):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("AlterConfigsRequest")
    configs = [cls.AlterableConfig(name=name, value=value) for name, value in entries]
    return cls(resources=[cls.AlterConfigsResource(resource_type=resource.type, resource_name=resource.name,
                                                   configs=configs)], validate_only=validate_only)


def _alter_on(conn: sc.SyncConnection, api: str, body, deadline: float) -> None:
    response = conn.request(api, conn.pick_version(api), body, deadline)
    (wanted,) = body.resources
    result = next((r for r in response.responses
                   if (r.resource_type, r.resource_name) == (wanted.resource_type, wanted.resource_name)), None)
    if result is None:
        raise _error(Errors.UNKNOWN_SERVER_ERROR, f"The {api} response did not contain a result for the resource")
    if result.error_code == Errors.NOT_CONTROLLER:
        raise Refused(Errors.NOT_CONTROLLER.name)
    if result.error_code:
        raise _error(result.error_code, result.error_message)
