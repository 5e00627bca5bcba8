"""metadata.version as data: every level Kafka 3.9 to 4.2 defines, and each release's table of them.

Rules:
- One MetadataVersion object per version string, shared by every release; they order by position (pre-KRaft IBP
  strings first, then feature levels 1 (3.0-IV1) .. 30 (4.3-IV0)).
- A release's MetadataVersionTable says which versions it knows, its floor, its latest production and latest
  testing versions, and how it parses a version string, with that release's error text:
  3.9 "Version X is not a valid version"; 4.0 and 4.1 add "The minimum version is ... and the maximum version
  is ..."; 4.2 says "Unknown metadata.version 'X'. Supported metadata.version are: <list>" and also refuses a
  non-production version unless unstable versions are enabled.
- "X.Y" is the newest version of release X.Y (3.9: the newest defined; 4.x: the newest production one);
  "X.Y.Z" reads as "X.Y" (3.9 keeps three parts for 0.x releases).
- didMetadataChange (METADATA_CHANGED) follows 4.x: level 22 (4.0-IV0) is false and 23 (4.0-IV1, ELR) true.
  Kafka 3.9 gave its own unstable 22/23 other meanings; kraftsman's 3.9 table keeps levels 22-25 unstable with
  4.0's meanings, as it always has.
- Pure data: no I/O; errors are FeatureError with Kafka's message.
"""
from __future__ import annotations

from dataclasses import dataclass, field

METADATA_VERSION = "metadata.version"


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

    def __str__(self) -> str:
        return self.version


_PRE_KRAFT = ("0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1",
              "0.10.1-IV2", "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0",
              "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0",
              "2.3-IV1", "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2",
              "2.8-IV0", "2.8-IV1", "3.0-IV0")
# feature levels 1.. in order; 26-30 exist from 4.0 (26), 4.1 (27-29) and 4.2 (30) on
_IBP = ("3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
        "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1",
        "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
        "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0")
ALL_VERSIONS: tuple[MetadataVersion, ...] = tuple(
    MetadataVersion(i, -1, s) for i, s in enumerate(_PRE_KRAFT)) + tuple(
    MetadataVersion(len(_PRE_KRAFT) + i, i + 1, s) for i, s in enumerate(_IBP))
_BY_LEVEL = {mv.level: mv for mv in ALL_VERSIONS if mv.level >= 1}
_BY_STRING = {mv.version: mv for mv in ALL_VERSIONS}
# levels whose MetadataVersion.didMetadataChange() is true (a downgrade across them may lose metadata)
METADATA_CHANGED = frozenset({1, 3, 5, 6, 7, 8, 11, 13, 14, 15, 17, 23})


def level(n: int) -> MetadataVersion:
    """Return the metadata.version of feature level `n` (any release); raise KeyError when none has it."""
    return _BY_LEVEL[n]


def named(version: str) -> MetadataVersion:
    """Return the metadata.version spelled exactly `version` (e.g. `3.9-IV0`)."""
    return _BY_STRING[version]


def metadata_changed(low: int, high: int) -> bool:
    """Tell whether a version in (low, high] changed the metadata (MetadataVersion.checkIfMetadataChanged)."""
    return any(n in METADATA_CHANGED for n in range(low + 1, high + 1))


