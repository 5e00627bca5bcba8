"""StorageError: the one base of the errors the storage layer raises for bad input; the cli turns each into
one line.

Rules:
- This module imports nothing of the project: every storage module that raises a user-facing error defines
  its class where it raises it, as a subclass of StorageError (and of ValueError where callers catch that).
- A StorageError's message is one line fit to show a user as it is.
"""
from __future__ import annotations


class StorageError(Exception):
    """A storage operation failed for a reason the user can act on (one-line message)."""


def known_errors() -> tuple[type, ...]:
    """Return the error types whose message is fit to show a user as it is: StorageError and OSError."""
    return (StorageError, OSError)
