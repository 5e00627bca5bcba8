"""What the pipeline checks before it starts Spark (tens of seconds): inputs that name nothing, outputs that
cannot be written.

Rules:
- A local PATH (not a URI) that does not exist, or a glob that matches nothing, is a bad argument (exit 64),
  as is a run with nothing to decode at all (no .log or .checkpoint below any PATH, no URI). URIs are
  Spark's to list: a URI that matches nothing is still an `errors` row.
- The report file and a local output folder must be writable where they will be written: the nearest
  folder that exists on the way must be a writable folder (and the report not a folder); a report right
  in the output folder needs only the folder's check. Nothing is created here. Their failures keep the
  texts the job itself would give later (exit 1).
- Pure checks on the local file system: no Spark, no pyspark import.
"""
from __future__ import annotations

import errno
import glob
import os

from kraftsman.cli.common.status import ExitStatus, ToolError

from .inputs import is_remote, is_uri, local_path


def check_inputs(paths: list[str], files: list[str], remote: list[str]) -> None:
    """Raise a usage ToolError for a local PATH that names nothing, or when nothing is left to decode."""
    for path in paths:
        if not is_uri(path) and not os.path.lexists(path) and not (glob.has_magic(path) and glob.glob(path)):
            what = "matches no file" if glob.has_magic(path) else "no such file or directory"
            raise ToolError(f"{path}: {what}", ExitStatus.USAGE)
    if not files and not remote:
        raise ToolError(f"no .log segment or .checkpoint snapshot below {' '.join(paths)}", ExitStatus.USAGE)


def check_report(path: str, output_dir: str) -> None:
    """Raise the report's write error now if the file could not be written later (a report directly in the
    output folder is checked with the folder: the job creates it first)."""
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(local_path(output_dir)):
        return
    why = _unwritable(path, folder=False)
    if why:
        raise ToolError(f"cannot write the report to {path}: {why}")


def check_output_dir(path: str) -> None:
    """Raise the tables' write error now if a local output folder could not be written later."""
    if is_remote(path):
        return
    why = _unwritable(local_path(path), folder=True)
    if why:
        raise ToolError(f"cannot write the tables to {path}: {why}")


def _unwritable(path: str, folder: bool) -> str | None:
    """Return why `path` (a file, or a folder when `folder`) cannot be created or replaced, or None."""
    target = os.path.abspath(path)
    if os.path.exists(target):
        if os.path.isdir(target) != folder:
            return os.strerror(errno.EISDIR if not folder else errno.ENOTDIR)
        return None if os.access(target, os.W_OK) else os.strerror(errno.EACCES)
    parent = os.path.dirname(target)
    while not os.path.exists(parent):
        if not folder:   # a report is written into an existing folder: nothing creates its parents
            return os.strerror(errno.ENOENT)
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return os.strerror(errno.ENOTDIR)
    return None if os.access(parent, os.W_OK | os.X_OK) else os.strerror(errno.EACCES)
