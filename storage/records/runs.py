"""Runs of metadata records of one value layout in a batch, as the raft writes them: what the fast writers
(kafka-dump-log's text and JSON Lines) render a run at a time.

A controller writes the records of one request together (a topic's partitions), so they share their size and
their value's layout (storage.protocol.layout). metadata_runs() splits the leading raft-shaped records of a batch
into runs of one layout: one regular expression per (record head, layout) checks a whole run, whose records
repeat the first one's framing and the layout's structural bytes, and the offset deltas are compared as strided
slices; no Python runs per record.

Rules:
- A record is raft-shaped as batch.raft_value_at says (attributes 0, timestamp delta 0, offset delta = its index,
  null key, no headers) and its value is a metadata frame of version 1 with a one-byte api key and version.
- Runs cover the leading such records, at most 8192 (two-byte offset deltas), in order; a record whose value has
  no layout is a run of one with layout None. The batch's last record belongs to a run only when it ends exactly
  at the end of the batch (records() reports bytes after it).
- A compressed batch has no runs.
"""
from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ..protocol.layout import Layout, Layouts
from .batch import RECORD_BATCH_OVERHEAD, offset_deltas_are_indexes, raft_value_at
from .metadata import METADATA_RECORD_TYPES

MAX_RECORDS = 8192
FRAME_HEAD = 3


class Run(NamedTuple):
    """Records [index, index + count) of a batch, from `pos` to `stop` of its buffer, `head` bytes before each
    value's body; all of `layout`, or one record whose value has none (layout None)."""

    index: int
    count: int
    pos: int
    stop: int
    head: int
    api_key: int
    version: int
    layout: Layout | None

    @property
    def size(self) -> int:
        """Return the size of one record of the run."""
        return (self.stop - self.pos) // self.count


def metadata_runs(batch, layouts: Layouts) -> list[Run]:
    """Return the runs of the leading raft-shaped metadata records of `batch` (see above)."""
    runs: list[Run] = []
    if batch.compression:
        return runs
    data, end, pos = batch.buffer, len(batch.buffer), RECORD_BATCH_OVERHEAD
    count, i = min(batch.records_count, MAX_RECORDS), 0
    last = batch.records_count - 1
    while i < count:
        try:
            at, stop = raft_value_at(data, pos, i)
        except IndexError:
            break
        if at is None or stop > end or (i == last and stop != end):
            break
        api_key, version = (data[at + 1], data[at + 2]) if stop - at > FRAME_HEAD else (-1, -1)
        name = METADATA_RECORD_TYPES.get(api_key) if data[at] == 1 and version < 128 else None
        layout = layouts.of(name, version, data, at + FRAME_HEAD, stop - 1) if name and api_key < 128 else None
        same = 1 if layout is None else _same_layout(data, pos, stop - pos, at + FRAME_HEAD - pos, layout, i,
                                                     count, end, last)
        runs.append(Run(i, same, pos, pos + same * (stop - pos), at + FRAME_HEAD - pos, api_key, version, layout))
        i += same
        pos += same * (stop - pos)
    return runs


def _same_layout(data, pos: int, size: int, head: int, layout: Layout, index: int, count: int, end: int,
                 last: int) -> int:
    """Return how many records from `pos` (the first checked already) repeat its framing and its layout."""
    limit = min(count, 64 if index < 64 else MAX_RECORDS) - index
    same = min(limit, (end - pos) // size)
    if same <= 1:
        return 1
    delta_at = 2 + (1 if data[pos] < 128 else 2)
    width = 1 if index < 64 else 2
    pattern = _run_pattern(data[pos:pos + delta_at], width, data[pos + delta_at + width:pos + head], layout)
    match = pattern.match(data, pos, pos + same * size)
    same = 0 if match is None else (match.end() - pos) // size
    if index + same - 1 == last and pos + same * size != end:
        same -= 1
    if same <= 1 or not offset_deltas_are_indexes(data, pos, size, delta_at, index, same):
        return 1
    return same


@functools.lru_cache(maxsize=512)
def _run_pattern(before_delta: bytes, width: int, after_delta: bytes, layout: Layout):
    """Return the pattern of a run of records: the framing before the offset delta, any delta of its width, the
    framing after it up to the value's body, the layout, a zero headers count; repeated."""
    one = re.escape(before_delta) + b"." * width + re.escape(after_delta) + layout.pattern + b"\x00"
    return re.compile(b"(?s)(?:" + one + b")*")
