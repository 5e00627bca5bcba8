"""Kafka's compact JSON for a run of records of one value layout, one line per record, compiled per layout.

json_run_writer(layout, head) returns fn(data, pos, stop, first_offset, before, middle, after) -> [line]: the records
from `pos` to `stop` in `data` are `head` bytes, a value body of `layout`, one byte (the raft's record shape, whose
size the layout fixes); each line is f"{before}{offset}{middle}{JSON of the value}{after}". One struct format reads
the whole run (iter_unpack) and one f-string per record builds its line, so the per-record Python work is a tuple
and a format: kafka-dump-log's text and JSON Lines are written this way.

Rules:
- The JSON is exactly render.fused_json_writer's (and so codec.json_renderer's): fields in declaration order,
  tagged fields left out when at their default, unknown tags never shown; tests compare the two on every record
  of the real fixtures.
- Whether a tagged array, blob or null is shown is decided by the layout (its count is structural); a tagged
  number is compared with its default per record.
- A writer raises on what it cannot render (a string that is not UTF-8): the caller renders that run record by
  record, which reports it in its own words.
"""
from __future__ import annotations

import functools
import struct

from .codegen import INT_TYPES, default_literal, parse_int
from .layout import FIXED, Layout, Slot
from .render import array_memo, uuid_array_memo, writer_helpers
from .schema import json_name, load, snake_name

_SAFE_CODE = {"?": "Z"}


def _memo_name(t: str) -> str:
    return "u" if t == "uuid" else _SAFE_CODE.get(FIXED[t][0], FIXED[t][0])


def _namespace() -> dict:
    """Return the names generated run writers see: render's helpers and one memo per array element type."""
    ns = writer_helpers()
    for t in FIXED:
        ns["_M" + _memo_name(t)], ns["_T" + _memo_name(t)] = array_memo(FIXED[t][0])
    ns["_Mu"], ns["_Tu"] = uuid_array_memo()
    ns["_unpack"] = struct.Struct
    return ns


_NS = _namespace()


def _value_text(slot: Slot, var: str) -> tuple[bool, str]:
    """Return (constant, text): the JSON of a slot as constant text, or as a Python expression over `var`."""
    kind, t = slot.kind, slot.type
    if kind == "null":
        return True, "null"
    if kind == "array":
        if not slot.count:
            return True, "[]"
        code = _memo_name(t)
        return False, f"_M{code}.get({var}) or _T{code}({var}, {slot.count})"
    if kind == "blob":
        if not slot.count:
            return True, '""'
        return False, f"_js({var}.decode('utf-8'))" if t == "string" else f"_qb64({var})"
    if t in INT_TYPES:
        return False, var
    return False, {"bool": f"_jb({var})", "float64": f"_jd({var})", "uuid": f"(_U.get({var}) or _qu({var}))"}[t]


def _shown(slot: Slot) -> bool | None:
    """Tell whether a tagged slot is shown whatever its bytes (True), never (False), or per value (None)."""
    f, kind = slot.field, slot.kind
    default = default_literal(f)
    if kind == "null":
        return default != "None"
    if kind == "array":
        return default == "None" or slot.count > 0
    if kind == "blob":
        if default == "None" or default in ("''", "b''"):
            return default == "None" or slot.count > 0
        return None
    return None


def _tag_helper(ns: dict, slot: Slot, index: int) -> str:
    """Define `_tN(value) -> ''` or `',"name":text'` for a tagged slot shown per value; return its name."""
    f, t = slot.field, slot.type
    name = f',"{json_name(f.name)}":'
    if slot.kind == "blob":
        default = default_literal(f)[1:-1]
        show = (lambda v: name + ns["_js"](v.decode("utf-8"))) if t == "string" else (lambda v: name + ns["_qb64"](v))
        ns[f"_t{index}"] = lambda v, d=default, show=show: "" if v.decode("utf-8", "replace") == d else show(v)
    elif t in INT_TYPES:
        default = parse_int(f.default) if f.default else 0
        ns[f"_t{index}"] = lambda v, d=default: "" if v == d else name + str(v)
    elif t == "uuid":
        ns[f"_t{index}"] = lambda v: "" if v == bytes(16) else name + ns["quoted"](v)
    elif t == "bool":
        default = (f.default or "").lower() == "true"
        ns[f"_t{index}"] = lambda v, d=default: "" if bool(v) == d else name + ns["_jb"](v)
    else:
        default = float(f.default) if f.default else 0.0
        ns[f"_t{index}"] = lambda v, d=default: "" if v == d else name + ns["_jd"](v)
    return f"_t{index}"


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _pieces(layout: Layout, names: dict, ns: dict) -> list[tuple[bool, str]]:
    """Return (always there, f-string fragment) per shown field, in declaration order, each with its comma."""
    by_field = {s.field.name: s for s in layout.slots if s.field is not None}
    pieces = []
    for f in load(layout.name).fields:
        slot = by_field.get(f.name)
        if slot is None or layout.version not in f.versions:
            continue
        constant, text = _value_text(slot, names.get(id(slot), ""))
        value = _escape(text) if constant else "{" + text + "}"
        if not slot.tagged:
            pieces.append((True, _escape(f',"{json_name(f.name)}":') + value))
            continue
        shown = _shown(slot)
        if shown is None:
            pieces.append((False, "{" + _tag_helper(ns, slot, len(pieces)) + f"({names[id(slot)]})" + "}"))
        elif shown:
            pieces.append((False, _escape(f',"{json_name(f.name)}":') + value))
    return pieces


@functools.lru_cache(maxsize=256)
def json_run_writer(layout: Layout, head: int, numbered: bool = True):
    """Return the run writer of records of `head` bytes, a `layout` body and one trailing byte (see above); when not
    `numbered`, the lines leave out `before` and the offset: f"{middle}{JSON of the value}{after}"."""
    ns = dict(_NS)
    ns["quoted"] = ns["_qu"]
    items = layout.items
    names = {id(slot): f"a{i}_{snake_name(slot.field.name)}" for i, slot in enumerate(items)}
    pieces = _pieces(layout, names, ns)
    body = "".join(text for _, text in pieces)
    args = "".join(names[id(s)] + ", " for s in items)
    source = ""
    if not pieces:
        json = "{{}}"
    elif pieces[0][0]:
        json = "{{" + body[1:] + "}}"
    else:  # the first field shown may be absent: its comma is cut per record
        json = "{_object(" + args + ")}"
        source = f"def _object({args}):\n    s = f\"\"\"{body}\"\"\"\n    return '{{' + s[1:] + '}}'\n"
    ns["_S"] = struct.Struct(f">{head}x{layout.codes}1x")
    targets = "(" + args + ")"
    source += (f"def _run(data, pos, stop, first, before, middle, after):\n"
              f"    return [f\"\"\"{'{before}{o}' if numbered else ''}{{middle}}{json}{{after}}\"\"\"\n"
              f"            for o, {targets} in zip(range(first, first + (stop - pos) // _S.size),"
              f" _S.iter_unpack(data[pos:stop]))]\n")
    exec(compile(source, f"<kraftsman json run {layout.name} v{layout.version}>", "exec"), ns)
    return ns["_run"]
