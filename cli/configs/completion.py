"""Tab completion for kafka-configs: config names of the entity type the line names, entity types, and entity names
from the live cluster (bounded and silent on failure, as every completer: cli/completion/completers).

Rules:
- The entity type is the line's first (--entity-type, else an entity flag such as --topic or --broker-defaults;
  topics when it names none), as Kafka's entityTypes orders them; config names come from config_names.
"""
from __future__ import annotations

from ..completion.completers import live_topics, node_ids, quota_names, scram_users, silent
from .entities import DEFAULT_FLAGS, ENTITY_FLAGS, SUPPORTED_TYPES


def _entity_type(values: dict) -> str:
    """Return the entity type a kafka-configs line names (its first one), topics when none."""
    kinds = values.get("entity_type") or []
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    kinds += [kind for flag, kind in (*ENTITY_FLAGS, *DEFAULT_FLAGS) if values.get(flag.replace("-", "_"))]
    return kinds[0] if kinds else "topics"


@silent
def config_keys(values: dict, incomplete: str) -> list[str]:
    """Complete --delete-config: the config names kafka-configs accepts for the line's entity type."""
    from .config_names import names

    return names(_entity_type(values))


@silent
def config_pairs(values: dict, incomplete: str) -> list[str]:
    """Complete --add-config's `NAME=`: the config names of the line's entity type."""
    from .config_names import names

    return [f"{name}=" for name in names(_entity_type(values))]


@silent
def entity_types(values: dict, incomplete: str) -> list[str]:
    """Complete --entity-type (Kafka 3.9's entity types)."""
    return list(SUPPORTED_TYPES)


@silent
def entity_names(values: dict, incomplete: str) -> list[str]:
    """Complete --entity-name from the cluster, by the line's entity type: topics, broker ids, users (SCRAM
    credentials and quotas), client ids (quotas)."""
    kind = _entity_type(values)
    if kind in ("brokers", "broker-loggers"):
        return node_ids(values, controllers=False)
    if kind == "users":
        return sorted({*quota_names(values, "user"), *scram_users(values)})
    if kind == "clients":
        return quota_names(values, "client-id")
    return live_topics(values) if kind == "topics" else []
