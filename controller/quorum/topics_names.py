"""Topic name rules of Kafka's `Topic` class (clients internals).

Rules:
- Legal names: 1-249 characters of ASCII alphanumerics, '.', '_' and '-', and not "." or "..".
- '.' and '_' collide: two topics whose names differ only by them cannot coexist.
- Messages are Kafka 3.9's InvalidTopicException texts ("Topic name is invalid: <reason>", Topic.detectInvalidTopic,
  since Kafka 3.4; the admin fixtures' kafka-topics --create --topic 'bad name!' shows one).
"""
from __future__ import annotations

import re

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class TopicNameError(ValueError):
    """The topic name is illegal (Kafka's InvalidTopicException)."""


def validate_topic_name(name: str) -> None:
    """Raise TopicNameError with Kafka 3.9's message when `name` is not a legal topic name."""
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_NAME_LENGTH:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    elif not _LEGAL.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return
    raise TopicNameError(f"Topic name is invalid: {reason}")


def unify_collision_chars(name: str) -> str:
    """Return the name with '.' turned into '_' (Kafka's Topic.unifyCollisionChars)."""
    return name.replace(".", "_")


def has_collision_chars(name: str) -> bool:
    """Tell whether the name holds '.' or '_'."""
    return "." in name or "_" in name
