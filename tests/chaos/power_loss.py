"""PowerLossDisk: what one directory would hold after a power cut, keeping only what was made durable.

Model (POSIX's promise, no more):
- a file's content survives as it was at its last fsync (a file never fsynced survives empty), plus,
  when it only grew since, any prefix of the bytes written after that fsync (pages the kernel happened
  to write back: a torn tail);
- a directory's entries (name -> inode) survive as they were at the directory's last fsync, so a
  create, rename or unlink not followed by a directory fsync may be undone.
os.fsync is replaced while the disk is attached (by the test's monkeypatch); the real fsync is not
called (nothing here needs it). Every file the directory ever held stays open (a held descriptor keeps
an unlinked inode's number from being reused), so an undone unlink can bring its old content back.
"""
from __future__ import annotations

import os
import random
import stat
from pathlib import Path


class PowerLossDisk:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.content: dict[int, bytes] = {}    # inode -> bytes at its last fsync
        self.held: dict[int, int] = {}         # inode -> a read descriptor we keep open
        self.entries: dict[str, int] = {}      # name -> inode at the directory's last fsync
        self.fsyncs = 0
        self.on_fsync = None                   # called before each fsync takes effect (crash points)
        self._sync_directory()
        for inode in self.entries.values():
            self.content[inode] = self._current(inode)

    def close(self) -> None:
        for fd in self.held.values():
            os.close(fd)
        self.held.clear()

    # ------------------------------------------------------------ tracking
    def _hold(self, path: Path) -> int | None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        inode = os.fstat(fd).st_ino
        if inode in self.held:
            os.close(fd)
        else:
            self.held[inode] = fd
        return inode

    def _current(self, inode: int) -> bytes:
        fd = self.held[inode]
        return os.pread(fd, os.fstat(fd).st_size, 0)

    def _sync_directory(self) -> None:
        entries = {}
        for name in os.listdir(self.directory):
            path = self.directory / name
            if path.is_file():
                inode = self._hold(path)
                if inode is not None:
                    entries[name] = inode
        self.entries = entries

    def fsync(self, fd: int) -> None:
        """The replacement of os.fsync."""
        if self.on_fsync is not None:
            self.on_fsync()
        self.fsyncs += 1
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            if os.path.samefile(os.readlink(f"/proc/self/fd/{fd}"), self.directory):
                self._sync_directory()
            return
        path = Path(os.readlink(f"/proc/self/fd/{fd}").removesuffix(" (deleted)"))
        if path.parent != self.directory:
            return
        if st.st_ino not in self.held:
            self.held[st.st_ino] = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
        self.content[st.st_ino] = self._current(st.st_ino)

    # ------------------------------------------------------------ the crash
    def crash_image(self, target: Path, rng: random.Random | None = None, choose=None) -> dict[str, bytes]:
        """Write into `target` what the directory would hold after a power cut now; return it. With `rng`
        (or `choose(lo, hi)`), a file that only grew since its fsync keeps a prefix of the new bytes."""
        if rng is not None and choose is None:
            choose = rng.randint
        target.mkdir(parents=True, exist_ok=False)
        files = {}
        for name, inode in self.entries.items():
            data = self.content.get(inode, b"")
            current = self._current(inode)
            if choose is not None and len(current) > len(data) and current.startswith(data):
                data = current[:choose(len(data), len(current))]  # a torn tail of unsynced appends
            (target / name).write_bytes(data)
            files[name] = data
        return files
