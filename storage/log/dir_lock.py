"""The `.lock` file Kafka holds in every log directory while a broker or controller uses it.

Rules:
- A running node holds an exclusive fcntl lock on `<dir>/.lock` (created if missing) for its whole
  life; a second process gets Kafka's message and must not start.
- The lock is released when the handle is closed or the process dies (the kernel drops it).
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..errors import StorageError

LOCK_NAME = ".lock"


class DirectoryLockedError(StorageError):
    """Another process holds the directory's lock."""


def lock_directory(directory) -> object:
    """Take the exclusive lock of `directory`; return the open handle that keeps it."""
    path = Path(directory) / LOCK_NAME
    handle = open(path, "a")
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise DirectoryLockedError(f"Failed to acquire lock on file {LOCK_NAME} in {os.path.abspath(directory)}. "
                                   "A Kafka instance in another process or thread is using this directory.") from None
    return handle
