"""Generate the encoders of the message specs: Python source appending one struct at one version.

Rules:
- An encoder is `_e_<struct>(o, out)`; it appends to a bytearray and returns it. A field absent at the
  version must hold its default (unless ignorable), else CodecError; a tagged field is written only when
  it differs from its default, unknown tags are written back in tag order.
"""
from __future__ import annotations

import struct

from .codegen import ARRAY_FMT, CACHED_ARRAYS, FIXED, RUN_FMT, Emitter, is_flex, not_default
from .schema import FieldSpec, snake_name


def _write_len(s: Emitter, ind: int, expr: str, flex: bool, wide: bool, out: str) -> None:
    if flex:  # a compact length is nearly always one byte: no call for it
        s(ind, f"_n = {expr} + 1")
        s(ind, f"if _n < 128: {out}.append(_n)")
        s(ind, f"else: {out} += _uv(_n)")
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
    if t in FIXED:
        s(ind, f"{out} += _p{FIXED[t][0]}({val})")
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
    if et in ARRAY_FMT:  # count and elements in one precompiled pack while the count is small
        code, n = ARRAY_FMT[et], s.tmp("n")
        s(ind + 1, f"{n} = len({val})")
        s(ind + 1, f"if {n} < {CACHED_ARRAYS}:")
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


def gen_encoder(s: Emitter, struct_name: str, fields, version: int, flexible: bool) -> None:
    """Emit `_e_<struct>(o, out)` appending one struct at `version` to bytearray `out`."""
    s(0, f"def _e_{struct_name}(o, out):")
    tagged, run = [], []
    for f in fields:
        val = "o." + snake_name(f.name)
        if version in f.versions and not (flexible and version in f.tagged_versions) and (
                not f.is_array and f.type in RUN_FMT):
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
            _write_field(s, 1, val, f, version, is_flex(f, version, flexible), "out")
    _flush_write_run(s, run)
    if flexible:
        _gen_tag_writer(s, tagged, version)
    s(1, "return out")
    s(0, "")


def _flush_write_run(s: Emitter, run: list) -> None:
    """Emit one pack for a run of consecutive fixed-width fields (then empty the run)."""
    if not run:
        return
    fmt = "".join(RUN_FMT[f.type] for f in run)
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
