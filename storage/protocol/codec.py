"""Compile message specs into decode, encode and JSON functions, once per (message, version).

Rules:
- No hand-written class per message version: one generated class per struct, shared by every
  version, with snake_case `__slots__`; a field absent at a version keeps its default. copy.copy()
  (a generated __copy__) is shallow: lists and nested structs are shared.
- Decoders take (buf: bytes, pos) and return (message, pos); encoders append to a bytearray.
- Flexible versions use compact strings, bytes and arrays and end every struct with a tagged-field
  section; unknown tags are kept in `_unknown_tagged_fields` and written back in tag order.
- A tagged field is written (and shown in JSON) only when it differs from its default.
- Any malformed input raises CodecError carrying the byte position; nothing else escapes.
- The JSON here is the plain reference; storage.protocol.render compiles faster writers with the same
  output from the public pieces below (Emitter, emit_field_read, emit_length_read, emit_struct_read, emit_tag_loop,
  generated_namespace, struct_classes, not_default, default_literal, reachable_structs).
"""
from __future__ import annotations

import base64
import functools
import struct

from ..errors import StorageError
from . import primitives as P
from .javafmt import jackson_string, java_double
from .schema import FieldSpec, MessageSpec, json_name, load, snake_name
from .uuids import ZERO_UUID, Uuid, uuid_str


class CodecError(StorageError, ValueError):
    """A message could not be decoded or encoded; `position` is the byte offset, when known."""

    def __init__(self, message: str, position: int | None = None):
        super().__init__(message)
        self.position = position


class _Missing:
    __slots__ = ()

    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


class Message:
    """Base of every generated message and struct class."""

    __slots__ = ("_unknown_tagged_fields",)
    _fields: tuple[str, ...] = ()
    _spec_name = ""

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields) and (
            self._unknown_tagged_fields == other._unknown_tagged_fields)

    __hash__ = None

    def __repr__(self):
        body = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{self._spec_name}({body})"

    def replace(self, **changes):
        """Return a copy with some fields changed."""
        new = object.__new__(type(self))
        for f in self._fields:
            setattr(new, f, changes.pop(f, getattr(self, f)))
        if changes:
            raise TypeError(f"{self._spec_name} has no field(s) {sorted(changes)}")
        new._unknown_tagged_fields = self._unknown_tagged_fields
        return new


# ---------------------------------------------------------------- defaults

INT_TYPES = {"int8", "int16", "int32", "int64", "uint16", "uint32"}


def _parse_int(text: str) -> int:
    t = text.strip().lower()
    neg = t.startswith("-")
    body = t[1:] if neg else t
    value = int(body, 16) if body.startswith("0x") else int(body)
    return -value if neg else value


def default_literal(f: FieldSpec) -> str:
    """Return Python source for the field's default value (Kafka's rules for absent defaults)."""
    d = f.default
    if d == "null":
        return "None"
    if f.is_array:
        return "[]"
    t = f.type
    if t in INT_TYPES:
        return repr(_parse_int(d)) if d else "0"
    if t == "bool":
        return "True" if (d or "").lower() == "true" else "False"
    if t == "float64":
        return repr(float(d)) if d else "0.0"
    if t == "string":
        return repr(d or "")
    if t == "uuid":
        return "_ZERO"
    if t in ("bytes", "records"):
        return "b''"
    return f"_S_{t}()"


def _default_is_mutable(f: FieldSpec) -> bool:
    return f.default != "null" and (f.is_array or f.is_struct)


# ---------------------------------------------------------------- emitter


class Emitter:
    """Accumulate indented Python source lines, unique temporaries and the precompiled readers they name.

    Public so that other generators over the specs (storage.protocol.render) emit the same reading code.
    """

    def __init__(self):
        self.lines: list[str] = []
        self.n = 0
        self.names: dict[str, object] = {}

    def struct_reader(self, fmt: str) -> str:
        """Return the name of a precompiled Struct.unpack_from for `fmt` (shared across the module)."""
        name = "_R_" + fmt.replace("?", "Z")
        self.names.setdefault(name, struct.Struct(">" + fmt).unpack_from)
        return name

    def tmp(self, base: str) -> str:
        """Return a fresh temporary name starting with `base`."""
        self.n += 1
        return f"{base}{self.n}"

    def __call__(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def text(self) -> str:
        """Return the source written so far."""
        return "\n".join(self.lines) + "\n"


_FIXED = {"int8": ("_i8", 1), "int16": ("_i16", 2), "int32": ("_i32", 4), "int64": ("_i64", 8),
          "uint16": ("_u16", 2), "uint32": ("_u32", 4), "float64": ("_f64", 8)}
_ARRAY_FMT = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
              "float64": "d"}


