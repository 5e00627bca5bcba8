"""Generate the decoders of the message specs: Python source reading one struct at one version.

Rules:
- A decoder is `_d_<struct>(buf, pos, _end) -> (object, pos)`; it reads with precompiled Structs, checks
  every length against `_end`, and raises CodecError (in its namespace) with the byte position.
- The emit_* pieces are public so that other generators (storage.protocol.render) read the same way.
"""
from __future__ import annotations

import struct

from .codegen import ARRAY_FMT, CACHED_ARRAYS, FIXED, RUN_FMT, Emitter, default_literal, is_flex
from .schema import FieldSpec, snake_name


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
    if t in FIXED:
        fn, size = FIXED[t]
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
    code = "16s" if et == "uuid" else ARRAY_FMT.get(et)
    if flex and code:  # one-byte compact count of fixed-size elements: one branch
        s(ind, f"{n} = buf[pos]")
        s(ind, f"if 0 < {n} < {CACHED_ARRAYS + 1}:")
        s(ind + 1, f"{target} = list(_C{code}[{n}](buf, pos + 1)); pos += _Z{code}[{n}]")
        s(ind, "else:")
        ind += 1
    emit_length_read(s, ind, n, flex, wide=True)
    s(ind, f"if {n} < 0:")
    _null_or_fail(s, ind, target, nullable, f.name)
    if et == "uuid":
        s(ind, f"elif {n} < {CACHED_ARRAYS}:")
        s(ind + 1, f"{target} = list(_A16s[{n}](buf, pos)); pos += 16 * {n}")
    s(ind, f"elif {n} > _end - pos:")
    s(ind + 1, f"raise CodecError('array {f.name} claims {{}} elements past the end of the buffer'.format({n}), pos)")
    if et in ARRAY_FMT:
        size = FIXED[et][1]
        s(ind, f"elif {n} < {CACHED_ARRAYS}:")
        s(ind + 1, f"{target} = list(_A{ARRAY_FMT[et]}[{n}](buf, pos)); pos += {size} * {n}")
        s(ind, "else:")
        s(ind + 1, f"{target} = list(_unpack_from('>%d{ARRAY_FMT[et]}' % {n}, buf, pos)); pos += {size} * {n}")
        return
    lst, e = s.tmp("lst"), s.tmp("e")
    s(ind, "else:")
    s(ind + 1, f"{lst} = []")
    s(ind + 1, f"for _ in range({n}):")
    _read_value(s, ind + 2, e, f, et, version, flex, nullable=False)
    s(ind + 2, f"{lst}.append({e})")
    s(ind + 1, f"{target} = {lst}")


def gen_decoder(s: Emitter, struct_name: str, fields, version: int, flexible: bool) -> None:
    """Emit `_d_<struct>(buf, pos, _end) -> (object, pos)` reading one struct at `version`."""
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
        elif not f.is_array and f.type in RUN_FMT:
            run.append(f)
            continue
        else:
            _flush_run(s, run)
            emit_field_read(s, 1, attr, f, version, is_flex(f, version, flexible))
    _flush_run(s, run)
    s(1, "o._unknown_tagged_fields = None")
    if flexible:
        _gen_tag_reader(s, tagged, version)
    s(1, "return o, pos")
    s(0, "")


def _flush_run(s: Emitter, run: list) -> None:
    """Emit one unpack for a run of consecutive fixed-width fields (then empty the run)."""
    if not run:
        return
    fmt = "".join(RUN_FMT[f.type] for f in run)
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
