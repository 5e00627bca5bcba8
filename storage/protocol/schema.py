"""Load kraftsman's message specs (Kafka's spec format, stored as YAML) into immutable models.

Rules:
- One spec file per message, named after the message; the spec covers every version.
- A struct type is either declared inline (a field with `fields`) or named in `commonStructs`.
- Nothing here encodes bytes: the codec compiles these models once per (message, version).
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

from ..errors import StorageError
from . import schema_cache

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")

PRIMITIVES = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64",
    "string", "bytes", "records", "uuid",
})


class SchemaError(StorageError):
    """A spec file is missing or malformed."""


@dataclass(frozen=True)
class Versions:
    """Hold an inclusive version range; `hi` is None for an open range ('3+')."""

    lo: int
    hi: int | None

    @classmethod
    def parse(cls, text: str | None) -> "Versions":
        """Parse Kafka's range syntax: '0+', '1-3', '2' or 'none'."""
        text = (text or "none").strip()
        if text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        lo, _, hi = text.partition("-")
        return cls(int(lo), int(hi or lo))

    def __contains__(self, version: int) -> bool:
        return self.lo <= version and (self.hi is None or version <= self.hi)

    def __str__(self) -> str:
        if self is NO_VERSIONS or self.lo < 0:
            return "none"
        if self.hi is None:
            return f"{self.lo}+"
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


NO_VERSIONS = Versions(-1, -2)


@dataclass(frozen=True)
class FieldSpec:
    """Describe one field: its type string, version gates, tag and default."""

    name: str
    type: str
    versions: Versions
    nullable_versions: Versions = NO_VERSIONS
    tagged_versions: Versions = NO_VERSIONS
    tag: int | None = None
    default: str | None = None
    ignorable: bool = False
    map_key: bool = False
    entity_type: str | None = None
    flexible_versions: Versions | None = None
    fields: tuple["FieldSpec", ...] = ()

    @property
    def is_array(self) -> bool:
        """Tell whether the type is an array ('[]T')."""
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        """Return the element type of an array, or the type itself."""
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """Tell whether the (element) type is a struct rather than a primitive."""
        return self.element_type not in PRIMITIVES


@dataclass(frozen=True)
class StructSpec:
    """Name a struct and its fields (inline or common)."""

    name: str
    versions: Versions
    fields: tuple[FieldSpec, ...]


@dataclass(frozen=True)
class MessageSpec:
    """Describe a whole message: kind, api key, valid and flexible versions, fields, structs."""

    name: str
    type: str
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[FieldSpec, ...]
    structs: dict[str, StructSpec] = field(default_factory=dict, compare=False, hash=False)
    listeners: tuple[str, ...] = ()
    latest_version_unstable: bool = False

    @property
    def versions(self) -> range:
        """Return every valid version as a range."""
        return range(self.valid_versions.lo, self.valid_versions.hi + 1)

    def struct(self, name: str) -> StructSpec:
        """Return the struct named `name` declared anywhere in this message."""
        try:
            return self.structs[name]
        except KeyError:
            raise SchemaError(f"{self.name}: unknown struct type {name!r}") from None


def _field(raw: dict) -> FieldSpec:
    flexible = raw.get("flexibleVersions")
    tag = raw.get("tag")
    return FieldSpec(
        name=raw["name"],
        type=raw["type"],
        versions=Versions.parse(raw.get("versions")),
        nullable_versions=Versions.parse(raw.get("nullableVersions")),
        tagged_versions=Versions.parse(raw.get("taggedVersions")),
        tag=None if tag is None else int(tag),
        default=None if raw.get("default") is None else str(raw["default"]),
        ignorable=bool(raw.get("ignorable", False)),
        map_key=bool(raw.get("mapKey", False)),
        entity_type=raw.get("entityType"),
        flexible_versions=None if flexible is None else Versions.parse(flexible),
        fields=tuple(_field(f) for f in raw.get("fields", ())),
    )


def _collect_structs(fields, structs: dict) -> None:
    for f in fields:
        if f.fields:
            structs[f.element_type] = StructSpec(f.element_type, f.versions, f.fields)
            _collect_structs(f.fields, structs)


def build_message(raw: dict) -> MessageSpec:
    """Build a MessageSpec from a parsed spec mapping."""
    fields = tuple(_field(f) for f in raw["fields"])
    structs: dict[str, StructSpec] = {}
    for common in raw.get("commonStructs", ()):
        cfields = tuple(_field(f) for f in common["fields"])
        structs[common["name"]] = StructSpec(common["name"], Versions.parse(common["versions"]), cfields)
        _collect_structs(cfields, structs)
    _collect_structs(fields, structs)
    api_key = raw.get("apiKey")
    listeners = raw.get("listeners") or ()
    return MessageSpec(
        name=raw["name"],
        type=raw["type"],
        api_key=None if api_key is None else int(api_key),
        valid_versions=Versions.parse(str(raw["validVersions"])),
        flexible_versions=Versions.parse(str(raw.get("flexibleVersions", "none"))),
        fields=fields,
        structs=structs,
        listeners=tuple(listeners),
        latest_version_unstable=bool(raw.get("latestVersionUnstable", False)),
    )


def _yaml_loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=None)
def load(name: str) -> MessageSpec:
    """Load the spec of message `name` from the packaged schema folder (parsed YAML cached, see schema_cache)."""
    try:
        with open(os.path.join(SCHEMA_DIR, f"{name}.yaml"), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise SchemaError(f"no schema for message {name!r}") from None
    return build_message(parse_text(name, text))


def parse_text(name: str, text: str) -> dict:
    """Return the mapping in YAML `text`, from the cache when this exact text was parsed before."""
    cached_at = schema_cache.entry_path(name, text)
    raw = schema_cache.read(cached_at)
    if raw is None:
        import yaml

        raw = yaml.load(text, Loader=_yaml_loader())
        schema_cache.write(cached_at, raw)
    return raw


@functools.lru_cache(maxsize=None)
def names() -> tuple[str, ...]:
    """List every message name that has a spec file."""
    return tuple(sorted(n[:-5] for n in os.listdir(SCHEMA_DIR) if n.endswith(".yaml")))


_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_name(name: str) -> str:
    """Turn a spec field name into a Python attribute ('KRaftVersion' -> 'kraft_version')."""
    return _SNAKE.sub("_", name.replace("KRaft", "Kraft")).lower()


def json_name(name: str) -> str:
    """Turn a spec field name into Kafka's JSON key: only the first letter lower-cased."""
    return name[:1].lower() + name[1:]
