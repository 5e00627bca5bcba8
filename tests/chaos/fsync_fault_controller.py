"""Run kafka-controller with an fsync failure hook: while the file named by KRAFTSMAN_CHAOS_FSYNC_TRIGGER exists,
every os.fsync raises EIO (a failing disk). Used by the chaos harness only; the controller itself is unchanged.

Usage: python fsync_fault_controller.py --config server.properties   (same arguments as kafka-controller)
"""
import errno
import os

_TRIGGER = os.environ.get("KRAFTSMAN_CHAOS_FSYNC_TRIGGER", "")
_real_fsync = os.fsync


def _fsync(fd):
    if _TRIGGER and os.path.exists(_TRIGGER):
        raise OSError(errno.EIO, "Input/output error (chaos: injected fsync failure)")
    return _real_fsync(fd)


os.fsync = _fsync

if __name__ == "__main__":
    from kraftsman.cli.controller import main

    main()
