"""Turn the command's arguments (files, directories, globs, URIs) into decode tasks.

Rules:
- Local paths become tasks: (path, source as given, byte range, log directory identity).
  A directory contributes every .log and .checkpoint file below it; a glob what it matches.
- URIs (hdfs://, s3a://, abfss://, gs://, and file:// too) are returned as they are: Spark lists
  them and its executors read the files.
- Segments larger than `split_bytes` are cut into byte ranges on batch boundaries, found by walking the
  batch headers (12 bytes each); a header that cannot be right ends the walk and the last range runs
  to the end of the file, where the decoder reports it.
- Nothing is decoded here and nothing raises for a bad path: a path that cannot be read is still a
  task, and its decode reports it in the `errors` table.
"""
from __future__ import annotations

import glob
import os
import re
import struct
from pathlib import Path
from typing import NamedTuple

from .decode import file_type_of, identity

DEFAULT_SPLIT_BYTES = 128 << 20
_HEAD = struct.Struct(">qi")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class Task(NamedTuple):
    """One unit of decoding: a local file or a batch-aligned byte range of it."""

    path: str
    source: str
    start: int = 0
    end: int | None = None
    cluster_id: str | None = None
    node_id: int | None = None
    size: int = 0


def is_remote(arg: str) -> bool:
    """Tell whether an output path lies outside this machine's file system (any scheme but file:)."""
    return bool(_SCHEME.match(arg)) and not arg.startswith("file:")


def is_uri(arg: str) -> bool:
    """Tell whether an input argument is a URI that Spark lists and reads (file:// included)."""
    return bool(_SCHEME.match(arg))


def local_path(arg: str) -> str:
    """Return the local path of a file: URI or plain path."""
    if arg.startswith("file://"):
        return arg[len("file://"):]
    return arg[len("file:"):] if arg.startswith("file:") else arg


def expand(args: list[str]) -> tuple[list[str], list[str]]:
    """Return (local files, remote URIs) named by the arguments, local files once each, in order."""
    files, remote, seen = [], [], set()
    for arg in args:
        if is_uri(arg):
            remote.append(arg)
            continue
        for path in _local_files(arg):
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                files.append(path)
    return files, remote


def _local_files(path: str) -> list[str]:
    if glob.has_magic(path):
        matches = sorted(glob.glob(path, recursive=True))
        return [f for m in matches for f in (_metadata_files(m) if os.path.isdir(m) else [m])] or [path]
    return _metadata_files(path) if os.path.isdir(path) else [path]


def _metadata_files(directory: str) -> list[str]:
    found = [str(p) for p in Path(directory).rglob("*") if p.is_file() and file_type_of(p.name)]
    return sorted(found)


def plan(files: list[str], split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[Task]:
    """Return the tasks for local files, largest first (big ranges start early, small ones fill in)."""
    tasks = []
    for path in files:
        cluster_id, node_id = identity(path)
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        ranges = batch_ranges(path, split_bytes) if size > split_bytes and path.endswith(".log") else [(0, None)]
        for start, end in ranges:
            length = (size if end is None else end) - start
            tasks.append(Task(path, path, start, end, cluster_id, node_id, length))
    return sorted(tasks, key=lambda t: -t.size)


def batch_ranges(path: str, split_bytes: int) -> list[tuple[int, int | None]]:
    """Return [(start, end)] byte ranges of about `split_bytes` each, cut between batches (last end None)."""
    size = os.path.getsize(path)
    cuts, pos, next_cut = [0], 0, split_bytes
    with open(path, "rb") as f:
        while pos + _HEAD.size <= size:
            f.seek(pos)
            _, length = _HEAD.unpack(f.read(_HEAD.size))
            if length < 14 or pos + _HEAD.size + length > size:
                break
            pos += _HEAD.size + length
            if pos >= next_cut and pos < size:
                cuts.append(pos)
                next_cut = pos + split_bytes
    return list(zip(cuts, cuts[1:] + [None]))


def balance(tasks: list[Task], slots: int) -> list[list[Task]]:
    """Spread tasks over at most `slots` groups of about equal bytes (largest first, lightest group)."""
    groups: list[list[Task]] = [[] for _ in range(max(1, min(slots, len(tasks))))]
    loads = [0] * len(groups)
    for task in sorted(tasks, key=lambda t: -t.size):
        i = loads.index(min(loads))
        groups[i].append(task)
        loads[i] += task.size
    return [g for g in groups if g]
