"""Fast writers of Kafka's compact JSON (JsonConverter), generated from the specs once per (message, version).

Two entry points, both giving exactly the text of `codec.json_renderer` (the plain reference):
    json_writer(name, version)        fn(message) -> str; one f-string per struct
    fused_json_writer(name, version)  fn(buf, pos, end) -> (str, pos): the wire bytes straight to JSON text,
                                      no message objects; None for specs it does not cover
Uuids and arrays of fixed-width numbers or uuids go through bounded memos: topic ids, directory ids,
replica sets and ISRs repeat on every partition record of a metadata log.

Rules:
- Only the generation pieces codec exports publicly are used; no codec private names.
- fused_json_writer covers flexible versions without tagged structs; it returns None for the rest, and
  the caller decodes with codec and renders with json_writer.
- A fused writer raises (any exception) on malformed bytes; the caller then takes the ordinary path,
  which reports the error in its own words.
- tests/storage/protocol/test_render.py checks both writers against codec on every real fixture record.
"""
from __future__ import annotations

import base64
import functools
import struct

from . import codec
from .codec import reachable_structs
from .codegen import INT_TYPES, Emitter, not_default
from .codegen_read import emit_field_read, emit_length_read, emit_struct_read, emit_tag_loop
from .javafmt import jackson_string, java_double
from .schema import json_name, load, snake_name
from .uuids import ZERO_UUID, bounded_memo, uuid_str

# quoted_uuid(raw): '"<base64url>"' for 16 uuid bytes; generated writers read the memo (_U) first
quoted_uuid, QUOTED_UUIDS = bounded_memo(lambda raw: '"' + uuid_str(raw) + '"', 1 << 17)
_MEMO_LIMIT = 1 << 16


def base64_text(raw) -> str:
    """Return bytes as a quoted, padded base64 JSON string."""
    return '"' + base64.b64encode(raw).decode("ascii") + '"'


def bool_text(x) -> str:
    """Return a JSON boolean."""
    return "true" if x else "false"


# ---------------------------------------------------------------- expressions over decoded values

_SCALAR = {"bool": "_jb({x})", "float64": "_jd({x})", "string": "_js({x})", "uuid": "(_U.get({x}) or _qu({x}))",
           "bytes": "_qb64({x})", "records": "_qb64({x})"}
_MAPPERS = {"string": "_js", "bool": "_jb", "float64": "_jd", "bytes": "_qb64", "records": "_qb64"}


def value_expr(t: str, x: str, nullable: bool) -> str:
    """Return an expression rendering value `x` of type `t` (ints stay ints, for an f-string)."""
    if t in INT_TYPES:
        return x
    expr = _SCALAR.get(t, "_j_" + t + "({x})").format(x=x)
    return f"('null' if {x} is None else {expr})" if nullable or t not in ("bool", "float64", "uuid") else expr


def array_expr(t: str, x: str) -> str:
    """Return an expression rendering the array `x` of `t` elements (or null)."""
    if t in INT_TYPES:
        inner = f"','.join(map(str, {x}))"
    elif t == "uuid":
        inner = f"','.join([_U.get(e) or _qu(e) for e in {x}])"
    else:
        inner = f"','.join(map({_MAPPERS.get(t, '_j_' + t)}, {x}))"
    return f"('null' if {x} is None else '[' + {inner} + ']')"


def _field_expr(f, version: int) -> str:
    x = "o." + snake_name(f.name)
    if f.is_array:
        return array_expr(f.element_type, x)
    nullable = version in f.nullable_versions or f.type in ("string", "bytes", "records") or f.is_struct
    return value_expr(f.type, x, nullable)


