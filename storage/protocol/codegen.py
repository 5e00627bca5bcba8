"""What the generators over the message specs share: the source Emitter, the fixed-width and array tables,
and the defaults of fields as Python source.

Rules:
- Generators emit Python source text that runs in codec.generated_namespace(); the names they emit
  (`_i32`, `_A<code>`, `_S_<struct>`, ...) are keys of that namespace, not imports.
- Nothing here runs generated code or reads bytes.
"""
from __future__ import annotations

import struct

from .schema import FieldSpec

INT_TYPES = {"int8", "int16", "int32", "int64", "uint16", "uint32"}


def parse_int(text: str) -> int:
    """Parse a spec default: decimal or 0x hex, with an optional minus sign."""
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
        return repr(parse_int(d)) if d else "0"
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


def default_is_mutable(f: FieldSpec) -> bool:
    """Tell whether the default is a fresh list or struct per instance (not a shared literal)."""
    return f.default != "null" and (f.is_array or f.is_struct)


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


FIXED = {"int8": ("_i8", 1), "int16": ("_i16", 2), "int32": ("_i32", 4), "int64": ("_i64", 8),
          "uint16": ("_u16", 2), "uint32": ("_u32", 4), "float64": ("_f64", 8)}
ARRAY_FMT = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
              "float64": "d"}


CACHED_ARRAYS = 64


def is_flex(f: FieldSpec, version: int, flexible: bool) -> bool:
    """Tell whether field `f` is written in the flexible (compact) encoding at `version`."""
    if f.flexible_versions is not None:
        return flexible and version in f.flexible_versions
    return flexible


RUN_FMT = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
            "float64": "d", "bool": "?"}


def not_default(f: FieldSpec, val: str) -> str:
    """Return a Python test that `val` differs from the field's default (when a tagged field is written)."""
    lit = default_literal(f)
    if lit == "None":
        return f"{val} is not None"
    if lit == f"_S_{f.type}()":  # a struct: its class's shared default instance, not a new one per test
        return f"{val} != _S_{f.type}.DEFAULT"
    return f"{val} != {lit}"
