"""Render values as Java prints them (Double.toString, Jackson strings, file paths), for texts that match Kafka's
tools."""
from __future__ import annotations

import math
import re
from json.encoder import encode_basestring


def java_double(x: float) -> str:
    """Format `x` like Java's Double.toString: '1024.0', '1.048576E7', '1.0E-4', 'NaN', 'Infinity'."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    mag = abs(x)
    if 1e-3 <= mag < 1e7:
        return _plain(x)
    return _scientific(x)


def _digits(x: float) -> tuple[str, int]:
    """Return the shortest round-trip digits of |x| and the decimal exponent of the first digit."""
    text = repr(abs(x))
    if "e" in text:
        m, _, e = text.partition("e")
        digits = m.replace(".", "")
        return digits.rstrip("0") or "0", int(e)
    int_part, _, frac = text.partition(".")
    if int_part != "0":
        digits = (int_part + frac).rstrip("0") or "0"
        return digits, len(int_part) - 1
    stripped = frac.lstrip("0")
    return stripped.rstrip("0") or "0", -(len(frac) - len(stripped)) - 1


def _plain(x: float) -> str:
    digits, exp = _digits(x)
    sign = "-" if x < 0 else ""
    if exp >= 0:
        whole = digits[: exp + 1].ljust(exp + 1, "0")
        frac = digits[exp + 1:] or "0"
    else:
        whole, frac = "0", "0" * (-exp - 1) + digits
    return f"{sign}{whole}.{frac}"


def _scientific(x: float) -> str:
    digits, exp = _digits(x)
    sign = "-" if x < 0 else ""
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


_CONTROL = re.compile(r"[\x00-\x1f]")
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def jackson_string(text: str) -> str:
    """Quote `text` as Jackson does: short escapes, other control characters as upper-case \\u00XX."""
    if _CONTROL.search(text) is None:
        return encode_basestring(text)
    out = ['"']
    for ch in text:
        esc = _SHORT_ESCAPES.get(ch)
        out.append(esc if esc else f"\\u{ord(ch):04X}" if ch < " " else ch)
    out.append('"')
    return "".join(out)


def java_path(text: str) -> str:
    """Return a path as Java's File and Path print it: repeated separators as one, no trailing separator."""
    text = re.sub("/+", "/", text)
    return text[:-1] if len(text) > 1 and text.endswith("/") else text


def message_text(message) -> str:
    """Render a flat generated message as its Java toString does: `FeatureLevelRecord(name='x', featureLevel=1)`
    (strings in single quotes, bytes as signed Arrays.toString, null as null)."""
    parts = []
    for spec_field, attr in zip(message.spec.fields, message._fields):
        value = getattr(message, attr)
        name = spec_field.name[:1].lower() + spec_field.name[1:]
        parts.append(f"{name}={_java_value(spec_field.type, value)}")
    return f"{message.spec.name}({', '.join(parts)})"


def _java_value(kind: str, value) -> str:
    if value is None:
        return "null"
    if kind == "string":
        return f"'{value}'"
    if kind == "bytes":
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in bytes(value)) + "]"
    if kind == "bool":
        return "true" if value else "false"
    if kind == "uuid":
        from .uuids import uuid_str

        return uuid_str(value)
    return str(value)
