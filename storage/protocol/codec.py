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
- The generators live beside this module: codegen (Emitter, tables, defaults), codegen_read (decoders),
  codegen_write (encoders); the classes, the reference JSON and the cache of compiled functions are here.
- The JSON here is the plain reference; storage.protocol.render compiles faster writers with the same
  output from the public pieces (codegen_read's emit_*, generated_namespace, struct_classes, reachable_structs).
"""
from __future__ import annotations

import base64
import functools
import struct

from ..errors import StorageError
from . import primitives as P
from .codegen import (
    ARRAY_FMT,
    CACHED_ARRAYS,
    FIXED,
    INT_TYPES,
    Emitter,
    default_is_mutable,
    default_literal,
    not_default,
)
from .codegen_read import gen_decoder
from .codegen_write import gen_encoder
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

    __hash__ = None  # mutable; each generated class has its own __eq__ (_gen_class)

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
    params = ", ".join(f"{a}=_MISSING" if default_is_mutable(f) else f"{a}={default_literal(f)}"
                       for a, f in zip(attrs, fields))
    s(0, f"class _S_{struct_name}(Message):")
    s(1, f"__slots__ = {tuple(attrs)!r}")
    s(1, f"_fields = {tuple(attrs)!r}")
    s(1, f"_spec_name = {qual!r}")
    s(1, f"def __init__(self, {params}):" if params else "def __init__(self):")
    for a, f in zip(attrs, fields):
        if default_is_mutable(f):
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
    # equal when of the same class with every field and the unknown tagged fields equal, one comparison per field
    same = "".join(f"self.{a} == other.{a} and " for a in attrs)
    s(1, "def __eq__(self, other):")
    s(2, f"if type(other) is not _S_{struct_name}:")
    s(3, "return NotImplemented")
    s(2, f"return {same}self._unknown_tagged_fields == other._unknown_tagged_fields")
    s(1, "__hash__ = None")
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
    for code in set(ARRAY_FMT.values()):
        ns["_A" + code] = tuple(struct.Struct(f">{n}{code}").unpack_from for n in range(CACHED_ARRAYS))
    ns["_A16s"] = tuple(struct.Struct(">" + "16s" * n).unpack_from for n in range(CACHED_ARRAYS))
    for code in set(ARRAY_FMT.values()):  # packers of count + elements, indexed by the element count
        ns["_WC" + code] = tuple(struct.Struct(f">B{n}{code}").pack for n in range(CACHED_ARRAYS))
        ns["_WN" + code] = tuple(struct.Struct(f">i{n}{code}").pack for n in range(CACHED_ARRAYS))
    for code in set(ARRAY_FMT.values()) | {"16s"}:  # indexed by the compact count byte (count + 1)
        ns["_C" + code] = (None,) + ns["_A" + code]
        ns["_Z" + code] = (0,) + tuple(1 + n * struct.calcsize(">" + code) for n in range(CACHED_ARRAYS))
    for t, (fn, _) in FIXED.items():
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
    for cls in classes.values():
        cls.DEFAULT = cls()  # what a tagged struct field is compared with (codegen.not_default); never changed
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
    generate, prefix = {"decode": (gen_decoder, "_d_"), "encode": (gen_encoder, "_e_"),
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
