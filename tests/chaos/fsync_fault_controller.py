"""Run kafka-controller with two chaos hooks on os.fsync; the controller itself is unchanged.

- While the file named by KRAFTSMAN_CHAOS_FSYNC_TRIGGER exists, every os.fsync raises EIO (a failing disk).
- When KRAFTSMAN_CHAOS_FSYNC_JOURNAL names a file, each fsync of a `.log` segment appends one line
  `<path>\t<inode>\t<size before the fsync>\t<start>` to it once it returned: those bytes are durable. `start`
  (the system's monotonic clock, so it also orders the fsyncs of a restarted node after its earlier runs') orders
  the fsyncs by when they took the size (under one lock), not by when they returned: the leader's
  background flush and a roll's own fsync of the same segment overlap, and the one that took the smaller size
  may return last. The harness reads the journal after a SIGKILL and cuts every segment back to the size of its
  latest-started fsync that returned: what a power loss would have kept.
- KRAFTSMAN_CHAOS_FSYNC_DELAY_MS makes every fsync that much slower (a slow disk: the window in which appended
  bytes are not yet durable grows, so a power loss finds some).

Usage: python fsync_fault_controller.py --config server.properties   (same arguments as kafka-controller)
"""
import errno
import os
import threading
import time

_TRIGGER = os.environ.get("KRAFTSMAN_CHAOS_FSYNC_TRIGGER", "")
_JOURNAL = os.environ.get("KRAFTSMAN_CHAOS_FSYNC_JOURNAL", "")
_DELAY_S = int(os.environ.get("KRAFTSMAN_CHAOS_FSYNC_DELAY_MS", "0") or 0) / 1000
_journal_fd = None
_real_fsync = os.fsync
_start_lock = threading.Lock()


def _fsync(fd):
    global _journal_fd
    if _TRIGGER and os.path.exists(_TRIGGER):
        raise OSError(errno.EIO, "Input/output error (chaos: injected fsync failure)")
    line = None
    if _JOURNAL:
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            path = ""
        if path.endswith(".log"):
            with _start_lock:           # the size and its place in the start order, taken together
                st, start = os.fstat(fd), time.monotonic_ns()
            line = f"{path}\t{st.st_ino}\t{st.st_size}\t{start}\n".encode()
    if _DELAY_S:
        time.sleep(_DELAY_S)
    _real_fsync(fd)
    if line is not None:
        if _journal_fd is None:
            _journal_fd = os.open(_JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(_journal_fd, line)


os.fsync = _fsync

if __name__ == "__main__":
    from kraftsman.cli.controller.tool import main

    main()