def _writer_struct(lines: list, name: str, fields, version: int, flexible: bool) -> None:
    """Append the source of `_j_<name>(o) -> str`: untagged runs in one f-string, tagged fields when not default."""
    lines.append(f"def _j_{name}(o):")
    run: list[str] = []
    started = False
    for f in fields:
        if version not in f.versions:
            continue
        piece = f',"{json_name(f.name)}":{{{_field_expr(f, version)}}}'
        if flexible and version in f.tagged_versions:
            _flush(lines, run, started)
            started = True
            lines.append(f"    if {not_default(f, 'o.' + snake_name(f.name))}: s += f\"\"\"{piece}\"\"\"")
        else:
            run.append(piece)
    _flush(lines, run, started)
    if not lines[-1].startswith(("    s ", "    if ")):
        lines.append("    s = ''")
    lines.append("    return '{' + s[1:] + '}'")
    lines.append("")


def _flush(lines: list, run: list, started: bool) -> None:
    if not run and started:
        return
    text = "".join(run)
    op = "+=" if started else "="
    lines.append(f'    s {op} f"""{text}"""' if text else f"    s {op} ''")
    run.clear()


def writer_helpers() -> dict:
    """Return the names every generated writer sees."""
    return {"_U": QUOTED_UUIDS, "_qu": quoted_uuid, "_js": jackson_string, "_jd": java_double, "_qb64": base64_text,
            "_jb": bool_text, "_ZERO": ZERO_UUID}


@functools.lru_cache(maxsize=None)
def json_writer(name: str, version: int):
    """Return fn(message) -> compact JSON text, the same text as codec.json_renderer(name, version)."""
    spec = load(name)
    flexible = version in spec.flexible_versions
    lines: list[str] = []
    for n in [spec.name] + reachable_structs(spec, version):
        fields = spec.fields if n == spec.name else spec.struct(n).fields
        _writer_struct(lines, n, fields, version, flexible)
    ns = writer_helpers()
    ns.update({f"_S_{n}": c for n, c in codec.struct_classes(name).items()})  # struct defaults of tagged fields
    exec(compile("\n".join(lines), f"<kraftsman json {name} v{version}>", "exec"), ns)
    return ns[f"_j_{spec.name}"]


# ---------------------------------------------------------------- fused: wire bytes to JSON text

_FIXED = {"int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4), "int64": ("q", 8), "uint16": ("H", 2),
          "uint32": ("I", 4), "float64": ("d", 8), "bool": ("?", 1)}
_SCALAR_TEXT = {"bool": "('true' if {v} else 'false')", "float64": "_jd({v})"}


class _Unsupported(Exception):
    """A spec shape the fused writer does not cover (the caller takes the ordinary path)."""


def array_memo(code: str):
    """Return (memo, fn(raw, n) -> JSON array text) for arrays of one fixed-width element type."""
    memo: dict = {}
    unpackers = {n: struct.Struct(f">{n}{code}").unpack_from for n in range(64)}
    element = {"?": bool_text, "d": java_double}.get(code, str)

    def text(raw: bytes, n: int) -> str:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        unpack = unpackers.get(n) or struct.Struct(f">{n}{code}").unpack_from
        out = memo[raw] = "[" + ",".join(map(element, unpack(raw, 0))) + "]"
        return out

    return memo, text


def uuid_array_memo():
    """Return (memo, fn(raw, n) -> JSON array text) for arrays of uuids."""
    memo: dict = {}

    def text(raw: bytes, n: int) -> str:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        out = memo[raw] = "[" + ",".join(quoted_uuid(raw[i:i + 16]) for i in range(0, 16 * n, 16)) + "]"
        return out

    return memo, text


