"""Configs by resource: (resource type, resource name) -> {key: value}.

Rules:
- A ConfigRecord with a null value deletes the key; a resource left with no key disappears.
- Node names follow ConfigurationsImageNode: TYPE, or TYPE:name for a non-default resource.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion

RESOURCE_TYPES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}


def resource_node_name(resource: tuple[int, str]) -> str:
    """Return the shell's name for a config resource ('BROKER', 'TOPIC:foo')."""
    kind, name = resource
    kind_name = RESOURCE_TYPES.get(kind, "UNKNOWN")
    return kind_name if not name else f"{kind_name}:{name}"


class ConfigsImage:
    """Config values of every resource."""

    __slots__ = ("resources",)

    def __init__(self, resources: dict | None = None):
        self.resources = resources if resources is not None else {}

    def is_empty(self) -> bool:
        """Tell whether no resource has a config."""
        return not self.resources

    def write(self):
        """Yield one ConfigRecord per key, resources and keys sorted."""
        cls = codec.message_class("ConfigRecord")
        for (kind, name) in sorted(self.resources):
            values = self.resources[(kind, name)]
            for key in sorted(values):
                yield ApiMessageAndVersion(cls(resource_type=kind, resource_name=name, name=key,
                                               value=values[key]), 0)


class ConfigsDelta:
    """Collect config changes (copy-on-write per resource)."""

    def __init__(self, image: ConfigsImage):
        self.image = image
        self.resources = None
        self.owned: set = set()

    def replay(self, message) -> None:
        """Apply a ConfigRecord."""
        if self.resources is None:
            self.resources = dict(self.image.resources)
        resource = (message.resource_type, message.resource_name)
        values = self.resources.get(resource)
        if resource not in self.owned:
            values = dict(values or {})
            self.owned.add(resource)
            self.resources[resource] = values
        if message.value is None:
            values.pop(message.name, None)
        else:
            values[message.name] = message.value
        if not values:
            del self.resources[resource]
            self.owned.discard(resource)

    def delete_resource(self, resource: tuple[int, str]) -> None:
        """Drop every key of one resource (a removed topic's configs, as Kafka's ConfigurationsDelta)."""
        if self.resources is None:
            if resource not in self.image.resources:
                return
            self.resources = dict(self.image.resources)
        self.resources.pop(resource, None)
        self.owned.discard(resource)

    def apply(self) -> ConfigsImage:
        """Return the resulting ConfigsImage."""
        return self.image if self.resources is None else ConfigsImage(self.resources)
