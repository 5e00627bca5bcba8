"""Metadata versions and feature levels (MetadataVersion, Features, FeatureVersion) as data.

Rules:
- Pure data and logic: no I/O, no printing; errors are FeatureError with Kafka's message.
- Levels, IBP strings and bootstrap versions follow Kafka 3.9; LATEST_PRODUCTION is 3.9-IV0
  (level 21). Levels 22..25 (4.0-IV0..IV3) exist but are unstable, as in a 3.9 build.
- Feature tables list production features in Kafka's enum order
  (kraft.version, transaction.version, group.version).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"


class FeatureError(ValueError):
    """A release version or feature level Kafka would reject; the message is Kafka's."""


@dataclass(frozen=True, order=True)
class MetadataVersion:
    """One metadata.version: its position, feature level (-1 before KRaft) and IBP string."""

    ordinal: int
    level: int = field(compare=False)
    version: str = field(compare=False)

    @property
    def release(self) -> str:
        """Return the release part of the IBP string (`3.9` for `3.9-IV0`)."""
        return self.version.split("-", 1)[0]

    @property
    def is_kraft_supported(self) -> bool:
        """Tell whether KRaft supports this version (3.0-IV1 or later)."""
        return self.level >= 1

    @property
    def is_production(self) -> bool:
        """Tell whether this version is stable in kraftsman (at most LATEST_PRODUCTION)."""
        return self.level <= LATEST_PRODUCTION.level

    def __str__(self) -> str:
        return self.version


_PRE_KRAFT = ("0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1",
              "0.10.1-IV2", "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0",
              "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0",
              "2.3-IV1", "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2",
              "2.8-IV0", "2.8-IV1", "3.0-IV0")
_IBP = ("3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
        "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1",
        "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
        "4.0-IV3")
ALL_VERSIONS: tuple[MetadataVersion, ...] = tuple(
    MetadataVersion(i, -1, s) for i, s in enumerate(_PRE_KRAFT)) + tuple(
    MetadataVersion(len(_PRE_KRAFT) + i, i + 1, s) for i, s in enumerate(_IBP))
VERSIONS: tuple[MetadataVersion, ...] = tuple(mv for mv in ALL_VERSIONS if mv.level >= 1)
_BY_LEVEL = {mv.level: mv for mv in VERSIONS}
_BY_STRING = {mv.version: mv for mv in ALL_VERSIONS}
for _mv in ALL_VERSIONS:                  # "3.9" means the newest IV of 3.9 (later ones win)
    _BY_STRING[_mv.release] = _mv

MINIMUM_KRAFT_VERSION = _BY_LEVEL[1]      # 3.0-IV1
MINIMUM_BOOTSTRAP_VERSION = _BY_LEVEL[4]  # 3.3-IV0
SCRAM_MINIMUM = _BY_LEVEL[11]             # 3.5-IV2
IBP_3_9_IV0 = _BY_LEVEL[21]
IBP_4_0_IV0 = _BY_LEVEL[22]
IBP_4_0_IV2 = _BY_LEVEL[24]
LATEST_PRODUCTION = IBP_3_9_IV0
LATEST_TESTING = VERSIONS[-1]


def by_level(level: int) -> MetadataVersion:
    """Return the metadata.version of a feature level or raise `Unknown metadata.version <n>`."""
    try:
        return _BY_LEVEL[level]
    except KeyError:
        raise FeatureError(f"Unknown metadata.version {level}") from None


def from_version_string(text: str) -> MetadataVersion:
    """Parse `X.Y` (newest IV of X.Y) or `X.Y-IVn`, as MetadataVersion.fromVersionString."""
    key = _version_key(text)
    if key not in _BY_STRING:
        raise FeatureError(f"Version {text} is not a valid version")
    return _BY_STRING[key]


def _version_key(text: str) -> str:
    """Keep the release (3 segments for 0.x, else 2) and any `-IVn` suffix, as Kafka does."""
    main, dash, iv = text.partition("-")
    parts = main.split(".")
    keep = 3 if parts[0] == "0" else 2
    return ".".join(parts[:keep]) + (dash + iv if dash else "")


