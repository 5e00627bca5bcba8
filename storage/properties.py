"""Java `.properties` text, read and written with java.util.Properties semantics.

Reading follows `Properties.load` (its LineReader and load0/loadConvert), character for character:
- A natural line ends at `\\n`, `\\r` or `\\r\\n`. Leading ' ', '\\t', '\\f' are skipped; a logical line
  whose first character is '#' or '!' is a comment; blank lines are ignored.
- An odd run of backslashes at the end of a line joins it with the next line, whose leading
  whitespace is dropped; at end of input the dangling backslash is dropped.
- The key ends at the first unescaped '=', ':' or whitespace; whitespace around the separator and
  one '=' or ':' after whitespace are skipped. Escapes: \\t \\n \\r \\f \\uXXXX, any other \\x -> x.
Writing follows `Properties.store(Writer, comments)` (escUnicode=false): an optional comment block,
an optional `#<date>` line, then `key=value` lines in the mapping's order.

Rules:
- `loads` returns keys and values in first-insertion order; a repeated key keeps the last value.
- Every error is a `PropertiesError` with a one-line message (Java's text where Java has one).
- Pure functions on `str`; `load` is the only function that opens a file.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

from .errors import StorageError

MALFORMED_UNICODE = "Malformed \\uxxxx encoding."
_WHITESPACE = " \t\f"
_EOL = "\r\n"
_SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_SAVE_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f",
                 "=": "\\=", ":": "\\:", "#": "\\#", "!": "\\!", "\\": "\\\\"}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_JAVA_INT = re.compile(r"[+-]?\d+")


class PropertiesError(StorageError, ValueError):
    """Report properties text that cannot be read or written (one-line message)."""


# ---------------------------------------------------------------- reading

def loads(text: str) -> dict[str, str]:
    """Parse properties text into a dict, in first-insertion order."""
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_entry(line)
        result[key] = value
    return result


def load(path, encoding: str = "iso-8859-1") -> dict[str, str]:
    """Read a properties file; the default encoding is Properties.load(InputStream)'s ISO-8859-1."""
    data = Path(path).read_bytes()
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        raise PropertiesError(f"Malformed input in {path}: not valid {encoding} at byte {e.start}") from None
    return loads(text)


def _logical_lines(text: str) -> Iterator[str]:
    """Yield the logical lines of `text` the way Properties.LineReader.readLine returns them."""
    off, end = 0, len(text)
    while True:
        line, off = _read_line(text, off, end)
        if line is None:
            return
        yield line


def _read_line(text: str, off: int, end: int) -> tuple[str | None, int]:
    """Read one logical line from `off`; return (line or None at end of input, next offset)."""
    buf: list[str] = []
    skip_ws, line_begin, backslash = True, False, False
    while off < end:
        c = text[off]
        off += 1
        if skip_ws:
            if c in _WHITESPACE or (not line_begin and c in _EOL):
                continue
            skip_ws, line_begin = False, False
        if not buf and c in "#!":
            off = _skip_comment(text, off, end)
            if off < 0:
                return None, end
            skip_ws = True
            continue
        if c not in _EOL:
            buf.append(c)
            backslash = (not backslash) if c == "\\" else False
            continue
        if not buf:
            skip_ws = True
            continue
        if off >= end or not backslash:
            return _finish(buf, backslash), off
        buf.pop()
        skip_ws, line_begin, backslash = True, True, False
        if c == "\r" and text[off] == "\n":
            off += 1
    return (_finish(buf, backslash) if buf else None), end


def _finish(buf: list[str], backslash: bool) -> str:
    """Join a line buffer, dropping a dangling continuation backslash."""
    return "".join(buf[:-1] if backslash else buf)


def _skip_comment(text: str, off: int, end: int) -> int:
    """Return the offset after the comment's line break, or -1 if the input ends first."""
    positions = [p for p in (text.find("\r", off), text.find("\n", off)) if p >= 0]
    return min(positions) + 1 if positions else -1


def _split_entry(line: str) -> tuple[str, str]:
    """Split a logical line into its unescaped key and value (Properties.load0)."""
    limit = len(line)
    key_len, value_start, has_sep, backslash = 0, limit, False, False
    while key_len < limit:
        c = line[key_len]
        if not backslash and c in "=:":
            value_start, has_sep = key_len + 1, True
            break
        if not backslash and c in _WHITESPACE:
            value_start = key_len + 1
            break
        backslash = (not backslash) if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in _WHITESPACE:
            if has_sep or c not in "=:":
                break
            has_sep = True
        value_start += 1
    return _unescape(line[:key_len]), _unescape(line[value_start:])