class _FusedSource:
    """Emit the source of one message's fused functions `_f_<struct>(buf, pos, _end) -> (text, pos)`."""

    def __init__(self, spec, version: int):
        self.spec, self.version = spec, version
        self.s = Emitter()
        self.top = True  # the message's own function puts `_BEFORE` and `_AFTER` around its object
        self.pending: set[str] = set()

    def null(self, ind: int, var: str, nullable: bool) -> None:
        """Emit what a null gives: 'null', or an error for a non-nullable field."""
        self.s(ind, f"{var} = 'null'" if nullable else "raise _Err('non-nullable field is null')")

    def value(self, ind: int, var: str, t: str, nullable: bool) -> None:
        """Emit reading one value of type `t` as JSON text (ints stay ints) into `var`."""
        if t == "uuid":
            self.s(ind, f"{var} = buf[pos:pos + 16]; pos += 16")
            self.s(ind, f"{var} = _U.get({var}) or _qu({var})")
        elif t in ("string", "bytes", "records"):
            self.blob(ind, var, t, nullable)
        elif t in _FIXED:
            code, size = _FIXED[t]
            self.s(ind, f"{var}, = {self.s.struct_reader(code)}(buf, pos); pos += {size}")
            if t in _SCALAR_TEXT:
                self.s(ind, f"{var} = {_SCALAR_TEXT[t].format(v=var)}")
        else:
            self.nested(ind, var, t, nullable)
        self.s(ind, "if pos > _end: raise _Err('past the end')")

    def blob(self, ind: int, var: str, t: str, nullable: bool) -> None:
        """Emit reading a compact string or bytes (one-byte length inline) as JSON text into `var`."""
        s = self.s
        conv = "_js({}.decode('utf-8'))" if t == "string" else "_qb64({})"
        n = s.tmp("n")
        s(ind, f"{n} = buf[pos]")
        s(ind, f"if 0 < {n} < 128:")
        s(ind + 1, f"{var} = {conv.format(f'buf[pos + 1:pos + {n}]')}; pos += {n}")
        s(ind, "else:")
        s(ind + 1, f"{n}, pos = _uvarint(buf, pos); {n} -= 1")
        s(ind + 1, f"if {n} < 0:")
        self.null(ind + 2, var, nullable)
        s(ind + 1, "else:")
        s(ind + 2, f"{var} = {conv.format(f'buf[pos:pos + {n}]')}; pos += {n}")

    def nested(self, ind: int, var: str, t: str, nullable: bool) -> None:
        """Emit reading a struct of type `t` (a leading presence byte when nullable) as JSON text."""
        self.pending.add(t)
        emit_struct_read(self.s, ind, var, f"_f_{t}", "'null'" if nullable else None)

    def array(self, ind: int, var: str, t: str, nullable: bool) -> None:
        """Emit reading a compact array of `t` as JSON text into `var`."""
        s = self.s
        n = s.tmp("n")
        emit_length_read(s, ind, n, flex=True, wide=True)
        s(ind, f"if {n} < 0:")
        self.null(ind + 1, var, nullable)
        s(ind, "else:")
        if t in _FIXED or t == "uuid":
            code, size = ("u", 16) if t == "uuid" else _FIXED[t]
            s(ind + 1, f"{var} = buf[pos:pos + {size} * {n}]; pos += {size} * {n}")
            s(ind + 1, "if pos > _end: raise _Err('past the end')")
            s(ind + 1, f"{var} = _M{code}.get({var}) or _T{code}({var}, {n})")
            return
        parts, e = s.tmp("parts"), s.tmp("e")
        s(ind + 1, f"{parts} = []")
        s(ind + 1, f"for _ in range({n}):")
        self.value(ind + 2, e, t, False)
        s(ind + 2, f"{parts}.append({'str(' + e + ')' if t in INT_TYPES else e})")
        s(ind + 1, f"{var} = '[' + ','.join({parts}) + ']'")

    def tagged(self, f, var: str) -> None:
        """Emit reading tagged field `f` (inside the tag loop) into `var` = '' or ',"name":text'."""
        if f.is_struct:
            raise _Unsupported(f.name)
        raw = self.s.tmp("r")
        emit_field_read(self.s, 3, raw, f, self.version, True)
        expr = array_expr(f.element_type, raw) if f.is_array else value_expr(f.type, raw, True)
        expr = f"str({raw})" if not f.is_array and f.type in INT_TYPES else expr
        self.s(3, f"if {not_default(f, raw)}: {var} = ',\"{json_name(f.name)}\":' + {expr}")

    def struct_fn(self, name: str, fields) -> None:
        """Emit `_f_<name>`: every field into a local, the tag section, then one f-string."""
        s, version = self.s, self.version
        s(0, f"def _f_{name}(buf, pos, _end):")
        parts, tagged = [], []
        for f in fields:
            if version not in f.versions:
                continue
            var = "v_" + snake_name(f.name)
            if version in f.tagged_versions:
                s(1, f"{var} = ''")
                tagged.append((f, var))
                parts.append((True, f"{{{var}}}"))
                continue
            nullable = version in f.nullable_versions
            (self.array if f.is_array else self.value)(1, var, f.element_type if f.is_array else f.type, nullable)
            parts.append((False, f',"{json_name(f.name)}":{{{var}}}'))
        self.tag_section(tagged)
        self.assemble(parts)
        s(0, "")

    def tag_section(self, tagged) -> None:
        """Emit the tagged-field loop; unknown tags are skipped (Kafka's JSON leaves them out)."""
        s = self.s
        emit_tag_loop(s)
        for kw, (f, var) in zip(["if"] + ["elif"] * len(tagged), sorted(tagged, key=lambda fv: fv[0].tag)):
            s(2, f"{kw} tag == {f.tag}:")
            self.tagged(f, var)
        s(2, "pos = stop")

    def assemble(self, parts) -> None:
        """Emit the return of the object's text (a leading tagged field may be empty: drop the first comma)."""
        text = "".join(p for _, p in parts)
        before, after = ("{_BEFORE}", "{_AFTER}") if self.top else ("", "")
        self.top = False
        if parts and not parts[0][0]:
            self.s(1, f'return f"""{before}{{{{{text[1:]}}}}}{after}""", pos')
        else:
            self.s(1, f's = f"""{text}"""')
            self.s(1, f"return f\"{before}{{{{{{s[1:]}}}}}}{after}\", pos")

    def source(self) -> str:
        """Return the source of the message's function and of every struct it reaches."""
        done: set[str] = set()
        self.struct_fn(self.spec.name, self.spec.fields)
        while self.pending - done:
            name = sorted(self.pending - done)[0]
            done.add(name)
            self.struct_fn(name, self.spec.struct(name).fields)
        return self.s.text()


