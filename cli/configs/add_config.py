"""The configs an --alter adds and deletes, read as Kafka 3.9's ConfigCommand reads them: --add-config's
`k1=v1,k2=[v1,v2],k3=v3`, --add-config-file (a Java properties file), --delete-config's `k1,k2`, SCRAM
credential values (`[iterations=N,]password=P`) and quota values (Java doubles).

Rules:
- --add-config splits on commas outside square brackets, then each pair on one `=` (spaces around it dropped)
  outside brackets: not exactly two parts is Kafka's "Invalid entity config" refusal. Keys are trimmed; values
  lose every `[` and `]` and are trimmed. A key given twice keeps its last value; the file's keys come first.
- Keys must match [a-zA-Z0-9._-]* ("Invalid character found for config key"); message.format.version adds
  Kafka's deprecation WARNING (printed on stdout by the caller).
- Refusals are entities.Refusal with Kafka's texts; a file that cannot be read is ConfigFileError (Kafka
  reports it as an "Error while executing config command" with the Java exception).
"""
from __future__ import annotations

import re

from .entities import Occurrences, Refusal

_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
_PAIRS = re.compile("," + _OUTSIDE_BRACKETS)
_KEY_VALUE = re.compile(r"\s*=\s*" + _OUTSIDE_BRACKETS)
_KEY = re.compile(r"[a-zA-Z0-9._-]*")
_SCRAM_VALUE = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.S)
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")
MESSAGE_FORMAT_VERSION = "message.format.version"
DEFAULT_SCRAM_ITERATIONS = 4096
QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate")
IP_QUOTA_KEYS = ("connection_creation_rate",)
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


class ConfigFileError(Exception):
    """--add-config-file could not be read: `java` is the Java exception's text (class: message)."""

    def __init__(self, java: str):
        super().__init__(java)
        self.java = java


def java_split(pattern: re.Pattern, text: str, limit: int = 0) -> list[str]:
    """Split as Java's String.split: with limit 0 trailing empty strings are dropped (but "" stays [""])."""
    parts = pattern.split(text)
    if limit == 0 and len(parts) > 1:
        while parts and parts[-1] == "":
            parts.pop()
    return parts


def parse_add_config(text: str) -> dict[str, str]:
    """Return the key/value pairs of one --add-config value (see Rules)."""
    pairs = [java_split(_KEY_VALUE, chunk, -1) for chunk in java_split(_PAIRS, text)]
    if not all(len(pair) == 2 for pair in pairs):
        raise Refusal('Invalid entity config: all configs to be added must be in the format "key=val".')
    return {key.strip(): re.sub(r"[\[\]]", "", value).strip() for key, value in pairs}


def configs_to_add(opts: Occurrences, warn) -> dict[str, str]:
    """Return the configs --add-config-file and --add-config add (warn(line) for Kafka's WARNING on stdout)."""
    configs: dict[str, str] = {}
    if opts.has("add-config-file"):
        configs.update(read_properties(opts.value("add-config-file")))
    if opts.has("add-config"):
        configs.update(parse_add_config(opts.value("add-config")))
    if MESSAGE_FORMAT_VERSION in configs:
        warn(f"WARNING: The configuration {MESSAGE_FORMAT_VERSION}={configs[MESSAGE_FORMAT_VERSION]} is specified. "
             "This configuration will be ignored if the version is newer than the inter.broker.protocol.version "
             "specified in the broker or if the inter.broker.protocol.version is 3.0 or newer. This configuration is "
             "deprecated and it will be removed in Apache Kafka 4.0.")
    for key in configs:
        if not _KEY.fullmatch(key):
            raise Refusal(f"Invalid character found for config key: {key}")
    return configs


def configs_to_delete(opts: Occurrences) -> list[str]:
    """Return the keys --delete-config names (comma-separated, each trimmed), in order."""
    return [key.strip() for value in opts.values("delete-config") for key in value.split(",")]


def read_properties(path: str) -> dict[str, str]:
    """Read a Java properties file (Utils.loadProps); a missing or unreadable one is ConfigFileError."""
    from kraftsman.storage import properties

    try:
        return properties.load(path)
    except FileNotFoundError:
        raise ConfigFileError(f"java.nio.file.NoSuchFileException: {path}") from None
    except IsADirectoryError:
        raise ConfigFileError(f"java.io.IOException: Is a directory: {path}") from None
    except (OSError, ValueError) as e:
        raise ConfigFileError(f"java.io.IOException: {getattr(e, 'strerror', None) or e}") from None


def scram_credential(mechanism: str, text: str) -> tuple[int, str]:
    """Return (iterations, password) of a SCRAM credential value, with Kafka's refusals."""
    match = _SCRAM_VALUE.fullmatch(text)
    if match is None:
        raise Refusal(f"Invalid credential property {mechanism.replace('-', '_')}={text}")
    given, password = match.groups()
    if given is None or given == "-1":
        iterations = DEFAULT_SCRAM_ITERATIONS
    elif not given or not -2**31 <= int(given) < 2**31:
        raise Refusal(f'For input string: "{given}"')
    else:
        iterations = int(given)
    if iterations < DEFAULT_SCRAM_ITERATIONS:
        raise Refusal(f"Iterations {iterations} is less than the minimum {DEFAULT_SCRAM_ITERATIONS} required for "
                      f"{mechanism}")
    return iterations, password


def quota_value(key: str, text: str) -> float:
    """Return a quota value parsed as Java's Double.parseDouble, or Kafka's refusal."""
    trimmed = text.strip("".join(chr(c) for c in range(33)))
    if not _JAVA_DOUBLE.fullmatch(trimmed):
        raise Refusal(f"Cannot parse quota configuration value for {key}: {text}")
    number = trimmed.rstrip("fFdD") if not trimmed.endswith("Infinity") else trimmed
    return float(number.replace("Infinity", "inf"))
