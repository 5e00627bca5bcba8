"""The Kafka releases kraftsman speaks for: 3.9 (the default), 4.0, 4.1 and 4.2.

Rules:
- A release is named by its major.minor string; every table that differs by release (metadata versions and
  features here in storage, texts with each tool, the controller's rules) is keyed by these names.
- KAFKA_VERSIONS is the version each release's own admin tools print for --version (kafka-topics): the builds
  the facts came from (3.9.0, 4.0.0, 4.1.1, 4.2.0; ../shared/reference/kafka-4x).
- Pure data; the cli layer decides which release a command speaks for (KRAFTSMAN_KAFKA_VERSION, a profile).
"""
from __future__ import annotations

RELEASES = ("3.9", "4.0", "4.1", "4.2")
DEFAULT_RELEASE = "3.9"
KAFKA_VERSIONS = {"3.9": "3.9.0", "4.0": "4.0.0", "4.1": "4.1.1", "4.2": "4.2.0"}


class UnknownRelease(ValueError):
    """A release name kraftsman does not speak for."""


def check(name: str) -> str:
    """Return `name` (surrounding blanks dropped) when kraftsman speaks for that release, else raise UnknownRelease."""
    text = name.strip()
    if text not in RELEASES:
        raise UnknownRelease(f"Unknown Kafka release '{name}': kraftsman speaks for {', '.join(RELEASES)}")
    return text


def at_least(name: str, floor: str) -> bool:
    """Tell whether release `name` is `floor` or newer (for tables that change once and stay changed)."""
    return RELEASES.index(name) >= RELEASES.index(floor)
