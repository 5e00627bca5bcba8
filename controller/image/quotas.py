"""Client quotas: entity -> {quota key: float value}.

Rules:
- An entity is a sorted tuple of (entity type, entity name or None for the default entity).
- `Remove` deletes the key; an entity left with no quota disappears.
- Node names follow ClientQuotasImageNode: clientId(..), ip(..), user(..) joined by '_',
  with '\\', '(' and ')' escaped by '\\'.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion

_NODE_PARTS = (("client-id", "clientId"), ("ip", "ip"), ("user", "user"))


def _escape(text: str) -> str:
    return "".join("\\" + c if c in "\\()" else c for c in text)


def entity_node_name(entity: tuple) -> str:
    """Return the shell's directory name of a quota entity."""
    names = dict(entity)
    parts = [f"{label}({_escape(names[kind] or '')})" for kind, label in _NODE_PARTS if kind in names]
    return "_".join(parts)


class ClientQuotasImage:
    """Quota values per entity."""

    __slots__ = ("entities",)

    def __init__(self, entities: dict | None = None):
        self.entities = entities if entities is not None else {}

    def is_empty(self) -> bool:
        """Tell whether there is no quota."""
        return not self.entities

    def write(self):
        """Yield one ClientQuotaRecord per entity and key."""
        cls = codec.message_class("ClientQuotaRecord")
        for entity in sorted(self.entities, key=repr):
            for key, value in sorted(self.entities[entity].items()):
                data = [cls.EntityData(entity_type=kind, entity_name=name) for kind, name in entity]
                yield ApiMessageAndVersion(cls(entity=data, key=key, value=value, remove=False), 0)


class ClientQuotasDelta:
    """Collect quota changes."""

    def __init__(self, image: ClientQuotasImage):
        self.image = image
        self.entities = None

    def replay(self, message) -> None:
        """Apply a ClientQuotaRecord."""
        if self.entities is None:
            self.entities = dict(self.image.entities)
        entity = tuple(sorted((e.entity_type, e.entity_name) for e in message.entity))
        values = dict(self.entities.get(entity, {}))
        if message.remove:
            values.pop(message.key, None)
        else:
            values[message.key] = message.value
        if values:
            self.entities[entity] = values
        else:
            self.entities.pop(entity, None)

    def apply(self) -> ClientQuotasImage:
        """Return the resulting ClientQuotasImage."""
        return self.image if self.entities is None else ClientQuotasImage(self.entities)
