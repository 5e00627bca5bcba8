"""Field-level changes between two images below one path: what `diff` reports, as data.

Rules:
- Both node trees are walked together, children in sorted order. A leaf is compared through its typed data
  (the node's data(), controller/image/nodes.py: a broker, a partition, an ACL...), so a changed record gives one
  entry per changed field (`leader: 1 -> -1`); a leaf without typed data compares its text.
- A node on one side only is one 'added' or 'removed' change; the data of an added or removed directory
  (a whole topic) is built only when asked for (structured output).
- Identical areas are skipped without walking them: the same objects (a live session's images share every
  untouched area) or equal raw partition records (two loads of one file).
- Walking from above them, /image/provenance (shown in diff's header) and /image/topics/byId (the topics of
  byName again) are left out; named as the path itself, they are compared.
"""
from __future__ import annotations

from dataclasses import dataclass

from kraftsman.storage.protocol.uuids import Uuid

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
SKIPPED_BELOW = {("image", "provenance"), ("image", "topics", "byId")}
_AREAS = {"acls": "acls", "clientQuotas": "client_quotas", "cluster": "cluster", "configs": "configs",
          "delegationToken": "delegation_tokens", "features": "features", "producerIds": "producer_ids",
          "scram": "scram", "topics": "topics"}


@dataclass(frozen=True)
class FieldChange:
    """One field of a typed record that differs."""

    name: str
    old: object
    new: object


@dataclass(frozen=True)
class Change:
    """One difference: a node added or removed (with its data when kept), or changed (fields, else old/new)."""

    path: tuple
    kind: str
    old: object = None
    new: object = None
    fields: tuple = ()

    @property
    def absolute_path(self) -> str:
        """Return the node's path as '/a/b'."""
        return "/" + "/".join(self.path)

    def as_data(self) -> dict:
        """Return the change as JSON-ready data (the shape diff --output json prints)."""
        data = {"path": self.absolute_path, "change": self.kind}
        if self.fields:
            data["fields"] = [{"name": f.name, "old": f.old, "new": f.new} for f in self.fields]
            return data
        if self.kind != ADDED:
            data["old"] = self.old
        if self.kind != REMOVED:
            data["new"] = self.new
        return data


@dataclass(frozen=True)
class Side:
    """One image and its node tree."""

    image: object
    root: object


def node_data(image, path: tuple, node):
    """Return the data `node` is compared and shown by (its own data(); `image` and `path` say where it was found,
    the one place every read of the walk passes)."""
    return node.data()


def node_at(root, path: tuple):
    """Return the node at `path` (components) under `root`, or None."""
    node = root
    for name in path:
        node = node.child(name) if node is not None and node.is_directory else None
    return node


def compare(old: Side, new: Side, path: tuple, values: bool = False):
    """Yield the changes from `old` to `new` at and below `path`, in path order."""
    yield from _walk(old, new, path, node_at(old.root, path), node_at(new.root, path), values)


def _walk(old: Side, new: Side, path: tuple, a, b, values: bool):
    if a is None and b is None:
        return
    if a is None or b is None:
        side, node = (new, b) if a is None else (old, a)
        data = node_data(side.image, path, node) if values or not node.is_directory else None
        yield Change(path, ADDED, new=data) if a is None else Change(path, REMOVED, old=data)
        return
    if _same(old.image, new.image, path):
        return
    if a.is_directory and b.is_directory:
        yield from _walk_children(old, new, path, a, b, values)
    elif not a.is_directory and not b.is_directory:
        change = leaf_change(path, node_data(old.image, path, a), node_data(new.image, path, b))
        if change is not None:
            yield change
    else:
        yield from _walk(old, new, path, a, None, values)
        yield from _walk(old, new, path, None, b, values)


def _walk_children(old: Side, new: Side, path: tuple, a, b, values: bool):
    for name in sorted(set(a.child_names()) | set(b.child_names())):
        child = path + (name,)
        if child not in SKIPPED_BELOW:
            yield from _walk(old, new, child, a.child(name), b.child(name), values)


def leaf_change(path: tuple, before, after) -> Change | None:
    """Return the change between two leaf values (typed records give their changed fields), or None."""
    if before == after:
        return None
    if isinstance(before, dict) and isinstance(after, dict):
        names = list(before) + [k for k in after if k not in before]
        fields = tuple(FieldChange(k, before.get(k), after.get(k)) for k in names if before.get(k) != after.get(k))
        return Change(path, CHANGED, fields=fields)
    return Change(path, CHANGED, old=before, new=after)


def _same(a, b, path: tuple) -> bool:
    """Tell cheaply that `path` holds the same data in images `a` and `b` (False: not known, walk it)."""
    if path[:1] != ("image",) or len(path) < 2:
        return False
    if len(path) == 2:
        area = _AREAS.get(path[1])
        return area is not None and getattr(a, area) is getattr(b, area)
    if path[1] == "topics" and len(path) in (4, 5):
        return _same_topic_part(a.topics, b.topics, path[2:])
    return False


def _topic(topics, table: str, name: str):
    if table == "byName":
        return topics.by_name.get(name)
    try:
        return topics.by_id.get(bytes(Uuid.from_string(name)))
    except ValueError:
        return None


def _same_topic_part(a, b, rest: tuple) -> bool:
    """Tell whether a topic (or one of its partitions) is the same object, or has equal raw records."""
    ta, tb = _topic(a, rest[0], rest[1]), _topic(b, rest[0], rest[1])
    if ta is None or tb is None:
        return False
    if ta is tb:
        return True
    if (ta.name, ta.topic_id) != (tb.name, tb.topic_id):
        return False
    if len(rest) == 2:
        return ta.partitions == tb.partitions
    if not rest[2].isdigit():
        return False
    ea, eb = ta.partitions.get(int(rest[2])), tb.partitions.get(int(rest[2]))
    return ea is not None and (ea is eb or (type(ea) is bytes and ea == eb))