_CACHED_ARRAYS = 64


def _is_flex(f: FieldSpec, version: int, flexible: bool) -> bool:
    if f.flexible_versions is not None:
        return flexible and version in f.flexible_versions
    return flexible


# ---------------------------------------------------------------- decoding


def emit_length_read(s: Emitter, ind: int, var: str, flex: bool, wide: bool) -> None:
    """Emit reading a length/count (-1 = null) into `var`."""
    if flex:
        s(ind, f"{var} = buf[pos]")
        s(ind, f"if {var} < 128: pos += 1")
        s(ind, f"else: {var}, pos = _uvarint(buf, pos)")
        s(ind, f"{var} -= 1")
    elif wide:
        s(ind, f"{var} = _i32(buf, pos)[0]; pos += 4")
    else:
        s(ind, f"{var} = _i16(buf, pos)[0]; pos += 2")


def _null_or_fail(s: Emitter, ind: int, target: str, nullable: bool, name: str) -> None:
    if nullable:
        s(ind + 1, f"{target} = None")
    else:
        s(ind + 1, f"raise CodecError('non-nullable field {name} was serialized as null', pos)")


def _read_value(s: Emitter, ind: int, target: str, f: FieldSpec, t: str, version: int, flex: bool,
                nullable: bool) -> None:
    """Emit code reading one value of type `t` (element type for arrays) into `target`."""
    if t in _FIXED:
        fn, size = _FIXED[t]
        s(ind, f"{target} = {fn}(buf, pos)[0]; pos += {size}")
    elif t == "bool":
        s(ind, f"{target} = buf[pos] != 0; pos += 1")
    elif t == "uuid":
        s(ind, f"{target} = buf[pos:pos + 16]; pos += 16")
        s(ind, "if pos > _end: raise CodecError('unexpected end of buffer', _end)")
    elif t in ("string", "bytes", "records"):
        n = s.tmp("n")
        conv = ".decode('utf-8')" if t == "string" else ""
        if flex:  # one-byte compact length: the usual case, one branch
            s(ind, f"{n} = buf[pos]")
            s(ind, f"if 0 < {n} < 128:")
            s(ind + 1, f"{target} = buf[pos + 1:pos + {n}]{conv}; pos += {n}")
            s(ind + 1, "if pos > _end: raise CodecError('unexpected end of buffer', _end)")
            s(ind, "else:")
            ind += 1
        emit_length_read(s, ind, n, flex, wide=t != "string")
        s(ind, f"if {n} < 0:")
        _null_or_fail(s, ind, target, nullable, f.name)
        s(ind, "else:")
        s(ind + 1, f"{target} = buf[pos:pos + {n}]{conv}; pos += {n}")
        s(ind + 1, "if pos > _end: raise CodecError('unexpected end of buffer', _end)")
    else:
        _read_struct(s, ind, target, f, t, nullable)


def _read_struct(s: Emitter, ind: int, target: str, f: FieldSpec, t: str, nullable: bool) -> None:
    emit_struct_read(s, ind, target, f"_d_{t}", "None" if nullable else None)


def emit_struct_read(s: Emitter, ind: int, target: str, reader: str, null: str | None) -> None:
    """Emit `target, pos = reader(buf, pos, _end)`; with `null` (an expression) the struct is nullable and a
    leading byte tells whether it is present (target = null when not)."""
    if null is not None:
        s(ind, "if buf[pos] >= 128:")
        s(ind + 1, f"{target} = {null}; pos += 1")
        s(ind, "else:")
        s(ind + 1, f"pos += 1; {target}, pos = {reader}(buf, pos, _end)")
    else:
        s(ind, f"{target}, pos = {reader}(buf, pos, _end)")


