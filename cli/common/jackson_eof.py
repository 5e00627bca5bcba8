"""The exception Jackson 2.16 (Kafka 3.9's) throws for JSON text that ends too early, for the tools that print it
(kafka-reassign-partitions' "Error: com.fasterxml.jackson.core.io.JsonEOFException: ...").

Rules:
- eof_error(text) scans `text` as Jackson's ReaderBasedJsonParser reads it (containers, strings, colons, commas) and
  returns (Java class, message) when the text ends inside a value, else None (another fault: the caller words it).
- Jackson's words by where the text ends: after a comma "Unexpected end-of-input within/between Object entries"
  (JsonParseException); after a field name or its colon the same words (JsonEOFException); inside a field name
  "Unexpected end-of-input in field name"; inside a string "Unexpected end-of-input: was expecting closing quote
  for a string value"; anywhere else "Unexpected end-of-input: expected close marker for Object (start marker at
  <where the innermost container opened>)". Each message ends with "\\n at <where the text ended>".
- Locations print as Jackson 2.16 prints them with the source redacted (its default): "[Source: REDACTED
  (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 16]"; lines count \\n, \\r\\n and \\r;
  columns are 1-based.
- Comments and the non-standard tokens Jackson refuses are not modelled: such text is another fault.
"""
from __future__ import annotations

PARSE = "com.fasterxml.jackson.core.JsonParseException"
EOF = "com.fasterxml.jackson.core.io.JsonEOFException"
SOURCE = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"
NAMES = {"{": "Object", "[": "Array"}


class _Scan:
    """Where a scan of the text stands: open containers, the last significant token, the position."""

    def __init__(self):
        self.stack: list[tuple[str, int, int]] = []     # (bracket, line, column of its start marker)
        self.last = ""                                   # "open", ",", ":", "name", "value"
        self.line, self.row_start, self.i = 1, 0, 0


def eof_error(text: str) -> tuple[str, str] | None:
    """Return (class, message) of Jackson's end-of-input failure for `text`, or None (see Rules)."""
    scan, n = _Scan(), len(text)
    while scan.i < n:
        c = text[scan.i]
        scan.i += 1
        if c in "\r\n":
            if c == "\r" and scan.i < n and text[scan.i] == "\n":
                scan.i += 1
            scan.line, scan.row_start = scan.line + 1, scan.i
        elif c in " \t":
            continue
        elif c in "{[":
            scan.stack.append((c, scan.line, scan.i - scan.row_start))
            scan.last = "open"
        elif c in "}]":
            if not scan.stack or NAMES[scan.stack.pop()[0]] != NAMES["{" if c == "}" else "["]:
                return None
            scan.last = "value"
            if not scan.stack:
                return None                               # a whole value: the fault lies elsewhere
        elif c in ",:":
            scan.last = c
        elif c == '"':
            name = bool(scan.stack) and scan.stack[-1][0] == "{" and scan.last in ("open", ",")
            if not _skip_string(text, scan):
                return _at_end(scan, EOF, "Unexpected end-of-input in field name" if name else
                               "Unexpected end-of-input: was expecting closing quote for a string value")
            scan.last = "name" if name else "value"
        else:
            scan.last = "value"
    return _ended(scan) if scan.stack else None


def _skip_string(text: str, scan: _Scan) -> bool:
    """Move past a string's closing quote; return False when the text ends first."""
    while scan.i < len(text):
        c = text[scan.i]
        scan.i += 2 if c == "\\" else 1
        if c == '"':
            return True
    return False


def _ended(scan: _Scan) -> tuple[str, str]:
    kind = NAMES[scan.stack[-1][0]]
    if scan.last == ",":
        return _at_end(scan, PARSE, f"Unexpected end-of-input within/between {kind} entries")
    if scan.last in (":", "name"):
        return _at_end(scan, EOF, f"Unexpected end-of-input within/between {kind} entries")
    _, line, column = scan.stack[-1]
    start = SOURCE.format(line, column)
    return _at_end(scan, EOF, f"Unexpected end-of-input: expected close marker for {kind} (start marker at {start})")


def _at_end(scan: _Scan, java_class: str, message: str) -> tuple[str, str]:
    return java_class, f"{message}\n at {SOURCE.format(scan.line, scan.i - scan.row_start + 1)}"