@dataclass(frozen=True)
class MetadataVersionTable:
    """One release's metadata.version enum: what it knows, its bounds and how it reads a version string."""

    release: str
    versions: tuple[MetadataVersion, ...]     # every version this release can parse, in order
    minimum: MetadataVersion                  # 3.9: MINIMUM_BOOTSTRAP_VERSION; 4.x: MINIMUM_VERSION
    minimum_kraft: MetadataVersion            # the lowest level nodes advertise (3.9: 3.0-IV1)
    latest_production: MetadataVersion
    parse_rule: str                           # "3.9", "4.0" (4.0, 4.1) or "4.2"

    @property
    def latest_testing(self) -> MetadataVersion:
        """Return the newest version this release defines (stable or not)."""
        return self.versions[-1]

    @property
    def levels(self) -> tuple[MetadataVersion, ...]:
        """Return the KRaft versions (feature level >= 1) this release defines."""
        return tuple(mv for mv in self.versions if mv.level >= 1)

    def is_production(self, mv: MetadataVersion) -> bool:
        """Tell whether `mv` is stable in this release (at most LATEST_PRODUCTION)."""
        return mv <= self.latest_production

    def knows_level(self, n: int) -> bool:
        """Tell whether feature level `n` is one of this release's versions."""
        return self.minimum_kraft.level <= n <= self.latest_testing.level

    def by_level(self, n: int) -> MetadataVersion:
        """Return the version of feature level `n` or raise MetadataVersion.fromFeatureLevel's error."""
        if not self.knows_level(n):
            suffix = "" if self.parse_rule == "3.9" else (
                f". Valid feature levels are from {self.minimum_kraft.level} to {self.latest_testing.level}.")
            raise FeatureError(f"No MetadataVersion with feature level {n}{suffix}")
        return _BY_LEVEL[n]

    def between(self, first: MetadataVersion, last: MetadataVersion) -> list[MetadataVersion]:
        """Return this release's versions from `first` to `last`, both included."""
        return [mv for mv in self.versions if first <= mv <= last]

    def parse(self, text: str, unstable_enabled: bool = False) -> MetadataVersion:
        """Read a version string as this release's MetadataVersion.fromVersionString does."""
        found = self._aliases().get(self._key(text))
        if self.parse_rule == "4.2":
            if found is None or (not unstable_enabled and not self.is_production(found)):
                last = self.latest_testing if unstable_enabled else self.latest_production
                names = ", ".join(str(mv) for mv in self.between(self.minimum, last))
                raise FeatureError(f"Unknown metadata.version '{text}'. Supported metadata.version are: {names}")
            return found
        if found is None:
            if self.parse_rule == "3.9":
                raise FeatureError(f"Version {text} is not a valid version")
            raise FeatureError(f"Version {text} is not a valid version. The minimum version is {self.minimum} "
                               f"and the maximum version is {self.latest_testing}")
        return found

    def _key(self, text: str) -> str:
        if self.parse_rule != "3.9":                      # 4.x: the first two dot-separated parts
            return ".".join(text.split(".")[:2])
        main, dash, iv = text.partition("-")
        parts = main.split(".")
        keep = 3 if parts[0] == "0" else 2
        return ".".join(parts[:keep]) + (dash + iv if dash else "")

    def _aliases(self) -> dict[str, MetadataVersion]:
        """Map each version string, and each release "X.Y" to its newest (4.x: newest production) version."""
        table = {mv.version: mv for mv in self.versions}
        for mv in self.versions:
            if self.parse_rule == "3.9" or self.is_production(mv):
                table[mv.release] = mv
        return table


def _table(release: str, first: str, last: str, production: str, parse_rule: str, *,
           minimum: str | None = None, minimum_kraft: str | None = None) -> MetadataVersionTable:
    lo, hi = _BY_STRING[first], _BY_STRING[last]
    versions = tuple(mv for mv in ALL_VERSIONS if lo <= mv <= hi)
    return MetadataVersionTable(release, versions, _BY_STRING[minimum or first], _BY_STRING[minimum_kraft or first],
                                _BY_STRING[production], parse_rule)


TABLES: dict[str, MetadataVersionTable] = {
    "3.9": _table("3.9", "0.8.0", "4.0-IV3", "3.9-IV0", "3.9", minimum="3.3-IV0", minimum_kraft="3.0-IV1"),
    "4.0": _table("4.0", "3.3-IV3", "4.1-IV0", "4.0-IV3", "4.0"),
    "4.1": _table("4.1", "3.3-IV3", "4.2-IV1", "4.1-IV1", "4.0"),
    "4.2": _table("4.2", "3.3-IV3", "4.3-IV0", "4.2-IV1", "4.2"),
}