def emit_field_read(s: Emitter, ind: int, target: str, f: FieldSpec, version: int, flex: bool) -> None:
    """Emit code reading field `f` (scalar, array or struct) into `target`."""
    nullable = version in f.nullable_versions
    if not f.is_array:
        _read_value(s, ind, target, f, f.type, version, flex, nullable)
        return
    n = s.tmp("n")
    et = f.element_type
    code = "16s" if et == "uuid" else _ARRAY_FMT.get(et)
    if flex and code:  # one-byte compact count of fixed-size elements: one branch
        s(ind, f"{n} = buf[pos]")
        s(ind, f"if 0 < {n} < {_CACHED_ARRAYS + 1}:")
        s(ind + 1, f"{target} = list(_C{code}[{n}](buf, pos + 1)); pos += _Z{code}[{n}]")
        s(ind, "else:")
        ind += 1
    emit_length_read(s, ind, n, flex, wide=True)
    s(ind, f"if {n} < 0:")
    _null_or_fail(s, ind, target, nullable, f.name)
    if et == "uuid":
        s(ind, f"elif {n} < {_CACHED_ARRAYS}:")
        s(ind + 1, f"{target} = list(_A16s[{n}](buf, pos)); pos += 16 * {n}")
    s(ind, f"elif {n} > _end - pos:")
    s(ind + 1, f"raise CodecError('array {f.name} claims {{}} elements past the end of the buffer'.format({n}), pos)")
    if et in _ARRAY_FMT:
        size = _FIXED[et][1]
        s(ind, f"elif {n} < {_CACHED_ARRAYS}:")
        s(ind + 1, f"{target} = list(_A{_ARRAY_FMT[et]}[{n}](buf, pos)); pos += {size} * {n}")
        s(ind, "else:")
        s(ind + 1, f"{target} = list(_unpack_from('>%d{_ARRAY_FMT[et]}' % {n}, buf, pos)); pos += {size} * {n}")
        return
    lst, e = s.tmp("lst"), s.tmp("e")
    s(ind, "else:")
    s(ind + 1, f"{lst} = []")
    s(ind + 1, f"for _ in range({n}):")
    _read_value(s, ind + 2, e, f, et, version, flex, nullable=False)
    s(ind + 2, f"{lst}.append({e})")
    s(ind + 1, f"{target} = {lst}")


def _gen_decoder(s: Emitter, struct_name: str, fields, version: int, flexible: bool) -> None:
    s(0, f"def _d_{struct_name}(buf, pos, _end):")
    s(1, f"o = _new(_S_{struct_name})")
    tagged, run = [], []
    for f in fields:
        attr = "o." + snake_name(f.name)
        if version not in f.versions:
            s(1, f"{attr} = {default_literal(f)}")
        elif flexible and version in f.tagged_versions:
            s(1, f"{attr} = {default_literal(f)}")
            tagged.append(f)
        elif not f.is_array and f.type in _RUN_FMT:
            run.append(f)
            continue
        else:
            _flush_run(s, run)
            emit_field_read(s, 1, attr, f, version, _is_flex(f, version, flexible))
    _flush_run(s, run)
    s(1, "o._unknown_tagged_fields = None")
    if flexible:
        _gen_tag_reader(s, tagged, version)
    s(1, "return o, pos")
    s(0, "")


_RUN_FMT = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
            "float64": "d", "bool": "?"}


def _flush_run(s: Emitter, run: list) -> None:
    """Emit one unpack for a run of consecutive fixed-width fields (then empty the run)."""
    if not run:
        return
    fmt = "".join(_RUN_FMT[f.type] for f in run)
    targets = ", ".join("o." + snake_name(f.name) for f in run)
    size = struct.calcsize(">" + fmt)
    s(1, f"{targets}{',' if len(run) == 1 else ''} = {s.struct_reader(fmt)}(buf, pos); pos += {size}")
    run.clear()


def emit_tag_loop(s: Emitter) -> None:
    """Emit the head of a struct's tagged-field section: a loop whose body (at indent 2) sees `tag`, `size`
    and `stop`, the end of the field, checked against `_end`; the body ends with `pos = stop`."""
    s(1, "ntags = buf[pos]")
    s(1, "if ntags < 128: pos += 1")
    s(1, "else: ntags, pos = _uvarint(buf, pos)")
    s(1, "for _ in range(ntags):")
    s(2, "tag, pos = _uvarint(buf, pos)")
    s(2, "size, pos = _uvarint(buf, pos)")
    s(2, "stop = pos + size")
    s(2, "if stop > _end: raise CodecError('tagged field runs past the end of the buffer', pos)")


