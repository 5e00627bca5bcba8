"""diff: compare two images (two offsets or files, or one of them and the current image).

Rules:
- Images come from state.open_image(spec): an integer is an offset of the current source, anything
  else a file or directory; the shell layer never opens files itself.
- Output: '--- a' and '+++ b' headers, then '-'/'+' lines for removed, added and changed leaves as
  '<path>: <text>', paths sorted; identical subtrees print nothing.
"""
from __future__ import annotations

from kraftsman.controller.image.nodes import root_node

from .output import USAGE
from .paths import visit


def flatten(node, path: str, out: dict) -> dict:
    """Collect path -> leaf text for every leaf under `node`."""
    if not node.is_directory:
        out[path] = node.text
        return out
    for name in node.child_names():
        child = node.child(name)
        if child is not None:
            flatten(child, (path.rstrip("/") or "") + "/" + name, out)
    return out


def _leaves(image, path: str, local) -> dict:
    out: dict = {}
    for info in visit(root_node(image, local), "/", path):
        flatten(info.node, info.absolute_path, out)
    return out


def diff_lines(old: dict, new: dict) -> list[str]:
    """Return '-'/'+' lines between two path -> text maps."""
    lines = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        if before is not None:
            lines.append(f"- {path}: {before}")
        if after is not None:
            lines.append(f"+ {path}: {after}")
    return lines


def run_diff(state, args, out) -> None:
    """Handle `diff A [B] [--path P]`."""
    sources = args["sources"]
    if len(sources) > 2:
        out.fail("diff: give one or two offsets or files.\n", USAGE)
        return
    if state.open_image is None:
        out.fail("diff: this shell cannot load other images.\n")
        return
    try:
        images = [(s, state.open_image(s)) for s in sources]
    except (OSError, ValueError) as e:
        out.fail(f"diff: {e}\n")
        return
    if len(images) == 1:
        images.append(("current", state.image))
    (name_a, image_a), (name_b, image_b) = images
    path = args.get("path") or "/image"
    out(f"--- {name_a} ({image_a.provenance})\n+++ {name_b} ({image_b.provenance})\n")
    for line in diff_lines(_leaves(image_a, path, state.local), _leaves(image_b, path, state.local)):
        out(line + "\n")
