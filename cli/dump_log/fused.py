"""Fused decoders: record bytes straight to Kafka's compact JSON text, generated from the specs.

The dump of a 1M-record metadata log spends most of its time turning bytes into JSON. This module
generates, once per (message, version), a function `fn(buf, pos, end) -> (json_text, pos)` that reads
the flexible wire format field by field into local variables and renders them with one f-string,
without building message objects. Arrays of fixed-width numbers and of uuids are rendered from their
raw bytes through bounded memos (replica sets, ISRs and directory lists repeat on every partition).

Rules:
- Output is identical to `codec.json_renderer` over `codec` decoding; tests compare the two on every
  record of the real fixtures. Anything unusual (non-flexible versions, tagged structs) is not fused:
  `fused_renderer` returns None and the caller decodes and renders the ordinary way.
- Malformed input raises (any exception); the caller then takes the ordinary path, which reports it.
"""
from __future__ import annotations

import functools
import struct

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.schema import json_name, load, snake_name

from .json import INT_TYPES, QUOTED_UUIDS, render_array, base64_text, render_bool, not_default, render_value, quoted_uuid

_MEMO_LIMIT = 1 << 16
_FIXED = {"int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4), "int64": ("q", 8), "uint16": ("H", 2),
          "uint32": ("I", 4), "float64": ("d", 8), "bool": ("?", 1)}
_SCALAR_TEXT = {"bool": "('true' if {v} else 'false')", "float64": "_jd({v})"}


class _Unsupported(Exception):
    pass


def _array_memo(code: str):
    memo: dict = {}
    fmt = {n: struct.Struct(f">{n}{code}").unpack_from for n in range(64)}
    render = {"?": render_bool, "d": None}.get(code, str)

    def text(raw: bytes, n: int) -> str:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        unpack = fmt.get(n) or struct.Struct(f">{n}{code}").unpack_from
        values = unpack(raw, 0)
        if render is None:
            from kraftsman.storage.protocol.javafmt import java_double
            out = "[" + ",".join(map(java_double, values)) + "]"
        else:
            out = "[" + ",".join(map(render, values)) + "]"
        memo[raw] = out
        return out

    return memo, text


def _uuid_array_text(memo: dict):
    def text(raw: bytes, n: int) -> str:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        out = memo[raw] = "[" + ",".join(quoted_uuid(raw[i:i + 16]) for i in range(0, 16 * n, 16)) + "]"
        return out

    return text