def _gen_tag_reader(s: Emitter, tagged, version: int) -> None:
    emit_tag_loop(s)
    kw = "if"
    for f in sorted(tagged, key=lambda x: x.tag):
        s(2, f"{kw} tag == {f.tag}:")
        emit_field_read(s, 3, "o." + snake_name(f.name), f, version, True)
        s(3, f"if pos != stop: raise CodecError('tagged field {f.name} does not match its size {{}}'"
             ".format(size), pos)")
        kw = "elif"
    s(2, f"{'else' if tagged else 'if True'}:")
    s(3, "if o._unknown_tagged_fields is None: o._unknown_tagged_fields = []")
    s(3, "o._unknown_tagged_fields.append((tag, buf[pos:stop]))")
    s(2, "pos = stop")


# ---------------------------------------------------------------- encoding


def _write_len(s: Emitter, ind: int, expr: str, flex: bool, wide: bool, out: str) -> None:
    if flex:
        s(ind, f"{out} += _uv({expr} + 1)")
    elif wide:
        s(ind, f"{out} += _p_i32({expr})")
    else:
        s(ind, f"{out} += _p_i16({expr})")


def _write_null(s: Emitter, ind: int, flex: bool, wide: bool, nullable: bool, name: str, out: str) -> None:
    if not nullable:
        s(ind, f"raise CodecError('non-nullable field {name} is null')")
    elif flex:
        s(ind, f"{out}.append(0)")
    else:
        s(ind, f"{out} += {'_NULL32' if wide else '_NULL16'}")


def _write_value(s: Emitter, ind: int, val: str, f: FieldSpec, t: str, flex: bool, nullable: bool, out: str):
    """Emit code appending one value of type `t` to bytearray `out`."""
    if t in _FIXED:
        s(ind, f"{out} += _p{_FIXED[t][0]}({val})")
    elif t == "bool":
        s(ind, f"{out}.append(1 if {val} else 0)")
    elif t == "uuid":
        s(ind, f"{out} += {val}")
    elif t in ("string", "bytes", "records"):
        wide = t != "string"
        s(ind, f"if {val} is None:")
        _write_null(s, ind + 1, flex, wide, nullable, f.name, out)
        s(ind, "else:")
        b = s.tmp("b")
        s(ind + 1, f"{b} = {val}.encode('utf-8')" if t == "string" else f"{b} = {val}")
        _write_len(s, ind + 1, f"len({b})", flex, wide, out)
        s(ind + 1, f"{out} += {b}")
    elif nullable:
        s(ind, f"if {val} is None: {out} += b'\\xff'")
        s(ind, f"else: {out}.append(1); _e_{t}({val}, {out})")
    else:
        s(ind, f"_e_{t}({val}, {out})")


def _write_field(s: Emitter, ind: int, val: str, f: FieldSpec, version: int, flex: bool, out: str) -> None:
    nullable = version in f.nullable_versions
    if not f.is_array:
        _write_value(s, ind, val, f, f.type, flex, nullable, out)
        return
    s(ind, f"if {val} is None:")
    _write_null(s, ind + 1, flex, True, nullable, f.name, out)
    s(ind, "else:")
    et = f.element_type
    if et in _ARRAY_FMT:  # count and elements in one precompiled pack while the count is small
        code, n = _ARRAY_FMT[et], s.tmp("n")
        s(ind + 1, f"{n} = len({val})")
        s(ind + 1, f"if {n} < {_CACHED_ARRAYS}:")
        s(ind + 2, f"{out} += _W{'C' if flex else 'N'}{code}[{n}]({n}{' + 1' if flex else ''}, *{val})")
        s(ind + 1, "else:")
        _write_len(s, ind + 2, n, flex, True, out)
        s(ind + 2, f"{out} += _pack('>%d{code}' % {n}, *{val})")
        return
    _write_len(s, ind + 1, f"len({val})", flex, True, out)
    if et == "uuid":
        s(ind + 1, f"{out} += b''.join({val})")
        return
    e = s.tmp("e")
    s(ind + 1, f"for {e} in {val}:")
    _write_value(s, ind + 2, e, f, et, flex, False, out)


