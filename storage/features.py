"""Feature levels besides metadata.version (Kafka's Feature, FeatureVersion) as data, one table per release.

Rules:
- A FeatureSet is one release's production features, in Kafka's enum order (the print order of
  version-mapping): 3.9 kraft.version, transaction.version, group.version (kraftsman's 3.9 table, with 4.0's
  bootstrap versions for the unstable levels); 4.0 adds eligible.leader.replicas.version; 4.1 and 4.2 add
  share.version and streams.version.
- Each level has a bootstrap metadata.version (the first one whose default it is) and dependencies; each feature
  has an explicit latest production level (4.1's streams.version stays 0 though level 1 is defined).
- Validation texts per release: 3.9 "<f> <l> must be used with <dep> <n>"; 4.x Feature.validateVersion's
  "<f> could not be set to <l> because it depends on ..." (and the metadata.version=7 floor for any level >= 1).
- Pure data and logic: no I/O, no printing; errors are FeatureError with Kafka's message.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .metadata_versions import METADATA_VERSION, TABLES, FeatureError, MetadataVersion, MetadataVersionTable

__all__ = ["METADATA_VERSION", "KRAFT_VERSION", "FeatureError", "Feature", "FeatureLevel", "FeatureSet",
           "FEATURE_SETS", "parse_feature_assignment"]

KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELR_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"


@dataclass(frozen=True)
class FeatureLevel:
    """One level of a feature: the first metadata.version level that bootstraps it, its dependencies."""

    level: int
    bootstrap: int
    dependencies: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Feature:
    """A production feature: its levels (level 0 first) and its latest production level."""

    name: str
    levels: tuple[FeatureLevel, ...]
    latest_production: int

    @property
    def latest_testing(self) -> int:
        """Return the highest defined level."""
        return self.levels[-1].level

    def level(self, level: int) -> FeatureLevel | None:
        """Return the definition of `level`, or None if it is not defined."""
        return next((fl for fl in self.levels if fl.level == level), None)

    def default_level(self, mv: MetadataVersion) -> int:
        """Return the last level whose bootstrap metadata.version is <= `mv` (Feature.defaultVersion)."""
        return max(fl.level for fl in self.levels if fl.bootstrap <= mv.level)

    def from_level(self, level: int, unstable_enabled: bool) -> FeatureLevel:
        """Return level `level` or raise Feature.fromFeatureLevel's error."""
        found = self.level(level)
        if found is None or (not unstable_enabled and level > self.latest_production):
            raise FeatureError(f"No feature:{self.name} with feature level {level}")
        return found


