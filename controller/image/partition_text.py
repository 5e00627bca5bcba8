"""PartitionRegistration's text (Kafka's toString) straight from raw PartitionRecord values, compiled per value
layout: what the shell's `tree` prints for a million partitions without building one registration object.

lines(entries, before, middle, after) -> {partition name: f"{before}{name}{middle}{text}{after}"} for a topic's
partition entries (raw values, LazyPartitions or registrations), the name being the partition id as text;
chunk_lines(chunks, ...) does the same for a topic kept in its file, reading each chunk's batch once and
writing its runs of one layout with one struct format (storage.records.runs).

Rules:
- The text is exactly str(materialize(entry)) (tests compare them on every real snapshot and on tagged,
  version 0 and ELR values); an entry with changes pending, a value without a layout or one the compiled writer
  cannot read goes through materialize().
- Nothing is kept but the compiled writers and the memos of replica and directory lists (bounded).
"""
from __future__ import annotations

import functools
import struct

from kraftsman.storage.protocol.layout import Layout, Layouts
from kraftsman.storage.protocol.uuids import bounded_memo, uuid_str
from kraftsman.storage.records.runs import FRAME_HEAD, metadata_runs

from .partitions import LEADER_RECOVERY_STATES, UNASSIGNED, materialize

PARTITION_RECORD = 3
_MEMO_LIMIT = 1 << 16
_UNASSIGNED_TEXT = uuid_str(UNASSIGNED)


def _int_list(raw: bytes) -> str:
    return "[" + ", ".join(map(str, struct.unpack(f">{len(raw) // 4}i", raw))) + "]"


def _uuid_list(raw: bytes) -> str:
    return "[" + ", ".join(uuid_str(raw[i:i + 16]) for i in range(0, len(raw), 16)) + "]"


_ints, _INTS = bounded_memo(_int_list, _MEMO_LIMIT)
_uuids, _UUIDS = bounded_memo(_uuid_list, _MEMO_LIMIT)
_layouts = Layouts()


def _recovery(state: int) -> str:
    return LEADER_RECOVERY_STATES.get(state, str(state))


_NS = {"_I": _INTS, "_i": _ints, "_D": _UUIDS, "_d": _uuids, "_lrs": _recovery}


def _pieces(layout: Layout, names: dict) -> dict:
    """Return field name -> f-string fragment of its text, for the fields of the layout."""
    slots = {s.field.name: s for s in layout.slots if s.field is not None}
    replicas = slots["Replicas"]
    out = {}
    for name in ("Replicas", "Isr", "RemovingReplicas", "AddingReplicas", "EligibleLeaderReplicas", "LastKnownElr"):
        slot = slots.get(name)
        if slot is None or slot.kind == "null" or not slot.count:
            out[name] = "[]"
        else:
            out[name] = f"{{_I.get({names[name]}) or _i({names[name]})}}"
    directories = slots.get("Directories")
    if directories is None or directories.kind == "null" or not directories.count:
        out["Directories"] = "[" + ", ".join([_UNASSIGNED_TEXT] * replicas.count) + "]"
    else:
        out["Directories"] = f"{{_D.get({names['Directories']}) or _d({names['Directories']})}}"
    for name in ("Leader", "LeaderEpoch", "PartitionEpoch"):
        out[name] = f"{{{names[name]}}}"
    lrs = names.get("LeaderRecoveryState")
    out["LeaderRecoveryState"] = LEADER_RECOVERY_STATES[0] if lrs is None else f"{{_lrs({lrs})}}"
    return out


def _text_source(layout: Layout, names: dict) -> str:
    p = _pieces(layout, names)
    return (f"PartitionRegistration(replicas={p['Replicas']}, directories={p['Directories']}, isr={p['Isr']}, "
            f"removingReplicas={p['RemovingReplicas']}, addingReplicas={p['AddingReplicas']}, "
            f"elr={p['EligibleLeaderReplicas']}, lastKnownElr={p['LastKnownElr']}, leader={p['Leader']}, "
            f"leaderRecoveryState={p['LeaderRecoveryState']}, leaderEpoch={p['LeaderEpoch']}, "
            f"partitionEpoch={p['PartitionEpoch']})")


@functools.lru_cache(maxsize=256)
def _writers(layout: Layout, head: int):
    """Return (one(value, before, middle, after) -> (name, line), run(data, pos, stop, before, middle, after) ->
    [(name, line)]) of a layout: `one` reads a value (frame header included), `run` records of `head` bytes, the
    value's body, one byte; a line is f"{before}{name}{middle}{text}{after}"."""
    items = layout.items
    names = {s.field.name: f"a{i}" for i, s in enumerate(items)}
    targets = "(" + "".join(f"a{i}, " for i in range(len(items))) + ")"
    text = _text_source(layout, names)
    ns = dict(_NS, _V=struct.Struct(f">{FRAME_HEAD}x{layout.codes}"), _R=struct.Struct(f">{head}x{layout.codes}1x"))
    pid = names["PartitionId"]
    pair = f"f\"{{{pid}}}\", f\"\"\"{{before}}{{{pid}}}{{middle}}{text}{{after}}\"\"\""
    source = (f"def _one(value, before, middle, after):\n    {targets} = _V.unpack(value)\n    return {pair}\n"
              f"def _run(data, pos, stop, before, middle, after):\n"
              f"    return [({pair}) for {targets} in _R.iter_unpack(data[pos:stop])]\n")
    exec(compile(source, f"<kraftsman partition text v{layout.version}>", "exec"), ns)
    return ns["_one"], ns["_run"]


def text(entry) -> str:
    """Return the text of one partition entry (a raw PartitionRecord value, a LazyPartition or a registration)."""
    name, line = _line(entry, -1, "", "", "")
    return line[len(name):]


def _line(entry, partition_id: int, before: str, middle: str, after: str) -> tuple[str, str]:
    if type(entry) is bytes and len(entry) > FRAME_HEAD and entry[0] == 1 and entry[1] == PARTITION_RECORD \
            and entry[2] < 128:
        layout = _layouts.of("PartitionRecord", entry[2], entry, FRAME_HEAD, len(entry))
        if layout is not None:
            try:
                return _writers(layout, 0)[0](entry, before, middle, after)
            except (struct.error, KeyError, ValueError):
                pass
    if partition_id == -1 and type(entry) is bytes:
        partition_id = struct.unpack_from(">i", entry, FRAME_HEAD)[0]
    return f"{partition_id}", f"{before}{partition_id}{middle}{materialize(entry)}{after}"


def lines(entries: dict, before: str, middle: str, after: str) -> dict:
    """Return {partition name: line} of a topic's partition entries (see above)."""
    return dict(_line(entry, partition_id, before, middle, after) for partition_id, entry in entries.items())


def chunk_lines(chunks, before: str, middle: str, after: str) -> dict:
    """Return {partition name: line} of the partition records a topic keeps in its file, later records winning."""
    found: dict = {}
    for chunk in chunks:
        batch = chunk.batch()
        done = chunk.start
        for run in metadata_runs(batch, _layouts):
            first, last = max(run.index, chunk.start), min(run.index + run.count, chunk.stop)
            if first >= last:
                continue
            if first != done or run.layout is None or run.api_key != PARTITION_RECORD:
                break
            size = run.size
            found.update(_writers(run.layout, run.head)[1](batch.buffer, run.pos + (first - run.index) * size,
                                                           run.pos + (last - run.index) * size, before, middle, after))
            done = last
        if done < chunk.stop:
            rest = chunk.values_of(batch)[done - chunk.start:]
            found.update(_line(value, -1, before, middle, after) for value in rest)
    return found
