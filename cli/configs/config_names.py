"""The config names kafka-configs can set per entity type, as Kafka 3.9 lists them in --add-config's help (and as Tab
completes them): LogConfig's topic configs, DynamicConfig.Broker's (the broker replication quotas and every
dynamic KafkaConfig key), the user, client, ip and client-metrics configs.

Rules:
- Lists are sorted in Java's String order, as Kafka's help sorts them; the broker and topic names come from the
  controller's config schemas (one home for Kafka's config definitions).
"""
from __future__ import annotations

from .add_config import IP_QUOTA_KEYS, QUOTA_KEYS, SCRAM_MECHANISMS
from .entities import BROKERS, CLIENT_METRICS, CLIENTS, IPS, TOPICS, USERS

BROKER_QUOTAS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "replica.alter.log.dirs.io.max.bytes.per.second")
CLIENT_METRICS_NAMES = ("interval.ms", "match", "metrics")


def names(entity_type: str) -> list[str]:
    """Return the config names Kafka 3.9 accepts for `entity_type` (empty for broker-loggers: any logger)."""
    from kraftsman.controller.quorum.java_hash_order import java_sorted

    if entity_type == TOPICS:
        from kraftsman.controller.quorum.topic_configs_schema import TOPIC_CONFIGS

        return java_sorted(TOPIC_CONFIGS)
    if entity_type == BROKERS:
        from kraftsman.controller.quorum.broker_configs_schema import BROKER_CONFIGS, CLUSTER_WIDE, PER_BROKER

        dynamic = [n for n, d in BROKER_CONFIGS.items() if d.mode in (PER_BROKER, CLUSTER_WIDE)]
        return java_sorted({*dynamic, *BROKER_QUOTAS})
    by_type = {USERS: (*QUOTA_KEYS, *SCRAM_MECHANISMS), CLIENTS: QUOTA_KEYS, IPS: IP_QUOTA_KEYS,
               CLIENT_METRICS: CLIENT_METRICS_NAMES}
    return java_sorted(by_type.get(entity_type, ()))


def add_config_help() -> str:
    """Return --add-config's help text, Kafka's, with every valid config name per entity type."""
    def listed(entity_type: str, label: str) -> str:
        return f"For entity-type '{label}': \n" + "".join(f"\t{n}\n" for n in names(entity_type))
    return ("Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: "
            "'k1=v1,k2=[v1,v2,v2],k3=v3'. The following is a list of valid configurations: "
            + listed(TOPICS, TOPICS) + listed(BROKERS, BROKERS) + listed(USERS, USERS) + listed(CLIENTS, CLIENTS)
            + listed(IPS, IPS) + listed(CLIENT_METRICS, CLIENT_METRICS)
            + f"Entity types '{USERS}' and '{CLIENTS}' may be specified together to update config for clients of a "
              "specific user.")