def not_default(f: FieldSpec, val: str) -> str:
    """Return a Python test that `val` differs from the field's default (when a tagged field is written)."""
    lit = default_literal(f)
    return f"{val} is not None" if lit == "None" else f"{val} != {lit}"


def _gen_encoder(s: Emitter, struct_name: str, fields, version: int, flexible: bool) -> None:
    s(0, f"def _e_{struct_name}(o, out):")
    tagged, run = [], []
    for f in fields:
        val = "o." + snake_name(f.name)
        if version in f.versions and not (flexible and version in f.tagged_versions) and (
                not f.is_array and f.type in _RUN_FMT):
            run.append(f)
            continue
        _flush_write_run(s, run)
        if version not in f.versions:
            if not f.ignorable:
                s(1, f"if {not_default(f, val)}:")
                s(2, f"raise CodecError('{struct_name}.{f.name} is not default and cannot be written at "
                     f"version {version}')")
        elif flexible and version in f.tagged_versions:
            tagged.append(f)
        else:
            _write_field(s, 1, val, f, version, _is_flex(f, version, flexible), "out")
    _flush_write_run(s, run)
    if flexible:
        _gen_tag_writer(s, tagged, version)
    s(1, "return out")
    s(0, "")


def _flush_write_run(s: Emitter, run: list) -> None:
    """Emit one pack for a run of consecutive fixed-width fields (then empty the run)."""
    if not run:
        return
    fmt = "".join(_RUN_FMT[f.type] for f in run)
    name = "_W_" + fmt.replace("?", "Z")
    s.names.setdefault(name, struct.Struct(">" + fmt).pack)
    s(1, f"out += {name}({', '.join('o.' + snake_name(f.name) for f in run)})")
    run.clear()


def _gen_tag_writer(s: Emitter, tagged, version: int) -> None:
    tagged = sorted(tagged, key=lambda x: x.tag)
    s(1, "tags = o._unknown_tagged_fields")
    defaults = "".join(f" and not {not_default(f, 'o.' + snake_name(f.name))}" for f in tagged)
    s(1, f"if not tags{defaults}:")  # the usual case: no tagged field to write
    s(2, "out.append(0)")
    s(2, "return out")
    s(1, "tags = list(tags) if tags else []")
    for f in tagged:
        val = "o." + snake_name(f.name)
        s(1, f"if {not_default(f, val)}:")
        s(2, "t = bytearray()")
        _write_field(s, 2, val, f, version, True, "t")
        s(2, f"tags.append(({f.tag}, t))")
    s(1, "if not tags:")
    s(2, "out.append(0)")
    s(1, "else:")
    s(2, "tags.sort(key=_first)")
    s(2, "out += _uv(len(tags))")
    s(2, "for tag, t in tags:")
    s(3, "out += _uv(tag); out += _uv(len(t)); out += t")


# ---------------------------------------------------------------- JSON (Kafka's JsonConverter)


def _json_value(f: FieldSpec, t: str, x: str) -> str:
    """Return an expression rendering value `x` of type `t` as JSON text."""
    if t in INT_TYPES:
        return f"str({x})"
    if t == "bool":
        return f"('true' if {x} else 'false')"
    if t == "float64":
        return f"_jd({x})"
    if t == "string":
        return f"('null' if {x} is None else _js({x}))"
    if t == "uuid":
        return f"('\"' + _us({x}) + '\"')"
    if t in ("bytes", "records"):
        return f"('null' if {x} is None else '\"' + _b64({x}) + '\"')"
    return f"('null' if {x} is None else _j_{t}({x}))"


def _json_field(f: FieldSpec, x: str) -> str:
    if not f.is_array:
        return _json_value(f, f.type, x)
    et = f.element_type
    if et in INT_TYPES:
        inner = f"','.join(map(str, {x}))"
    else:
        inner = f"','.join([{_json_value(f, et, 'e')} for e in {x}])"
    return f"('null' if {x} is None else '[' + {inner} + ']')"


