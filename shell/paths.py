"""Paths and globs over the node tree, as Kafka's shell resolves them (GlobComponent, GlobVisitor).

Rules:
- Relative paths are joined to the working directory; '.' and '..' are removed before lookup.
- Per component: '*' -> '.*', '?' -> '.', '{a,b}' -> alternatives, '[a-z]' / '[!a-z]' -> a character class
  (a kraftsman addition; a '[' with no closing ']' stays literal), '\\x' escapes x; regex
  metacharacters are escaped. A component with no wildcard is looked up literally (backslashes kept);
  an invalid glob (nested or unterminated group) is a literal too.
- Matches are visited in sorted child order; no match at all yields nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_REGEX_SPECIAL = set("$()+.[]^{|}")
_GLOB_SPECIAL = set("*?\\{},")


class GlobError(ValueError):
    """A glob component cannot be turned into a pattern (Kafka then treats it as a literal)."""


def split_path(path: str) -> list[str]:
    """Split a path on '/', dropping empty components."""
    return [part for part in path.split("/") if part]


def strip_dots(components: list[str]) -> list[str]:
    """Remove '.' components and resolve '..' (which stops at the root)."""
    out: list[str] = []
    for part in components:
        if part == ".":
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    return out


def absolute_components(path: str, working_directory: str) -> list[str]:
    """Return the normalized components of `path` seen from `working_directory`."""
    full = path if path.startswith("/") else working_directory + "/" + path
    return strip_dots(split_path(full))


def glob_to_regex(glob: str) -> str | None:
    """Return the regular expression of one glob component, or None when it has no wildcard."""
    out, literal, group = ["^"], True, False
    i = 0
    while i < len(glob):
        c = glob[i]
        i += 1
        if c in "?*":
            literal = False
            out.append("." if c == "?" else ".*")
        elif c == "\\":
            if i == len(glob):
                out.append("\\\\")
            else:
                nxt = glob[i]
                i += 1
                out.append("\\" + nxt if nxt in _GLOB_SPECIAL or nxt in _REGEX_SPECIAL else nxt)
        elif c == "[" and _class_end(glob, i) > 0:
            end = _class_end(glob, i)
            literal = False
            out.append(_char_class(glob[i:end]))
            i = end + 1
        elif c == "{":
            if group:
                raise GlobError("Can't nest glob groups.")
            literal, group = False, True
            out.append("(?:(?:")
        elif c == "," and group:
            out.append(")|(?:")
        elif c == "}" and group:
            out.append("))")
            group = False
        else:
            out.append("\\" + c if c in _REGEX_SPECIAL else c)
    if group:
        raise GlobError("Unterminated glob group.")
    return None if literal else "".join(out) + "$"


def _class_end(glob: str, start: int) -> int:
    """Return the index of the ']' closing a character class opened just before `start`, or -1."""
    first = start + 1 if glob[start:start + 1] in ("!", "^") else start
    return glob.find("]", first + 1) if first < len(glob) else -1


def _char_class(body: str) -> str:
    """Return the regex of a glob class body ('a-z', '!0-9'): '[a-z]', '[^0-9]'."""
    negate = body[:1] in ("!", "^")
    chars = body[1:] if negate else body
    escaped = "".join("\\" + c if c in "\\^[]" else c for c in chars)
    return "[" + ("^" if negate else "") + escaped + "]"


class GlobComponent:
    """One path component: a literal name or a compiled pattern."""

    __slots__ = ("component", "pattern")

    def __init__(self, component: str):
        self.component = component
        try:
            regex = glob_to_regex(component)
        except GlobError:
            regex = None
        self.pattern = None if regex is None else re.compile(regex, re.DOTALL)

    @property
    def literal(self) -> bool:
        """Tell whether the component is matched literally."""
        return self.pattern is None

    def matches(self, name: str) -> bool:
        """Tell whether a child name matches."""
        if self.pattern is None:
            return name == self.component
        return self.pattern.match(name) is not None


@dataclass(frozen=True)
class NodeInfo:
    """A node found by a glob, with its path components."""

    path: tuple
    node: object

    @property
    def absolute_path(self) -> str:
        """Return '/a/b' (or '/')."""
        return "/" + "/".join(self.path)

    @property
    def last_component(self) -> str:
        """Return the last path component, '/' for the root."""
        return self.path[-1] if self.path else "/"


def visit(root, working_directory: str, glob: str) -> list[NodeInfo]:
    """Return every node matching `glob`, in Kafka's visiting order (empty when nothing matches)."""
    found: list[NodeInfo] = []
    _accept(absolute_components(glob, working_directory), 0, root, (), found)
    return found


def _accept(components, index, node, path, found) -> None:
    if index >= len(components):
        found.append(NodeInfo(path, node))
        return
    if not node.is_directory:
        return
    component = GlobComponent(components[index])
    if component.literal:
        child = node.child(component.component)
        if child is not None:
            _accept(components, index + 1, child, path + (component.component,), found)
        return
    for name in sorted(node.child_names()):
        if component.matches(name):
            child = node.child(name)
            if child is not None:
                _accept(components, index + 1, child, path + (name,), found)
