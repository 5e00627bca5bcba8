"""The `.lock` file Kafka holds in every log directory while a broker or controller uses it.

Rules:
- A running node holds an exclusive fcntl lock on `<dir>/.lock` (created if missing) for its whole
  life; a second process gets Kafka's message and must not start.
- The lock is released when the handle is closed or the process dies (the kernel drops it).
- Readers that must not run beside a node (the metadata shell) take it only when `.lock` exists
  (lock_if_present): a directory copied without it, or read-only to them, still opens.
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


def lock_if_present(directory) -> object | None:
    """Take `directory`'s lock as Kafka's metadata shell does: only when `.lock` exists (None otherwise); the
    exclusive lock, or a shared one when the file is read-only to this user (a copy nobody writes through it).
    Raise DirectoryLockedError when a running node holds it; return the open handle that keeps the lock."""
    path = Path(directory) / LOCK_NAME
    if not path.exists():
        return None
    try:
        handle = open(path, "a")
    except PermissionError:
        return _shared(open(path, "r"))
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise DirectoryLockedError(f"{os.path.abspath(directory)} is locked by another process") from None
    return handle


def _shared(handle):
    try:
        fcntl.lockf(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        pass    # a read-only copy: nobody can be writing it through this lock
    return handle
