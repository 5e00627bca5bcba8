"""kafka-configs --describe: Kafka 3.9's ConfigCommand.describeConfig, line by line, over the Admin calls.

Rules:
- Lines go out as they are known (out(line)): an entity's header before its configs are asked, so a failure
  leaves the header printed above Kafka's error, as Kafka's does. The same facts are returned as a list of
  dicts (one per entity) for --output json/yaml.
- topics, brokers, broker-loggers, client-metrics: the named entity, or every one (topics: the cluster's, internal
  ones included; brokers: each listed broker, then the cluster default ""), each with its configs
  (texts.shown_entries). An invalid topic name fails before asking (Kafka's Topic.validate: InvalidTopicException,
  a jopt.KafkaError without frames, as Kafka's ApiExceptions have none).
- users, clients: the quota entities matching the names (a filter component per entity type: a name, the
  default, or any), then, unless clients are named or a default is, every user's SCRAM credentials (the named
  users, or all); a user without credentials is left out (RESOURCE_NOT_FOUND), another per-user error is
  Kafka's "Error retrieving SCRAM credential configs ..." line. ips: the quota entities only.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors

from . import texts
from .entities import BROKER_LOGGERS, BROKERS, CLIENT_METRICS, CLIENTS, IPS, TOPICS, USERS, Refusal, is_java_int

QUOTA_TYPES = {USERS: "user", CLIENTS: "client-id", IPS: "ip"}
RESOURCE_TYPES = {TOPICS: 2, BROKERS: 4, BROKER_LOGGERS: 8, CLIENT_METRICS: 16}


def describe(admin, types: list[str], names: list[str], describe_all: bool, out) -> list[dict]:
    """Describe the entities of a --describe command line; print Kafka's lines through out(line)."""
    head = types[0]
    if head in RESOURCE_TYPES:
        return describe_resources(admin, head, names[0] if names else None, describe_all, out)
    if head in (USERS, CLIENTS):
        found = describe_quotas(admin, types, names, out)
        if CLIENTS not in types and "" not in names:
            found += describe_scram(admin, names, out)
        return found
    return describe_quotas(admin, types, names, out)


def describe_resources(admin, entity_type: str, name: str | None, describe_all: bool, out) -> list[dict]:
    """Describe one config resource, or every one of its type."""
    found = []
    for entity in [name] if name is not None else _every(admin, entity_type):
        out(texts.describe_header(entity_type, entity, describe_all))
        entries = resource_configs(admin, entity_type, entity, include_synonyms=True)
        shown = texts.shown_entries(entries, entity_type, entity, describe_all)
        for entry in shown:
            out(texts.config_line(entry))
        found.append({"entity_type": entity_type, "entity_name": entity, "configs": [_entry_fields(e) for e in shown]})
    return found


def _every(admin, entity_type: str) -> list[str]:
    if entity_type == TOPICS:
        return [t.name for t in admin.list_topics()]
    if entity_type in (BROKERS, BROKER_LOGGERS):
        return [str(node.node_id) for node in admin.describe_cluster().nodes] + [""]
    raise Refusal("kraftsman does not list client-metrics resources (ListClientMetricsResources): name one with "
                  "--entity-name")


def resource_configs(admin, entity_type: str, name: str, include_synonyms: bool) -> list:
    """Return a resource's entries (Kafka's getResourceConfig before its filter), checking the name first."""
    if entity_type == TOPICS and name:
        from kraftsman.controller.quorum.topics_names import TopicNameError, validate_topic_name

        try:
            validate_topic_name(name)
        except TopicNameError as e:
            from ..common.jopt import KafkaError

            raise KafkaError(str(e), "org.apache.kafka.common.errors.InvalidTopicException", traced=False) from None
    if entity_type in (BROKERS, BROKER_LOGGERS) and name and not is_java_int(name):
        raise Refusal(f"The entity name for {entity_type} must be a valid integer broker id, found: {name}")
    resource = (RESOURCE_TYPES[entity_type], name)
    config = admin.describe_configs([resource], include_synonyms)[resource]
    if config.error is not None:
        raise config.error
    return config.entries


def _entry_fields(entry) -> dict:
    from kraftsman.controller.client.admin.configs import source_name

    return {"name": entry.name, "value": entry.value, "sensitive": entry.sensitive,
            "source": source_name(entry.source),
            "synonyms": [{"name": s.name, "value": s.value, "source": source_name(s.source)} for s in entry.synonyms]}


def quota_filter(types: list[str], names: list[str]) -> list:
    """Return the quota filter components of the command line's types and names (Kafka's zipAll)."""
    from kraftsman.controller.client.admin.quotas import DEFAULT, EXACT, SPECIFIED, QuotaFilterComponent

    if len(names) > len(types):
        raise Refusal("More entity names specified than entity types")
    components = []
    for i, kind in enumerate(types):
        name = names[i] if i < len(names) else None
        if name is None:
            components.append(QuotaFilterComponent(QUOTA_TYPES[kind], SPECIFIED))
        elif name == "":
            components.append(QuotaFilterComponent(QUOTA_TYPES[kind], DEFAULT))
        else:
            components.append(QuotaFilterComponent(QUOTA_TYPES[kind], EXACT, name))
    return components


def describe_quotas(admin, types: list[str], names: list[str], out) -> list[dict]:
    """Print a line per quota entity matching the names."""
    found = []
    for entry in admin.describe_client_quotas(quota_filter(types, names), strict=True):
        out(texts.quota_line(entry.entity, entry.values))
        found.append({"entity": [{"type": t, "name": n} for t, n in entry.entity],
                      "quotas": dict(entry.values)})
    return found


def describe_scram(admin, names: list[str], out) -> list[dict]:
    """Print each user's SCRAM credentials (the named users, or every user)."""
    found = []
    for result in admin.describe_user_scram_credentials(names or None):
        if result.error_code == Errors.RESOURCE_NOT_FOUND:
            continue
        if result.error_code:
            from kraftsman.controller.client.admin import error_message
            from kraftsman.storage.protocol.errors import exception_class

            message = error_message(result.error_code, result.error_message)
            out(texts.scram_error_line(result.user, "ExecutionException",
                                       f"{exception_class(result.error_code)}: {message}"))
            found.append({"user": result.user, "error": message})
            continue
        out(texts.scram_line(result.user, result.credentials))
        found.append({"user": result.user, "scram": [{"mechanism": m, "iterations": i}
                                                     for m, i in result.credentials]})
    return found
