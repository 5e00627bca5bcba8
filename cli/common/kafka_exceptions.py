"""Failures worded as the Java exceptions Kafka's admin tools print (class, message, cause, suppressed ones), and the
text Kafka prints for them: Throwable.toString() and Utils.stackTrace (printStackTrace's layout).

Rules:
- A KafkaException names the Java class Kafka's tool would throw at that point and its message (None: Java's null,
  printed as no ": message" part); `cause` and `suppressed` nest as Java's do. wrapped(cls, cause) is Java's
  `new RuntimeException(cause)`: its message is the cause's toString().
- Frames: kraftsman is not a JVM, so a stack trace shows one frame, the Python function that raised the failure
  (`\tat kraftsman.cli.reassign.plan_files.parse_plan(plan_files.py:88)`); Kafka's ApiExceptions (the
  org.apache.kafka.common.errors classes) carry no frames, as in Kafka. Comparisons with recorded Kafka output treat
  frames loosely (the fixture README says so).
"""
from __future__ import annotations

import os

API_ERRORS = "org.apache.kafka.common.errors."


class KafkaException(Exception):
    """A failure as Kafka's tool throws it (see Rules)."""

    def __init__(self, java_class: str, message: str | None = None, *, cause: "KafkaException | None" = None,
                 suppressed: tuple = (), frames: bool | None = None):
        super().__init__(message or "")
        self.java_class, self.message, self.cause = java_class, message, cause
        self.suppressed = list(suppressed)
        self.frames = not java_class.startswith(API_ERRORS) if frames is None else frames

    def __str__(self) -> str:
        return self.message or ""

    def get_message(self) -> str:
        """Return the message as Java prints getMessage() in a string: "null" when there is none."""
        return "null" if self.message is None else self.message

    def to_string(self) -> str:
        """Return Java's Throwable.toString(): the class, then ": message" unless the message is null."""
        return self.java_class if self.message is None else f"{self.java_class}: {self.message}"


def wrapped(java_class: str, cause: KafkaException) -> KafkaException:
    """Return Java's `new <java_class>(cause)`: the message is the cause's toString()."""
    return KafkaException(java_class, cause.to_string(), cause=cause)


def _frame(e: BaseException) -> str | None:
    tb = e.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    module = tb.tb_frame.f_globals.get("__name__", "kraftsman")
    return f"\tat {module}.{code.co_name}({os.path.basename(code.co_filename)}:{tb.tb_lineno})"


def stack_trace(e: KafkaException) -> str:
    """Return what Kafka's Utils.stackTrace(e) gives: printStackTrace's lines, each ending in a newline."""
    lines: list[str] = []
    _trace(e, "", "", lines, "\tat kraftsman")
    return "".join(line + "\n" for line in lines)


def _trace(e: KafkaException, caption: str, indent: str, lines: list[str], outer: str) -> None:
    """Append e's lines; an exception never raised (a cause made on the spot) shows the frame of its wrapper."""
    lines.append(f"{indent}{caption}{e.to_string()}")
    frame = _frame(e) or outer
    if e.frames:
        lines.append(indent + frame)
    for s in e.suppressed:
        _trace(s, "Suppressed: ", indent + "\t", lines, frame)
    if e.cause is not None:
        _trace(e.cause, "Caused by: ", indent, lines, frame)


def kafka_exception(error) -> KafkaException:
    """Return the exception Kafka's client raises for a controller.client.admin.ServerError (its class from the
    error code, its message the server's or Kafka's default one)."""
    from kraftsman.storage.protocol.error_classes import exception_class

    return KafkaException(exception_class(error.code), error.message or None)
