"""Text layouts of the shell: node trees (ShellNodePrinter), ls columns, JSON and YAML documents.

Rules:
- A directory prints each child, sorted, as '<indent><name>:' with its content 2 spaces deeper;
  a leaf prints '<indent><text>'. The directory's own name is not printed. A directory with a tree_text(indent)
  (a topic) gives that same text at once.
- ls columns follow Kafka's LsCommandHandler: up to width/4 columns, each as wide as its longest
  entry + 2, the widest layout that fits; without a screen width, one entry per line.
"""
from __future__ import annotations

import json


def print_node(node, write, indent: int = 0) -> None:
    """Write a node as Kafka's shell prints it (tree, cat)."""
    if not node.is_directory:
        write("  " * indent + node.text + "\n")
        return
    whole = getattr(node, "tree_text", None)
    if whole is not None:  # a directory that prints its subtree at once (a topic's partitions)
        write(whole(indent))
        return
    for name in sorted(node.child_names()):
        child = node.child(name)
        if child is None:
            continue
        write("  " * indent + name + ":\n")
        print_node(child, write, indent + 1)


def dump(data, output: str) -> str:
    """Return one document of structured output: indented JSON, or a YAML document starting with '---'."""
    if output == "yaml":
        import yaml

        return yaml.safe_dump(data, sort_keys=False, explicit_start=True, allow_unicode=True, width=1 << 16)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def column_schema(width: int | None, entries: list[str]) -> tuple[list[int], int]:
    """Return (column widths, entries per column) for `entries` on a screen `width` wide."""
    count = len(entries)
    if width is None or width // 4 <= 1:
        return [0], count
    best = None
    for columns in range(width // 4, 1, -1):
        per_column = (count + columns - 1) // columns
        widths = [0] * columns
        for i, entry in enumerate(entries):
            c = i // per_column
            widths[c] = max(widths[c], len(entry) + 2)
        if widths[-1] != 0 and sum(widths) <= width:
            best = (widths, per_column)
            break
    return best or ([0], count)


def format_entries(entries: list[str], width: int | None) -> list[str]:
    """Lay entries out in columns, filled top to bottom then left to right."""
    if not entries:
        return []
    widths, per_column = column_schema(width, entries)
    columns = len(widths)
    lines = []
    for line in range((len(entries) + columns - 1) // columns):
        out = []
        for column in range(columns):
            index = line + column * per_column
            if index < len(entries):
                entry = entries[index]
                out.append(entry if column == columns - 1 else entry.ljust(widths[column]))
        lines.append("".join(out))
    return lines


def format_ls(files: list[str], directories: list[tuple[str, list[str]]], width: int | None) -> list[str]:
    """Return ls output lines: files first, then each directory (with a heading when needed)."""
    lines = format_entries(files, width)
    need_intro = bool(files) or len(directories) > 1
    first_intro = not files
    for name, children in directories:
        intro = []
        if need_intro:
            intro = [name + ":"] if first_intro else ["", name + ":"]
            first_intro = False
        if children:
            lines.extend(intro)
            lines.extend(format_entries(children, width))
    return lines
