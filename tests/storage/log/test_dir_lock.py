"""The log directory lock: exclusive between processes, released with the handle."""
from __future__ import annotations

import subprocess
import sys

import pytest

from kraftsman.storage.log.dir_lock import DirectoryLockedError, lock_directory

TRY = ("import sys; from kraftsman.storage.log.dir_lock import lock_directory, DirectoryLockedError\n"
       "try:\n    lock_directory(sys.argv[1])\nexcept DirectoryLockedError as e:\n    print(e); sys.exit(3)\n")


def _other_process(directory) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", TRY, str(directory)], capture_output=True, text=True, timeout=30)


def test_second_process_is_refused_with_kafkas_message(tmp_path):
    handle = lock_directory(tmp_path)
    try:
        result = _other_process(tmp_path)
        assert result.returncode == 3
        assert result.stdout.strip() == (f"Failed to acquire lock on file .lock in {tmp_path}. A Kafka instance in "
                                         "another process or thread is using this directory.")
    finally:
        handle.close()
    assert _other_process(tmp_path).returncode == 0


def test_missing_directory_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        lock_directory(tmp_path / "absent")
    assert not isinstance(DirectoryLockedError("x"), OSError)


def test_lock_if_present_takes_only_an_existing_lock(tmp_path):
    from kraftsman.storage.log.dir_lock import lock_if_present

    assert lock_if_present(tmp_path) is None and not (tmp_path / ".lock").exists()   # nothing created
    (tmp_path / ".lock").touch()
    handle = lock_if_present(tmp_path)
    try:
        assert _other_process(tmp_path).returncode == 3          # held exclusively while the reader runs
    finally:
        handle.close()


def test_lock_if_present_refuses_a_running_node(tmp_path):
    from kraftsman.storage.log.dir_lock import lock_if_present

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from kraftsman.storage.log.dir_lock import "
                               "lock_directory; h = lock_directory(sys.argv[1]); print('held', flush=True); "
                               "time.sleep(30)", str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DirectoryLockedError):
            lock_if_present(tmp_path)
    finally:
        holder.kill()
        holder.wait()