def _gen_json(s: Emitter, struct_name: str, fields, version: int, flexible: bool) -> None:
    s(0, f"def _j_{struct_name}(o):")
    s(1, "p = []")
    for f in fields:
        if version not in f.versions:
            continue
        val = "o." + snake_name(f.name)
        piece = f"p.append('\"{json_name(f.name)}\":' + {_json_field(f, val)})"
        if flexible and version in f.tagged_versions:
            s(1, f"if {not_default(f, val)}: {piece}")
        else:
            s(1, piece)
    s(1, "return '{' + ','.join(p) + '}'")
    s(0, "")


# ---------------------------------------------------------------- classes


def _gen_class(s: Emitter, qual: str, struct_name: str, fields) -> None:
    attrs = [snake_name(f.name) for f in fields]
    params = ", ".join(f"{a}=_MISSING" if _default_is_mutable(f) else f"{a}={default_literal(f)}"
                       for a, f in zip(attrs, fields))
    s(0, f"class _S_{struct_name}(Message):")
    s(1, f"__slots__ = {tuple(attrs)!r}")
    s(1, f"_fields = {tuple(attrs)!r}")
    s(1, f"_spec_name = {qual!r}")
    s(1, f"def __init__(self, {params}):" if params else "def __init__(self):")
    for a, f in zip(attrs, fields):
        if _default_is_mutable(f):
            s(2, f"self.{a} = {default_literal(f)} if {a} is _MISSING else {a}")
        else:
            s(2, f"self.{a} = {a}")
    s(2, "self._unknown_tagged_fields = None")
    s(1, "def __copy__(self):")  # shallow: lists and structs are shared with the original
    s(2, f"new = _new(_S_{struct_name})")
    for a in attrs:
        s(2, f"new.{a} = self.{a}")
    s(2, "new._unknown_tagged_fields = self._unknown_tagged_fields")
    s(2, "return new")
    s(0, "")


def generated_namespace() -> dict:
    """Return a fresh copy of the helpers every generated module sees (built once: ~2k Struct objects).

    Code from emit_field_read() runs in it, beside struct_classes()' classes as `_S_<struct>`.
    """
    return dict(_base_template())


@functools.lru_cache(maxsize=None)
def _base_template() -> dict:
    ns = {
        "Message": Message, "CodecError": CodecError, "_MISSING": MISSING, "_new": object.__new__,
        "_uvarint": P.read_uvarint, "_uv": P.uvarint_bytes, "_unpack_from": struct.unpack_from,
        "_pack": struct.pack, "_Uuid": Uuid, "_ZERO": ZERO_UUID, "_first": lambda kv: kv[0],
        "_NULL16": b"\xff\xff", "_NULL32": b"\xff\xff\xff\xff",
        "_js": jackson_string, "_us": uuid_str, "_jd": java_double,
        "_b64": lambda b: base64.b64encode(b).decode("ascii"),
    }
    for code in set(_ARRAY_FMT.values()):
        ns["_A" + code] = tuple(struct.Struct(f">{n}{code}").unpack_from for n in range(_CACHED_ARRAYS))
    ns["_A16s"] = tuple(struct.Struct(">" + "16s" * n).unpack_from for n in range(_CACHED_ARRAYS))
    for code in set(_ARRAY_FMT.values()):  # packers of count + elements, indexed by the element count
        ns["_WC" + code] = tuple(struct.Struct(f">B{n}{code}").pack for n in range(_CACHED_ARRAYS))
        ns["_WN" + code] = tuple(struct.Struct(f">i{n}{code}").pack for n in range(_CACHED_ARRAYS))
    for code in set(_ARRAY_FMT.values()) | {"16s"}:  # indexed by the compact count byte (count + 1)
        ns["_C" + code] = (None,) + ns["_A" + code]
        ns["_Z" + code] = (0,) + tuple(1 + n * struct.calcsize(">" + code) for n in range(_CACHED_ARRAYS))
    for t, (fn, _) in _FIXED.items():
        st = getattr(P, t.upper())
        ns[fn] = st.unpack_from
        ns["_p" + fn] = st.pack
    return ns


def _struct_fields(spec: MessageSpec, name: str):
    return spec.fields if name == spec.name else spec.struct(name).fields


