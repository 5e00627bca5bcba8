"""diff and mark: compare two images field by field (offsets, files, marks or the session's own images).

Rules:
- A source is `@NAME` (a mark of this session), an offset (an image this session has shown at exactly that
  offset, else the current source's image at that offset through state.open_image), or a file or directory
  (state.open_image). One source is compared with the current image; none compares the newest mark (else the
  image the session started with) with the current image, which is what a live session means by "what changed".
- The shell never opens files itself; the opener's failure, whatever its type, is one line.
- Text: '--- a' / '+++ b' headers, then '+ path' (added), '- path' (removed), '~ path' with one indented
  'field: old -> new' line per changed field of a typed record (a leaf without fields: '~ path: old -> new');
  coloured only on a terminal (shell/colour). json/yaml: one document, {from, to, path, changes} (Change.as_data).
"""
from __future__ import annotations

import json

from kraftsman.controller.image.nodes import provenance, root_node

from .changes import ADDED, REMOVED, Side, compare
from .colour import colour_on, painter
from .output import USAGE
from .paths import visit

DETAILS = """Sources: @NAME is a mark taken with `mark NAME` in this session; an offset is an image this session
has shown at that offset (a live shell remembers the image of each command), else the source's image at
that offset (file and directory modes); anything else is a snapshot, log or directory to load.
With one source, it is compared with the current image; with none, the newest mark (else the image
the session started with) is compared with the current image. In a live shell, `mark`, a few commands,
then `diff` shows what the quorum changed in between.
Output: '+ path' added, '- path' removed, '~ path' changed with one 'field: old -> new' line per field
of a typed record (brokers, partitions, ...); --output json or yaml gives {from, to, path, changes}.
/image/provenance and /image/topics/byId are left out unless --path names them."""

MARK_DETAILS = """The mark lasts for the session; `diff @NAME` compares it with the current image and a bare `diff`
compares the newest mark with it. Taking a mark again under the same name replaces it."""


class SourceError(ValueError):
    """A diff source that cannot be found or loaded."""


def run_diff(state, args, out) -> None:
    """Handle `diff [A [B]] [--path P] [--output FORMAT]`."""
    sources = args["sources"] or []
    if len(sources) > 2:
        out.fail("diff: give at most two sources (offsets, @marks or files).\n", USAGE)
        return
    try:
        sides = _sides(state, sources)
    except SourceError as e:
        out.fail(f"diff: {e}\n")
        return
    paths = _paths(state, sides, args.get("path") or "/image")
    if paths is None:
        out.fail(f"diff: {args.get('path')}: no such node in either image.\n")
        return
    output = args.get("output") or state.output
    if output in ("json", "yaml"):
        _print_structured(state, sides, paths, output, out)
    else:
        _print_text(state, sides, paths, out)


def run_mark(state, args, out) -> None:
    """Handle `mark [NAME]`: keep the current image for diff."""
    try:
        name = state.images.mark(state.image, args.get("name"))
    except ValueError as e:
        out.fail(f"mark: {e}\n", USAGE)
        return
    out(f"@{name}: {state.image.provenance}\n")


def _sides(state, sources: list[str]) -> list[tuple[str, object]]:
    """Return [(label, image), (label, image)]: old first, the current image last when fewer than two are given."""
    if not sources:
        return [state.images.baseline(), ("current", state.image)]
    sides = [(spec, _open(state, spec)) for spec in sources]
    if len(sides) == 1:
        sides.append(("current", state.image))
    return sides


def _open(state, spec: str):
    if spec.startswith("@"):
        image = state.images.marked(spec[1:])
        if image is None:
            marks = ", ".join("@" + n for n in state.images.marks) or "none yet"
            raise SourceError(f"no mark {spec} (marks: {marks}; `mark NAME` takes one)")
        return image
    offset = _offset(spec)
    seen = None if offset is None else state.images.at(offset)
    if seen is not None:
        return seen
    if state.open_image is None:
        raise SourceError(f"{spec}: this shell cannot load other images{_known(state, offset)}")
    try:
        return state.open_image(spec)
    except Exception as e:  # the opener is the caller's: its failures (any type) are one line, never a traceback
        raise SourceError(f"{getattr(e, 'message', None) or e}{_known(state, offset)}") from None


def _offset(spec: str) -> int | None:
    return int(spec) if spec.lstrip("-").isdigit() else None


def _known(state, offset) -> str:
    if offset is None:
        return ""
    offsets = ", ".join(map(str, state.images.offsets()))
    return f" (this session has shown offsets {offsets}; `mark` keeps an image)"


def _paths(state, sides, path: str) -> list[tuple] | None:
    """Return the node paths `path` (a glob, relative to the working directory) names in either image."""
    found = set()
    for _label, image in sides:
        root = root_node(image, state.local, state.release)
        found.update(info.path for info in visit(root, state.working_directory, path))
    return sorted(found) or None


def _changes(state, sides, paths, values: bool):
    (_, old_image), (_, new_image) = sides
    old, new = Side(old_image, root_node(old_image, state.local, state.release)), \
        Side(new_image, root_node(new_image, state.local, state.release))
    for path in paths:
        yield from compare(old, new, path, values)


def _print_structured(state, sides, paths, output: str, out) -> None:
    from .printer import dump

    (name_a, image_a), (name_b, image_b) = sides
    document = {"from": {"source": name_a, "provenance": provenance(image_a.provenance)},
                "to": {"source": name_b, "provenance": provenance(image_b.provenance)},
                "path": ["/" + "/".join(p) for p in paths],
                "changes": [c.as_data() for c in _changes(state, sides, paths, values=True)]}
    out(dump(document, output))


def _print_text(state, sides, paths, out) -> None:
    paint = painter(colour_on(out))
    (name_a, image_a), (name_b, image_b) = sides
    out(paint(f"--- {name_a} ({image_a.provenance})", "header") + "\n")
    out(paint(f"+++ {name_b} ({image_b.provenance})", "header") + "\n")
    for change in _changes(state, sides, paths, values=False):
        out(change_text(change, paint))


def change_text(change, paint=lambda text, role: text) -> str:
    """Return a change's text lines ('+ path', '- path: text', '~ path' and its 'field: old -> new' lines)."""
    path = change.absolute_path
    if change.kind in (ADDED, REMOVED):
        sign, value = ("+", change.new) if change.kind == ADDED else ("-", change.old)
        text = f"{sign} {path}" + (f": {_leaf(value)}" if value is not None and not isinstance(value, dict) else "")
        return paint(text, change.kind) + "\n"
    if not change.fields:
        return (paint(f"~ {path}", "changed") + f": {paint(_leaf(change.old), 'old')} -> "
                f"{paint(_leaf(change.new), 'new')}\n")
    lines = [paint(f"~ {path}", "changed") + "\n"]
    for field in change.fields:
        lines.append(f"    {paint(field.name, 'field')}: {paint(_value(field.old), 'old')} -> "
                     f"{paint(_value(field.new), 'new')}\n")
    return "".join(lines)


def _leaf(value) -> str:
    return value if isinstance(value, str) else _value(value)


def _value(value) -> str:
    """Return a field's value as JSON writes it ([1, 2], false, null, "r1")."""
    return json.dumps(value, ensure_ascii=False)
