"""The texts of the two feature look-ups that kafka-storage and kafka-features share (Kafka 4.0's version-mapping
and feature-dependencies), per release, beside the metadata.version and feature tables they print.

Rules:
- version-mapping prints `metadata.version=<level> (<release as typed>)` then one `<feature>=<default level>` line
  per production feature in enum order. The release is read with unstable versions allowed; a bad one fails with
  4.2's MetadataVersion text, or (3.9 as kraftsman serves it, 4.0, 4.1) with
  "Unknown release version '<v>'. Supported versions are: <minimum> to <latest production>".
- feature-dependencies prints `<f>=<l> has no dependencies.` or `<f>=<l> requires:` and one 4-space indented line
  per dependency (`metadata.version=<n> (<version>)`); its errors are StorageTool's one-liners.
- Errors are FeatureError; the tools print them as one line and exit 1.
"""
from __future__ import annotations

from .features import FEATURE_SETS, FeatureError
from .metadata_versions import METADATA_VERSION, MetadataVersion, level


def mapping_version(release: str, text: str | None) -> tuple[str, MetadataVersion]:
    """Return (the release as typed or the default, its metadata.version) for version-mapping."""
    table = FEATURE_SETS[release].metadata
    typed = text if text is not None else str(table.latest_production)
    try:
        return typed, table.parse(typed, unstable_enabled=True)
    except FeatureError as e:
        if table.parse_rule == "4.2":
            raise
        raise FeatureError(f"Unknown release version '{typed}'. Supported versions are: {table.minimum} to "
                           f"{table.latest_production}") from e


def version_mapping(release: str, text: str | None) -> str:
    """Return the version-mapping lines for a release version (default: the latest production one)."""
    typed, mv = mapping_version(release, text)
    lines = [f"{METADATA_VERSION}={mv.level} ({typed})"]
    lines += [f"{name}={n}" for name, n in FEATURE_SETS[release].default_levels(mv).items()]
    return "\n".join(lines) + "\n"


def parse_lookup(item: str) -> tuple[str, int]:
    """Parse one `--feature name=version` of feature-dependencies, with StorageTool's errors."""
    name, eq, version = item.partition("=")
    if not eq:
        raise FeatureError(f"Invalid feature format: {item}. Expected format: 'feature=version' "
                           "(e.g. 'group.version=1')")
    name, version = name.strip(), version.strip()
    try:
        value = int(version)
        if not -2**15 <= value < 2**15:
            raise ValueError(version)
    except ValueError:
        raise FeatureError(f"Invalid version format: {version} for feature {name}") from None
    return name, value


def dependency_text(name: str, n: int, deps) -> str:
    """Return the feature-dependencies text of `name=n` and its (feature, level) dependencies."""
    if name == METADATA_VERSION:
        return f"{name}={n} ({level(n)}) has no dependencies.\n"
    if not deps:
        return f"{name}={n} has no dependencies.\n"
    lines = [f"{name}={n} requires:"]
    for dep, dep_level in deps:
        suffix = f" ({level(dep_level)})" if dep == METADATA_VERSION else ""
        lines.append(f"    {dep}={dep_level}{suffix}")
    return "\n".join(lines) + "\n"


def feature_dependencies(release: str, items) -> str:
    """Return the feature-dependencies text of every `name=version`; raise at the first bad one (its text only:
    Kafka prints the lines before it, callers print what this returns piece by piece with `each_dependency`)."""
    return "".join(text for text in each_dependency(release, items))


def each_dependency(release: str, items):
    """Yield the feature-dependencies text of each `name=version` in turn; raise FeatureError at a bad one."""
    features = FEATURE_SETS[release]
    for item in items:
        name, n = parse_lookup(item)
        yield dependency_text(name, n, features.dependencies_of(name, n))