@functools.lru_cache(maxsize=None)
def struct_classes(name: str) -> dict:
    """Return {struct name: generated class} of message `name` (one per struct), shared by all its versions."""
    spec = load(name)
    s = Emitter()
    order = [spec.name] + [n for n in spec.structs if n != spec.name]
    for n in order:
        qual = n if n == spec.name else f"{spec.name}.{n}"
        _gen_class(s, qual, n, _struct_fields(spec, n))
    ns = generated_namespace()
    exec(compile(s.text(), f"<kraftsman classes {name}>", "exec"), ns)
    classes = {n: ns[f"_S_{n}"] for n in order}
    top = classes[spec.name]
    top.spec = spec
    top.api_key = spec.api_key
    for n, cls in classes.items():
        if n != spec.name:
            setattr(top, n, cls)
    return classes


def message_class(name: str) -> type:
    """Return the generated class of message `name`; nested struct classes are its attributes."""
    return struct_classes(name)[load(name).name]


def reachable_structs(spec: MessageSpec, version: int) -> list[str]:
    """List the struct types a message uses at `version`, in first-use order."""
    seen: list[str] = []

    def walk(fields):
        for f in fields:
            if version in f.versions and f.is_struct and f.element_type not in seen:
                seen.append(f.element_type)
                walk(spec.struct(f.element_type).fields)

    walk(spec.fields)
    return seen


@functools.lru_cache(maxsize=None)
def _compiled(name: str, version: int, kind: str):
    """Generate the `kind` function (decode, encode or json) of message `name` at `version`, only when asked."""
    spec = load(name)
    if version not in spec.valid_versions:
        raise CodecError(f"{name} has no version {version} (valid: {spec.valid_versions})")
    flexible = version in spec.flexible_versions
    generate, prefix = {"decode": (_gen_decoder, "_d_"), "encode": (_gen_encoder, "_e_"),
                        "json": (_gen_json, "_j_")}[kind]
    s = Emitter()
    for n in [spec.name] + reachable_structs(spec, version):
        generate(s, n, _struct_fields(spec, n), version, flexible)
    ns = generated_namespace()
    ns.update(s.names)
    ns.update({f"_S_{n}": c for n, c in struct_classes(name).items()})
    exec(compile(s.text(), f"<kraftsman codec {name} v{version} {kind}>", "exec"), ns)
    return ns[f"{prefix}{spec.name}"]


_DECODE_ERRORS = (struct.error, IndexError, UnicodeDecodeError, P.VarintError, ValueError)


def decoder(name: str, version: int):
    """Return fn(buf, pos=0, end=None) -> (message, new_pos) decoding `name` at `version`."""
    raw = _compiled(name, version, "decode")

    def decode_at(buf: bytes, pos: int = 0, end: int | None = None):
        end = len(buf) if end is None else end
        try:
            msg, stop = raw(buf, pos, end)
        except CodecError:
            raise
        except _DECODE_ERRORS as e:
            raise CodecError(f"cannot decode {name} v{version}: {e}", pos) from None
        if stop > end:
            raise CodecError(f"cannot decode {name} v{version}: it runs {stop - end} byte(s) past the end", end)
        return msg, stop

    decode_at.raw = raw
    return decode_at


def raw_decoder(name: str, version: int):
    """Return the unguarded generated decoder fn(buf, pos, end); callers catch errors themselves."""
    return _compiled(name, version, "decode")


def encoder(name: str, version: int):
    """Return fn(message, out: bytearray) appending `name` at `version` to `out`."""
    return _compiled(name, version, "encode")


def json_renderer(name: str, version: int):
    """Return fn(message) -> str rendering it like Kafka's generated JsonConverter (compact)."""
    return _compiled(name, version, "json")


def decode(name: str, version: int, buf: bytes, pos: int = 0):
    """Decode a whole buffer; leftover bytes are an error."""
    msg, end = decoder(name, version)(buf, pos)
    if end != len(buf):
        raise CodecError(f"Found {len(buf) - end} byte(s) of garbage after {name} v{version}", end)
    return msg


def encode(name: str, version: int, message) -> bytes:
    """Encode `message` as `name` at `version` and return the bytes (bad values raise CodecError)."""
    try:
        return bytes(encoder(name, version)(message, bytearray()))
    except CodecError:
        raise
    except (struct.error, AttributeError, TypeError, ValueError, OverflowError) as e:
        raise CodecError(f"cannot encode {name} v{version}: {type(e).__name__}: {e}") from None


def to_json(name: str, version: int, message) -> str:
    """Render `message` as Kafka's compact JSON at `version`."""
    return json_renderer(name, version)(message)