@dataclass(frozen=True)
class FeatureSet:
    """One release's production features and the rules it checks them with."""

    release: str
    features: tuple[Feature, ...]
    metadata: MetadataVersionTable
    validation: str = "4.x"      # the texts of Feature.validateVersion: "3.9" or "4.x"

    def feature(self, name: str) -> Feature | None:
        """Return the production feature called `name`, or None."""
        return next((f for f in self.features if f.name == name), None)

    def names(self) -> list[str]:
        """Return the production feature names, sorted."""
        return sorted(f.name for f in self.features)

    def default_levels(self, mv: MetadataVersion) -> dict[str, int]:
        """Map each production feature, in enum order, to its default level for `mv`."""
        return {f.name: f.default_level(mv) for f in self.features}

    def supported_ranges(self, unstable_enabled: bool = False) -> dict[str, tuple[int, int]]:
        """Return what a node of this release advertises (BrokerFeatures.defaultSupportedFeatures): metadata.version
        from its floor, every feature whose top level is above 0 from 0; features topping at 0 are left out."""
        top = self.metadata.latest_testing if unstable_enabled else self.metadata.latest_production
        ranges = {METADATA_VERSION: (self.metadata.minimum_kraft.level, top.level)}
        for f in self.features:
            high = f.latest_testing if unstable_enabled else f.latest_production
            if high > 0:
                ranges[f.name] = (0, high)
        return ranges

    def dependencies_of(self, name: str, level: int) -> tuple[tuple[str, int], ...]:
        """Return the (feature, level) pairs `name=level` requires (any defined level), or raise the
        feature-dependencies command's lookup errors."""
        if name == METADATA_VERSION:
            if not self.metadata.knows_level(level):
                raise FeatureError(f"Unknown metadata.version {level}")
            return ()
        known = self.feature(name)
        if known is None:
            raise FeatureError(f"Unknown feature: {name}")
        definition = known.level(level)
        if definition is None:
            raise FeatureError(f"Feature level {level} is not supported for feature {name}")
        return definition.dependencies

    def validate(self, name: str, level: int, levels: dict[str, int]) -> None:
        """Raise Feature.validateVersion's error when `name=level` needs what `levels` does not give."""
        definition = self.feature(name).level(level)
        if self.validation == "3.9":
            for dep, needed in definition.dependencies:
                if levels.get(dep, 0) < needed:
                    raise FeatureError(f"{name} {level} must be used with {dep} {needed}")
            return
        floor = self.metadata.minimum
        if level >= 1 and levels.get(METADATA_VERSION, 0) < floor.level:
            raise FeatureError(f"{name} could not be set to {level} because it depends on "
                               f"{METADATA_VERSION}={floor.level} ({floor})")
        for dep, needed in definition.dependencies:
            if dep not in levels or levels[dep] < needed:
                raise FeatureError(f"{name} could not be set to {level} because it depends on {dep} level {needed}")

    def validate_levels(self, levels: dict[str, int], unstable_enabled: bool) -> None:
        """Check every level is defined (and stable unless allowed) with its dependencies met, in name order."""
        for name in sorted(levels):
            if name != METADATA_VERSION:
                self.feature(name).from_level(levels[name], unstable_enabled)
                self.validate(name, levels[name], levels)


def parse_feature_assignment(text: str) -> tuple[str, int]:
    """Parse `name=level` as the format command does (level must fit a Java short)."""
    name, eq, level = text.partition("=")
    if not eq:
        raise FeatureError(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level = name.strip(), level.strip()
    if not re.fullmatch(r"[+-]?\d+", level) or not -2**15 <= int(level) < 2**15:
        raise FeatureError(f"Can't parse feature=level string {text}: unable to parse {level} as a short.")
    return name, int(level)


# ---------------------------------------------------------------- the tables

def _feature(name: str, latest_production: int, *levels) -> Feature:
    return Feature(name, tuple(FeatureLevel(*spec) for spec in levels), latest_production)


def _features_3_9() -> tuple[Feature, ...]:
    return (_feature(KRAFT_VERSION, 1, (0, 1), (1, 21, ((METADATA_VERSION, 21),))),
            _feature(TRANSACTION_VERSION, 0, (0, 1), (1, 24), (2, 24)),
            _feature(GROUP_VERSION, 0, (0, 1), (1, 22)))


def _features_4(release: str) -> tuple[Feature, ...]:
    kraft_deps = ((METADATA_VERSION, 21),) if release == "4.0" else ()
    features = [_feature(KRAFT_VERSION, 1, (0, 7), (1, 21, kraft_deps)),
                _feature(TRANSACTION_VERSION, 2, (0, 7), (1, 24), (2, 24)),
                _feature(GROUP_VERSION, 1, (0, 7), (1, 22)),
                _feature(ELR_VERSION, 1, (0, 7), (1, 26, ((METADATA_VERSION, 23),)))]
    if release != "4.0":
        features += [_feature(SHARE_VERSION, 1, (0, 7), (1, 28)),
                     _feature(STREAMS_VERSION, 0 if release == "4.1" else 1, (0, 7), (1, 29))]
    return tuple(features)


FEATURE_SETS: dict[str, FeatureSet] = {
    "3.9": FeatureSet("3.9", _features_3_9(), TABLES["3.9"], validation="3.9"),
    **{name: FeatureSet(name, _features_4(name), TABLES[name]) for name in ("4.0", "4.1", "4.2")},
}
