"""Atomic writes leave the old file or the new file, never a mix, whatever step fails."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kraftsman.storage.log.atomic import FileSystem, atomic_write

STEPS = ["open_write", "write", "fsync", "rename", "fsync_dir"]


class Crash(Exception):
    pass


class FailingFileSystem(FileSystem):
    """Fail at the named step, like a crash or an I/O error there."""

    def __init__(self, step: str):
        self.step = step

    def __getattribute__(self, name):
        if name in STEPS and name == object.__getattribute__(self, "step"):
            def fail(*args, **kwargs):
                raise Crash(name)
            return fail
        return object.__getattribute__(self, name)


@pytest.mark.parametrize("step", STEPS)
def test_failure_at_each_step_keeps_a_whole_file(tmp_path, step):
    target = tmp_path / "meta.properties"
    target.write_bytes(b"old contents")
    with pytest.raises(Crash):
        atomic_write(target, b"new contents", fs=FailingFileSystem(step))
    assert target.read_bytes() in (b"old contents", b"new contents")
    if step != "fsync_dir":
        assert target.read_bytes() == b"old contents"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "meta.properties"]
    assert leftovers == []


def test_write_creates_and_replaces(tmp_path):
    target = tmp_path / "f"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"


WRITER = """
import sys
from kraftsman.storage.log.atomic import atomic_write
path = sys.argv[1]
i = 0
while True:
    i += 1
    atomic_write(path, (f"{i:08d}" * 6250).encode())
"""


def test_killed_writer_never_leaves_a_mix(tmp_path):
    """SIGKILL a process that rewrites a file in a loop; every survivor file is one whole version."""
    target = tmp_path / "state"
    atomic_write(target, b"0" * 50000)
    for delay in (0.05, 0.12, 0.2, 0.31):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        data = target.read_bytes()
        assert len(data) == 50000
        assert data == data[:8] * 6250
    for leftover in tmp_path.iterdir():
        if leftover.name != "state":
            os.unlink(leftover)


def test_a_private_file_is_private_before_its_first_byte(tmp_path):
    """With mode=0o600 the temp file is created private: no moment exists where others could open it."""
    import os

    from kraftsman.storage.log.atomic import FileSystem, atomic_write_text

    seen = []

    class Watching(FileSystem):
        def write(self, handle, data: bytes) -> None:
            seen.append(os.fstat(handle.fileno()).st_mode & 0o777)
            super().write(handle, data)

    old_umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "config.yaml", "password: x\n", fs=Watching(), mode=0o600)
        atomic_write_text(tmp_path / "plain.txt", "x\n", fs=Watching())
    finally:
        os.umask(old_umask)
    assert seen == [0o600, 0o644]
    assert (tmp_path / "config.yaml").stat().st_mode & 0o777 == 0o600
