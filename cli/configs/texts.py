"""kafka-configs' texts, as Kafka 3.9's ConfigCommand prints them: describe headers and config lines with their
synonyms, quota lines with Java doubles, SCRAM credential lines, and the "Completed updating ..." lines.

Rules:
- A describe shows the entries whose source is the entity's dynamic one (DYNAMIC_TOPIC_CONFIG for topics,
  DYNAMIC_BROKER_CONFIG for a broker id, DYNAMIC_DEFAULT_BROKER_CONFIG for the cluster default,
  DYNAMIC_CLIENT_METRICS_CONFIG for client metrics; broker loggers: every entry), or every entry with --all,
  sorted by name in Java's String order; a null value prints `null`, as Scala's string interpolation does.
- Quota lines name the entity user, then client-id, then ip ('name' or "the default ..."), and the values in the
  order given (the Admin client's HashMap order), each as Java's Double.toString.
- Entity types print without their final letter ("topic", "broker", "client-metric"), as Kafka's dropRight(1).
"""
from __future__ import annotations

from kraftsman.controller.client.admin.configs import source_name

from .entities import BROKER_LOGGERS, BROKERS, CLIENT_METRICS, TOPICS, singular

DYNAMIC_SOURCE = {TOPICS: 1, CLIENT_METRICS: 7}     # a broker: 2 for an id, 3 for the default ""
QUOTA_TYPE_WORDS = (("user", "user-principal"), ("client-id", "client-id"), ("ip", "ip"))


def describe_header(entity_type: str, name: str, describe_all: bool) -> str:
    """Return the line printed before an entity's configs."""
    if name == "":
        return f"Default configs for {entity_type} in the cluster are:"
    return f"{'All' if describe_all else 'Dynamic'} configs for {singular(entity_type)} {name} are:"


def shown_source(entity_type: str, name: str) -> int | None:
    """Return the config source a describe without --all shows for the entity (None: every entry)."""
    if entity_type == BROKERS:
        return 2 if name else 3
    if entity_type == BROKER_LOGGERS:
        return None
    return DYNAMIC_SOURCE.get(entity_type)


def shown_entries(entries, entity_type: str, name: str, describe_all: bool) -> list:
    """Return the entries a describe prints: the entity's dynamic ones (every one with --all), sorted by name."""
    from kraftsman.controller.quorum.java_hash_order import java_order

    source = None if describe_all else shown_source(entity_type, name)
    return sorted((e for e in entries if source is None or e.source == source), key=lambda e: java_order(e.name))


def _text(value) -> str:
    return "null" if value is None else str(value)


def config_line(entry) -> str:
    """Return one config's describe line with its synonyms."""
    synonyms = ", ".join(f"{source_name(s.source)}:{s.name}={_text(s.value)}" for s in entry.synonyms)
    return f"  {entry.name}={_text(entry.value)} sensitive={str(entry.sensitive).lower()} synonyms={{{synonyms}}}"


def quota_entity_text(entity: list[tuple[str, str | None]]) -> str:
    """Return how Kafka names a quota entity: "user-principal 'alice', client-id 'c1'", "the default ip"."""
    names = dict(entity)
    parts = []
    for kind, words in QUOTA_TYPE_WORDS:
        if kind in names:
            parts.append(f"the default {words}" if names[kind] is None else f"{words} '{names[kind]}'")
    return ", ".join(parts)


def quota_line(entity: list[tuple[str, str | None]], values: list[tuple[str, float]]) -> str:
    """Return one entity's "Quota configs for ... are ..." line."""
    from kraftsman.controller.quorum.configs_synonyms import java_double

    shown = ", ".join(f"{key}={java_double(value)}" for key, value in values)
    return f"Quota configs for {quota_entity_text(entity)} are {shown}"


def scram_line(user: str, credentials: list[tuple[str, int]]) -> str:
    """Return one user's "SCRAM credential configs for ..." line."""
    shown = ", ".join(f"{mechanism}=iterations={iterations}" for mechanism, iterations in credentials)
    return f"SCRAM credential configs for user-principal '{user}' are {shown}"


def scram_error_line(user: str, exception_name: str, message: str | None) -> str:
    """Return the line Kafka prints when one user's SCRAM credentials cannot be described."""
    return f"Error retrieving SCRAM credential configs for user-principal '{user}': {exception_name}: {message}"


def completed_line(entity_type: str, name: str) -> str:
    """Return the line an --alter ends with."""
    if name:
        return f"Completed updating config for {singular(entity_type)} {name}."
    return f"Completed updating default config for {entity_type} in the cluster."


def scala_set(items) -> str:
    """Return a Scala immutable Set's toString: Set1..Set4 keep insertion order; a larger HashSet's order is
    its hash trie's (insertion order here)."""
    items = list(dict.fromkeys(items))
    return f"{'Set' if len(items) <= 4 else 'HashSet'}({', '.join(items)})"


def scala_buffer(items) -> str:
    """Return the toString of the Scala buffer Kafka collects --delete-config keys in."""
    return f"ArrayBuffer({', '.join(items)})"