class _Gen:
    """Emit the source of one message's fused functions."""

    def __init__(self, spec, version: int):
        self.spec, self.version = spec, version
        self.s = codec._Src()

    def count(self, ind: int, var: str) -> None:
        s = self.s
        s(ind, f"{var} = buf[pos]")
        s(ind, f"if {var} < 128: pos += 1")
        s(ind, f"else: {var}, pos = _uvarint(buf, pos)")
        s(ind, f"{var} -= 1")

    def null(self, ind: int, var: str, nullable: bool) -> None:
        self.s(ind, f"{var} = 'null'" if nullable else "raise _Err('non-nullable field is null')")

    def value(self, ind: int, var: str, t: str, nullable: bool) -> None:
        """Emit reading one value of type `t` as JSON text (ints stay ints) into `var`."""
        s = self.s
        if t == "uuid":
            s(ind, f"{var} = buf[pos:pos + 16]; pos += 16")
            s(ind, f"{var} = _U.get({var}) or _qu({var})")
        elif t in ("string", "bytes", "records"):
            conv = "_js({}.decode('utf-8'))" if t == "string" else "base64_text({})"
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
        elif t in _FIXED:
            code, size = _FIXED[t]
            s(ind, f"{var}, = {s.struct_reader(code)}(buf, pos); pos += {size}")
            if t in _SCALAR_TEXT:
                s(ind, f"{var} = {_SCALAR_TEXT[t].format(v=var)}")
        else:
            self.struct_fns.add(t)
            if nullable:
                s(ind, "if buf[pos] >= 128:")
                s(ind + 1, f"{var} = 'null'; pos += 1")
                s(ind, "else:")
                s(ind + 1, f"pos += 1; {var}, pos = _f_{t}(buf, pos, _end)")
            else:
                s(ind, f"{var}, pos = _f_{t}(buf, pos, _end)")
        s(ind, "if pos > _end: raise _Err('past the end')")

    def array(self, ind: int, var: str, t: str, nullable: bool) -> None:
        """Emit reading a compact array of `t` as JSON text into `var`."""
        s = self.s
        n = s.tmp("n")
        self.count(ind, n)
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
        codec._read_field(self.s, 3, raw, f, self.version, True)
        expr = render_array(f.element_type, raw) if f.is_array else render_value(f.type, raw, True)
        expr = f"str({raw})" if not f.is_array and f.type in INT_TYPES else expr
        self.s(3, f"if {not_default(f, raw)}: {var} = ',\"{json_name(f.name)}\":' + {expr}")

    def struct_fn(self, name: str, fields) -> None:
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
            if f.is_array:
                self.array(1, var, f.element_type, nullable)
            else:
                self.value(1, var, f.type, nullable)
            parts.append((False, f',"{json_name(f.name)}":{{{var}}}'))
        self.tag_section(tagged)
        self.assemble(parts)
        s(0, "")

    def tag_section(self, tagged) -> None:
        s = self.s
        s(1, "ntags = buf[pos]")
        s(1, "if ntags < 128: pos += 1")
        s(1, "else: ntags, pos = _uvarint(buf, pos)")
        s(1, "for _ in range(ntags):")
        s(2, "tag, pos = _uvarint(buf, pos)")
        s(2, "size, pos = _uvarint(buf, pos)")
        s(2, "stop = pos + size")
        s(2, "if stop > _end: raise _Err('tagged field past the end')")
        for kw, (f, var) in zip(["if"] + ["elif"] * len(tagged), sorted(tagged, key=lambda fv: fv[0].tag)):
            s(2, f"{kw} tag == {f.tag}:")
            self.tagged(f, var)
        s(2, "pos = stop")

    def assemble(self, parts) -> None:
        text = "".join(p for _, p in parts)
        if parts and not parts[0][0]:
            self.s(1, f'return f"""{{{{{text[1:]}}}}}""", pos')
        else:
            self.s(1, f's = f"""{text}"""')
            self.s(1, "return '{' + s[1:] + '}', pos")

    def source(self) -> str:
        spec = self.spec
        self.struct_fns = set()
        done = set()
        self.struct_fn(spec.name, spec.fields)
        while self.struct_fns - done:
            name = sorted(self.struct_fns - done)[0]
            done.add(name)
            self.struct_fn(name, spec.struct(name).fields)
        return self.s.text()


def _namespace(names: dict) -> dict:
    from kraftsman.storage.protocol.javafmt import jackson_string

    from kraftsman.storage.protocol.javafmt import java_double

    ns = codec._base_namespace()
    ns.update(names)
    ns.update({"_U": QUOTED_UUIDS, "_qu": quoted_uuid, "_js": jackson_string, "_jd": java_double, "base64_text": base64_text,
               "render_bool": render_bool, "_Err": codec.CodecError})
    for code in {c for c, _ in _FIXED.values()}:
        ns["_M" + code], ns["_T" + code] = _array_memo(code)
    ns["_Mu"] = {}
    ns["_Tu"] = _uuid_array_text(ns["_Mu"])
    return ns


@functools.lru_cache(maxsize=None)
def fused_renderer(name: str, version: int):
    """Return fn(buf, pos, end) -> (json_text, end_pos) for `name` at `version`, or None if not fusable."""
    spec = load(name)
    if version not in spec.flexible_versions or version not in spec.valid_versions:
        return None
    gen = _Gen(spec, version)
    try:
        source = gen.source()
    except _Unsupported:
        return None
    ns = _namespace(gen.s.names)
    ns.update({f"_S_{n}": c for n, c in codec._classes(name).items()})
    exec(compile(source, f"<dump-log fused {name} v{version}>", "exec"), ns)
    return ns[f"_f_{spec.name}"]
