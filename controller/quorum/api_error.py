"""ApiError (code + message) as Kafka's, raised inside the handlers (topics, partitions, configs, registrations).

Rules:
- Codes and default messages come from storage.protocol.errors, Kafka's one table.
- `ApiError(code)` carries Kafka's default message, as Java's `new ApiError(Errors.X)`; NONE has no message.
  `ApiError(code, message)` carries the message Kafka's controller puts in its exception (registrations).
- Handlers raise ApiError internally and turn it into response fields; it never escapes a handler.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors, default_message


class ApiError(Exception):
    """An error code with its message (Kafka's ApiError); the default message when none is given."""

    def __init__(self, code: int, message: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = default_message(code) if message is None else message


OK = ApiError(Errors.NONE)
OK.message = None