# ---------------------------------------------------------------- production features

@dataclass(frozen=True)
class FeatureLevel:
    """One level of a feature: the first metadata.version that bootstraps it, its dependencies."""

    level: int
    bootstrap: MetadataVersion
    dependencies: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Feature:
    """A production feature and its levels, level 0 first."""

    name: str
    levels: tuple[FeatureLevel, ...]

    @property
    def latest_production(self) -> int:
        """Return the highest level whose bootstrap version is production."""
        return max(fl.level for fl in self.levels if fl.bootstrap.is_production)

    @property
    def latest_testing(self) -> int:
        """Return the highest defined level."""
        return self.levels[-1].level

    def level(self, level: int) -> FeatureLevel | None:
        """Return the definition of `level`, or None if it is not defined."""
        return next((fl for fl in self.levels if fl.level == level), None)

    def default_level(self, mv: MetadataVersion) -> int:
        """Return the highest level whose bootstrap metadata.version is <= `mv` (Features.defaultValue)."""
        return max(fl.level for fl in self.levels if fl.bootstrap <= mv)


FEATURES: tuple[Feature, ...] = (
    Feature(KRAFT_VERSION, (FeatureLevel(0, MINIMUM_KRAFT_VERSION),
                            FeatureLevel(1, IBP_3_9_IV0, ((METADATA_VERSION, IBP_3_9_IV0.level),)))),
    Feature("transaction.version", (FeatureLevel(0, MINIMUM_KRAFT_VERSION), FeatureLevel(1, IBP_4_0_IV2),
                                    FeatureLevel(2, IBP_4_0_IV2))),
    Feature("group.version", (FeatureLevel(0, MINIMUM_KRAFT_VERSION), FeatureLevel(1, IBP_4_0_IV0))),
)
_FEATURES = {f.name: f for f in FEATURES}


def feature(name: str) -> Feature | None:
    """Return the production feature called `name`, or None."""
    return _FEATURES.get(name)


def feature_names() -> list[str]:
    """Return the names of the production features, sorted."""
    return sorted(_FEATURES)


def default_levels(mv: MetadataVersion) -> dict[str, int]:
    """Map each production feature, in enum order, to its default level for `mv`."""
    return {f.name: f.default_level(mv) for f in FEATURES}


def parse_feature_assignment(text: str) -> tuple[str, int]:
    """Parse `name=level` as the format command does (level must fit a Java short)."""
    name, eq, level = text.partition("=")
    if not eq:
        raise FeatureError(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level = name.strip(), level.strip()
    if not re.fullmatch(r"[+-]?\d+", level) or not -2**15 <= int(level) < 2**15:
        raise FeatureError(f"Can't parse feature=level string {text}: unable to parse {level} as a short.")
    return name, int(level)


def dependencies_of(name: str, level: int) -> tuple[tuple[str, int], ...]:
    """Return the (feature, level) pairs `name=level` requires, or raise Kafka's lookup errors."""
    if name == METADATA_VERSION:
        by_level(level)
        return ()
    known = feature(name)
    if known is None:
        raise FeatureError(f"Unknown feature: {name}")
    definition = known.level(level)
    if definition is None:
        raise FeatureError(f"Feature level {level} is not supported for feature {name}")
    return definition.dependencies


def validate_levels(levels: dict[str, int], unstable_enabled: bool) -> None:
    """Check every level is defined (and stable unless allowed) with its dependencies met
    (Features.fromFeatureLevel, then Features.validateVersion)."""
    for name in sorted(levels):
        if name == METADATA_VERSION:
            continue
        known, level = _FEATURES[name], levels[name]
        definition = known.level(level)
        if definition is None or (not unstable_enabled and level > known.latest_production):
            raise FeatureError(f"No feature:{name} with feature level {level}")
        for dep, needed in definition.dependencies:
            if dep not in levels or levels[dep] < needed:
                raise FeatureError(f"{name} {level} must be used with {dep} {needed}")