def _fused_namespace(name: str, emitted: dict) -> dict:
    """Return the namespace a fused writer runs in: codec's generated helpers, the memos and its readers."""
    ns = codec.generated_namespace()
    ns.update(emitted)
    ns.update(writer_helpers())
    ns["_Err"] = codec.CodecError
    for code in {c for c, _ in _FIXED.values()}:
        ns["_M" + code], ns["_T" + code] = array_memo(code)
    ns["_Mu"], ns["_Tu"] = uuid_array_memo()
    ns.update({f"_S_{n}": c for n, c in codec.struct_classes(name).items()})
    return ns


@functools.lru_cache(maxsize=None)
def fused_json_writer(name: str, version: int, before: str = "", after: str = ""):
    """Return fn(buf, pos, end) -> (json_text, end_pos) for `name` at `version`, or None if not covered.

    `before` and `after` go around the object in the same f-string (a caller that frames the JSON, as
    kafka-dump-log's `{"type":..,"data":<object>}` does, saves two string copies a record).
    """
    spec = load(name)
    if version not in spec.flexible_versions or version not in spec.valid_versions:
        return None
    gen = _FusedSource(spec, version)
    try:
        source = gen.source()
    except _Unsupported:
        return None
    ns = _fused_namespace(name, gen.s.names)
    ns["_BEFORE"], ns["_AFTER"] = before, after
    exec(compile(source, f"<kraftsman fused json {name} v{version}>", "exec"), ns)
    return ns[f"_f_{spec.name}"]

