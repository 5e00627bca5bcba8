"""Topic name rules of Kafka's `Topic` class (clients internals).

Rules:
- Legal names: 1-249 characters of ASCII alphanumerics, '.', '_' and '-', and not "." or "..".
- '.' and '_' collide: two topics whose names differ only by them cannot coexist.
- Messages are Kafka's InvalidTopicException texts (prefix "Topic name").
"""
from __future__ import annotations

import re

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class TopicNameError(ValueError):
    """The topic name is illegal (Kafka's InvalidTopicException)."""


def validate_topic_name(name: str) -> None:
    """Raise TopicNameError with Kafka's message when `name` is not a legal topic name."""
    prefix = "Topic name"
    if not name:
        raise TopicNameError(f"{prefix} is illegal, it can't be empty")
    if name in (".", ".."):
        raise TopicNameError(f'{prefix} cannot be "." or ".."')
    if len(name) > MAX_NAME_LENGTH:
        raise TopicNameError(f"{prefix} is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
                             f"{prefix}: {name}")
    if not _LEGAL.fullmatch(name):
        raise TopicNameError(f'{prefix} "{name}" is illegal, it contains a character other than ASCII '
                             "alphanumerics, '.', '_' and '-'")


def unify_collision_chars(name: str) -> str:
    """Return the name with '.' turned into '_' (Kafka's Topic.unifyCollisionChars)."""
    return name.replace(".", "_")


def has_collision_chars(name: str) -> bool:
    """Tell whether the name holds '.' or '_'."""
    return "." in name or "_" in name
