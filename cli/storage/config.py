"""The server.properties kafka-storage reads: the file (KAFKA_* variables over it when KRAFTSMAN_KAFKA_ENV asks),
checked as Kafka 3.9's KafkaConfig checks it before anything else (storage/server_properties.py).

StorageTool builds `new KafkaConfig(props)` for every command given --config, ahead of info or format; its
ConfigException or IllegalArgumentException is not caught (a JVM stack trace, exit 1). kraftsman raises
ConfigError with the exception's message, which kafka-storage prints as one line on stderr (exit 1).

Rules:
- Every refusal is a ConfigError whose message is the one line kafka-storage prints (exit 1); nothing prints here.
"""
from __future__ import annotations

from kraftsman.storage.server_properties import KAFKA_DEFAULT_LOG_DIR, ConfigError, ServerProperties, validate

__all__ = ["KAFKA_DEFAULT_LOG_DIR", "ConfigError", "ServerProperties", "load"]


def load(path: str, environ, release: str = "3.9") -> ServerProperties:
    """Read and check the server .properties file (KAFKA_* variables over it when KRAFTSMAN_KAFKA_ENV asks) as
    `release`'s KafkaConfig does; raise ConfigError with the one line kafka-storage prints."""
    from ..common.env_overrides import load_server_properties

    props = load_server_properties(path, environ, ConfigError)
    validate(props, release)  # as StorageTool's `new KafkaConfig(...)`, before any command runs
    return ServerProperties(props)
