"""Crash-safe file writes: temp file in the same directory, fsync, rename, fsync of the directory.

Rules:
- The target is either the old file or the complete new file, never a mix, at every instant.
- Every step goes through `FileSystem`, so tests can inject a failure at any step.
- A failed write removes its temp file and re-raises; it never touches the old file.
- `mode` (e.g. 0o600 for a file holding secrets) is the temp file's mode from its creation, so the content is
  never readable by others, not even before the rename.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path


class FileSystem:
    """The OS calls that atomic writes make; tests substitute one that fails on demand."""

    def open_write(self, path: Path, mode: int | None = None):
        if mode is None:
            return open(path, "xb")
        return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "wb")

    def write(self, handle, data: bytes) -> None:
        handle.write(data)

    def fsync(self, handle) -> None:
        handle.flush()
        os.fsync(handle.fileno())

    def rename(self, src: Path, dst: Path) -> None:
        os.replace(src, dst)

    def fsync_dir(self, directory: Path) -> None:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def remove(self, path: Path) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


DEFAULT_FS = FileSystem()


def atomic_write(path, data: bytes, *, fs: FileSystem = DEFAULT_FS, tmp_suffix: str | None = None,
                 mode: int | None = None) -> None:
    """Write `data` to `path` atomically and durably (created with `mode` when given, before any byte)."""
    path = Path(path)
    tmp = path.with_name(path.name + (tmp_suffix or f".{secrets.token_hex(4)}.tmp"))
    if tmp_suffix:
        fs.remove(tmp)  # a fixed-name temp file left by an earlier crash is garbage
    _write_synced(tmp, data, fs, mode)
    try:
        fs.rename(tmp, path)
    except BaseException:
        fs.remove(tmp)
        raise
    fs.fsync_dir(path.parent)


def write_temp(tmp, data: bytes, *, fs: FileSystem = DEFAULT_FS) -> None:
    """Write `data` to the temp file `tmp` (replacing one an earlier crash left) and fsync it: the first half
    of atomic_write, for a caller that runs it in another thread and renames the file later."""
    fs.remove(tmp)
    _write_synced(Path(tmp), data, fs)


def _write_synced(tmp: Path, data: bytes, fs: FileSystem, mode: int | None = None) -> None:
    try:
        with (fs.open_write(tmp) if mode is None else fs.open_write(tmp, mode)) as handle:
            fs.write(handle, data)
            fs.fsync(handle)
    except BaseException:
        fs.remove(tmp)
        raise


def atomic_write_text(path, text: str, *, fs: FileSystem = DEFAULT_FS, tmp_suffix: str | None = None,
                      mode: int | None = None) -> None:
    """Write UTF-8 `text` to `path` atomically and durably (see atomic_write for `mode`)."""
    atomic_write(path, text.encode("utf-8"), fs=fs, tmp_suffix=tmp_suffix, mode=mode)