def _unescape(text: str) -> str:
    """Resolve backslash escapes (Properties.loadConvert); pair UTF-16 surrogates like Java strings do."""
    if "\\" not in text:
        return text
    out: list[str] = []
    off, end = 0, len(text)
    while off < end:
        c = text[off]
        off += 1
        if c != "\\" or off >= end:
            out.append(c)
            continue
        c = text[off]
        off += 1
        if c == "u":
            out.append(_hex4(text, off, end))
            off += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(c, c))
    return _join_surrogates("".join(out))


def _hex4(text: str, off: int, end: int) -> str:
    """Decode the four hex digits of a \\uXXXX escape (ASCII digits only, like Java)."""
    digits = text[off:off + 4]
    if off > end - 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
        raise PropertiesError(MALFORMED_UNICODE)
    return chr(int(digits, 16))


def _join_surrogates(text: str) -> str:
    """Combine UTF-16 surrogate pairs into code points; keep lone surrogates as they are."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# ---------------------------------------------------------------- writing

def dumps(mapping: Mapping[str, str], comment: str | None = None, date_line: str | None = None,
          *, escape_unicode: bool = False) -> str:
    """Render `mapping` like Properties.store: comment block, `#<date_line>`, then `key=value` lines.

    `date_line` is the text after '#' (Java writes `new Date().toString()`; see `java_date`); None
    omits the line. `escape_unicode=True` gives store(OutputStream)'s \\uXXXX escapes of non-ASCII.
    """
    parts: list[str] = []
    if comment is not None:
        parts.append(_comment_block(comment))
    if date_line is not None:
        if any(c in date_line for c in _EOL):
            raise PropertiesError("The date line of a properties file cannot contain a line break")
        parts.append(f"#{date_line}\n")
    for key, value in mapping.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise PropertiesError(f"Properties keys and values must be strings, not "
                                  f"{type(key).__name__}={type(value).__name__}")
        parts.append(f"{_escape(key, True, escape_unicode)}={_escape(value, False, escape_unicode)}\n")
    return "".join(parts)


def _escape(text: str, is_key: bool, escape_unicode: bool) -> str:
    """Escape a key or value (Properties.saveConvert)."""
    out: list[str] = []
    for i, c in enumerate(text):
        if c == " ":
            out.append("\\ " if (i == 0 or is_key) else " ")
        elif c in _SAVE_ESCAPES:
            out.append(_SAVE_ESCAPES[c])
        elif escape_unicode and not " " <= c <= "~":
            out.append(_utf16_escapes(c))
        else:
            out.append(c)
    return "".join(out)


def _utf16_escapes(c: str) -> str:
    """Return the \\uXXXX escapes (uppercase hex) of the UTF-16 code units of one character."""
    units = c.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02X}{units[i + 1]:02X}" for i in range(0, len(units), 2))


def _comment_block(comment: str) -> str:
    """Render comment lines (Properties.writeComments): '#' prefixes, chars above U+00FF escaped."""
    out = ["#"]
    i, n = 0, len(comment)
    while i < n:
        c = comment[i]
        if c in _EOL:
            if c == "\r" and i + 1 < n and comment[i + 1] == "\n":
                i += 1
            out.append("\n")
            if i == n - 1 or comment[i + 1] not in "#!":
                out.append("#")
        elif c > "\u00ff":
            out.append(_utf16_escapes(c))
        else:
            out.append(c)
        i += 1
    out.append("\n")
    return "".join(out)


def java_date(moment: datetime | None = None) -> str:
    """Format `moment` (default: now) in UTC like java.util.Date.toString(): `Thu Oct 24 19:33:01 UTC 2024`.

    A naive datetime is taken to be in UTC already.
    """
    moment = moment or datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    moment = moment.astimezone(timezone.utc)
    return (f"{_DAYS[moment.weekday()]} {_MONTHS[moment.month - 1]} {moment.day:02d} "
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} UTC {moment.year}")


def parse_java_int(text: str, bits: int = 32) -> int | None:
    """Parse like Integer.parseInt (bits=32) or Long.parseLong (bits=64); None where Java throws.

    Java accepts an optional sign and Unicode decimal digits, and nothing else: no spaces, no '_'.
    """
    if not _JAVA_INT.fullmatch(text):
        return None
    value = int(text)
    limit = 1 << (bits - 1)
    return value if -limit <= value < limit else None
