"""Node-path completion (Kafka's CommandUtils.completePath).

Rules:
- The word being typed is split at its last '/': the part before names a directory (relative to the
  working directory), the part after is a prefix of its children.
- A directory candidate ends with '/' and is not final; a file candidate is final (a space follows).
"""
from __future__ import annotations

from .paths import absolute_components


def complete_path(state, words: list[str]) -> list[tuple[str, bool]]:
    """Return (candidate word, is_final) pairs completing the last word as a node path."""
    prefix = words[-1] if words else ""
    components = absolute_components(prefix, state.working_directory)
    directories = components if prefix.endswith("/") or prefix in ("", ".", "..") else components[:-1]
    partial = "" if directories is components else (components[-1] if components else "")
    if prefix.endswith(("/.", "/..")):
        return []
    node = state.root
    for name in directories:
        node = node.child(name) if node.is_directory else None
        if node is None or not node.is_directory:
            return []
    base = prefix[:prefix.rfind("/") + 1]
    if prefix in (".", ".."):
        base = prefix + "/"
    out = []
    for name in sorted(node.child_names()):
        if name.startswith(partial):
            child = node.child(name)
            is_dir = child is not None and child.is_directory
            out.append((base + name + ("/" if is_dir else ""), not is_dir))
    return out
