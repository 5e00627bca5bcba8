"""jopt-simple's help table (BuiltinHelpFormatter(80, 2)), as Kafka's jopt-simple tools print it (kafka-dump-log,
kafka-topics, kafka-configs, kafka-acls, kafka-leader-election, kafka-reassign-partitions,
kafka-broker-api-versions; jopt.py builds their rows from the tools' click options).

Layout: a header row `Option` / `Description` and a divider `------` / `-----------`, then one row
per option sorted by name. The option column is as wide as its widest entry but at most 39; the
description column takes the rest of 80 columns (minus a 2-space separator), at most as wide as the
widest description. Each cell is cut into pieces on line-break opportunities (after spaces, and
after a hyphen inside a word, as java.text.BreakIterator's line instance does); a piece is closed when
the next word would make it longer than the column, and continuation pieces start with 2 spaces.
Rows are padded to both column widths (so lines keep Kafka's trailing spaces).

Rules:
- Pure text: `render(rows)` takes (option display, description display) pairs and returns the table.
- `option_display` / `description_display` build the cells as jopt-simple does:
  `--name <Type: description>` (`[...]` for an optional argument), `text (default: value)`.
"""
from __future__ import annotations

OVERALL_WIDTH = 80
SEPARATOR = 2
INDENT = "  "


def option_display(flag: str, argument: str | None, optional: bool = False) -> str:
    """Return the option cell: `--flag`, `--flag <argument>` or, for an optional argument, `--flag [argument]`."""
    if argument is None:
        return flag
    return f"{flag} [{argument}]" if optional else f"{flag} <{argument}>"


def description_display(text: str, default: str | None = None) -> str:
    """Return the description cell: the text, then ` (default: value)` when the option has a default."""
    return text if default is None else f"{text} (default: {default})".strip()


def words(line: str) -> list[str]:
    """Split a line at its line-break opportunities; each word keeps its trailing spaces.

    A word ends after its run of spaces (a tab too), right after a hyphen that follows a letter, digit or
    hyphen of the same word and precedes a letter (`print-data-log` -> `print-`, `data-`, `log`; `--create` ->
    `--`, `create`), or right after a period, comma or colon between a letter or digit and a letter (`e.g.` ->
    `e.`, `g.`; `READ,DESCRIBE` -> `READ,`, `DESCRIBE`; `host2:port2` -> `host2:`, `port2`), as Java's line
    BreakIterator cuts them (Kafka's kafka-topics and kafka-acls help shows each).
    """
    out, i, n = [], 0, len(line)
    while i < n:
        j = i
        while j < n and not line[j].isspace():
            j += 1
            if j - 1 > i and j < n and line[j].isalpha() and _breaks_after(line[j - 2], line[j - 1]):
                break
        while j < n and line[j].isspace():
            j += 1
        out.append(line[i:j])
        i = j
    return out


def _breaks_after(before: str, char: str) -> bool:
    """Tell whether a line may break after `char` (preceded by `before`) when a letter follows."""
    if char == "-":
        return before.isalnum() or before == "-"
    return char in ".,:" and before.isalnum()


def pieces(raw: str, width: int) -> list[str]:
    """Cut a cell into pieces of at most `width` columns (continuations indented by 2)."""
    out: list[str] = []
    for line in raw.strip().split("\n"):
        piece = ""
        for word in words(line):
            if len(piece) + len(word) > width:
                out.append(piece.rstrip())
                piece = INDENT + word
            else:
                piece += word
        if piece:
            out.append(piece)
    return out


def _widths(rows) -> tuple[int, int]:
    option = min((OVERALL_WIDTH - SEPARATOR) // 2, max(len(o) for o, _ in rows))
    description = min(OVERALL_WIDTH - option - SEPARATOR, max(len(d) for _, d in rows))
    return option, description


def render(rows) -> str:
    """Return the help table of (option, description) rows, headers included, without a final newline."""
    table = [("Option", "Description"), ("------", "-----------"), *rows]
    option_width, description_width = _widths(table)
    fitted = []
    for option, description in table:
        left, right = pieces(option, option_width), pieces(description, description_width)
        for i in range(max(len(left), len(right))):
            fitted.append((left[i] if i < len(left) else "", right[i] if i < len(right) else ""))
    option_width, description_width = _widths(fitted)
    sep = " " * SEPARATOR
    return "\n".join(f"{o:<{option_width}}{sep}{d:<{description_width}}" for o, d in fitted)
