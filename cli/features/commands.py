"""The six kafka-features sub-commands: Kafka 3.9 FeatureCommand's describe / upgrade / downgrade / disable with
its texts, and Kafka 4.0's --release-version, version-mapping and feature-dependencies with 4.0's texts.

Rules:
- Arguments are checked before any request, in Kafka's order, with its messages; they fail with 1, whatever
  --output asks. Client errors map to exit codes in common.admin.admin_call: unreachable / timeout /
  not Kafka / TLS or SASL failure -> 69, a server error answering describe -> 1, worded as its message alone.
- Light to import (the tool's --help loads it): the Admin client (controller.client.admin) is imported when a
  request is made.
- --metadata prints nothing first (Kafka 4.0 added a deprecation line; 3.9 has none) and an unknown version
  fails with 3.9's "Unsupported metadata.version ..."; --release-version fails with 4.0's "Unknown ...".
- An update is a dict {feature: (level, upgrade type)}; its results print one line per feature, sorted by
  name, on stdout; any failure then ends with "N out of M operation(s) failed." (stderr, exit 1).
- version-mapping and feature-dependencies print kafka-storage's texts (storage.tool's functions); their
  lookup errors are FeatureCommand's.
"""
from __future__ import annotations

from ..common.admin import Failure, admin_call
from ..common.boundary import usage_exit
from ..common.output import structured
from ..common.status import ExitStatus

KRAFT_VERSION = "kraft.version"
KRAFT_VERSION_HINT = ("kraft.version follows the quorum: a static quorum (controller.quorum.voters) keeps 0. The other "
                      "features can be changed without it: --metadata VERSION, or --feature NAME=LEVEL for each one")


def _bad(ctx, message: str) -> Failure:
    """Return a Failure for bad arguments: Kafka's 1, whatever --output asks (common.usage_exit)."""
    return Failure(message, usage_exit("kafka-features"))


def server_words(error) -> str:
    """Return kafka-features' line for a controller.client.admin.ServerError: the exception's message."""
    return error.message


# ---------------------------------------------------------------- describe


def level_text(feature: str, level: int) -> str:
    """Return a level as FeatureCommand.levelToString: metadata.version's as its version string."""
    from kraftsman.storage import features as ft

    if feature != ft.METADATA_VERSION:
        return str(level)
    try:
        return ft.by_level(level).version
    except ft.FeatureError:
        return f"UNKNOWN {level}"


def format_describe(meta) -> str:
    """Return Kafka's `describe` lines: the supported features sorted by name (unfinalized: level 0)."""
    epoch = "-" if meta.epoch is None else str(meta.epoch)
    lines = []
    for name in sorted(meta.supported):
        low, high = meta.supported[name]
        lines.append(f"Feature: {name}\tSupportedMinVersion: {level_text(name, low)}\tSupportedMaxVersion: "
                     f"{level_text(name, high)}\tFinalizedVersionLevel: {level_text(name, meta.finalized.get(name, 0))}"
                     f"\tEpoch: {epoch}")
    return "".join(line + "\n" for line in lines)


def describe(args, ctx) -> int:
    """Print the supported and finalized features of the node reached (ApiVersions)."""
    meta = admin_call(ctx.admin().describe_features, wording=server_words)
    rows = [{"name": name, "supported_min_version": low, "supported_max_version": high,
             "finalized_version_level": meta.finalized.get(name, 0)}
            for name, (low, high) in sorted(meta.supported.items())]
    ctx.emit(format_describe(meta), finalized_features_epoch=meta.epoch, features=rows)
    return ExitStatus.OK


# ---------------------------------------------------------------- building the updates


def feature_update(ctx, level: int, kind: int) -> tuple[int, int]:
    """Return (level, kind) or fail as Kafka's FeatureUpdate constructor does."""
    from kraftsman.controller.client.admin import UPGRADE

    if level == 0 and kind == UPGRADE:
        raise _bad(ctx, "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided "
                        "maxVersionLevel:0 is < 1.")
    if level < 0:
        raise _bad(ctx, "Cannot specify a negative version level.")
    return level, kind


def _metadata_version(ctx, text: str, adjective: str = "Unknown"):
    """Return the MetadataVersion of `text` or fail with FeatureCommand's list of supported versions."""
    from kraftsman.storage import features as ft

    try:
        return ft.from_version_string(text)
    except ft.FeatureError:
        raise _unknown_metadata_version(ctx, text, adjective) from None


def _unknown_metadata_version(ctx, text: str, adjective: str = "Unknown") -> Failure:
    """Return FeatureCommand's failure for `text`: "Unsupported" in 3.9 (--metadata), "Unknown" in 4.0."""
    from kraftsman.storage import features as ft

    supported = [mv.version for mv in ft.VERSIONS if ft.MINIMUM_BOOTSTRAP_VERSION <= mv <= ft.LATEST_PRODUCTION]
    return _bad(ctx, f"{adjective} metadata.version {text}. Supported metadata.version are {', '.join(supported)}")


def release_updates(ctx, release: str, kind: int) -> dict[str, tuple[int, int]]:
    """Return metadata.version and every production feature at its default level for `release`; an upgrade
    leaves out the features whose level would be 0."""
    from kraftsman.controller.client.admin import UPGRADE
    from kraftsman.storage import features as ft

    mv = _metadata_version(ctx, release)
    if mv.level < 1:           # a pre-KRaft version: Kafka's FeatureUpdate fails inside the same try
        raise _unknown_metadata_version(ctx, release)
    updates = {ft.METADATA_VERSION: (mv.level, kind)}
    for name, level in ft.default_levels(mv).items():
        if kind != UPGRADE or level > 0:
            updates[name] = (level, kind)
    return updates


def flag_updates(args, ctx, kind: int) -> dict[str, tuple[int, int]]:
    """Return the updates of --release-version, or of --metadata and --feature (upgrade and downgrade)."""
    from kraftsman.storage import features as ft

    if args.release_version is not None and (args.metadata is not None or args.feature):
        raise _bad(ctx, "Can not specify `release-version` with other feature flags.")
    if args.release_version is not None:
        return release_updates(ctx, args.release_version, kind)
    updates = {}
    if args.metadata is not None:
        mv = _metadata_version(ctx, args.metadata, "Unsupported")
        updates[ft.METADATA_VERSION] = feature_update(ctx, mv.level, kind)
    for item in args.feature or ():
        name, level = _assignment(ctx, item)
        update = feature_update(ctx, level, kind)
        if name in updates:
            raise _bad(ctx, f"Feature {name} was specified more than once.")
        updates[name] = update
    return updates


def _assignment(ctx, text: str) -> tuple[str, int]:
    """Parse `name=level` with FeatureCommand.parseNameAndLevel's messages."""
    from kraftsman.storage import features as ft

    try:
        return ft.parse_feature_assignment(text)
    except ft.FeatureError as e:
        raise _bad(ctx, str(e)) from None


def disable_updates(args, ctx, kind: int) -> dict[str, tuple[int, int]]:
    """Return level 0 for every --feature of `disable`."""
    updates = {}
    for name in args.feature or ():
        if name in updates:
            raise _bad(ctx, f"Feature {name} was specified more than once.")
        updates[name] = (0, kind)
    return updates


# ---------------------------------------------------------------- sending them


def result_line(op: str, name: str, level: int, error: str | None, dry_run: bool) -> str:
    """Return FeatureCommand's line for one feature's result."""
    if error is not None:
        what = f"disable {name}" if op == "disable" else f"{op} {name} to {level}"
        return f"{'Can not' if dry_run else 'Could not'} {what}. {error}"
    done = "disabled." if op == "disable" else f"{op}d to {level}."
    return f"{name}{' can be ' if dry_run else ' was '}{done}"


def send_updates(op: str, ctx, updates: dict[str, tuple[int, int]], dry_run: bool) -> int:
    """Send the updates in one request, print a line per feature and fail when some did not pass."""
    if not updates:
        raise _bad(ctx, f"You must specify at least one feature to {op}")
    if any(not name.strip() for name in updates):       # Kafka's Admin.updateFeatures checks this
        raise _bad(ctx, "Provided feature can not be empty.")
    from kraftsman.controller.client import admin as ka

    try:
        found = admin_call(ctx.admin().update_features, updates, dry_run, wording=server_words)
    except Failure as e:
        if e.status == ExitStatus.UNAVAILABLE:
            raise
        found = {name: str(e) for name in updates}      # as Kafka: every feature fails with the exception
    failed = sum(error is not None for error in found.values())
    lines = [result_line(op, name, updates[name][0], found[name], dry_run) for name in sorted(found)]
    kinds = {ka.UPGRADE: "upgrade", ka.SAFE_DOWNGRADE: "safe_downgrade", ka.UNSAFE_DOWNGRADE: "unsafe_downgrade"}
    results = [{"feature": name, "level": updates[name][0], "upgrade_type": kinds[updates[name][1]],
                "error": found[name]} for name in sorted(found)]
    status = ExitStatus.ERROR if failed else ExitStatus.OK
    ctx.emit("\n".join(lines), status=int(status), dry_run=dry_run, results=results, warnings=[])
    if failed and not structured(ctx.args.output):
        ctx.env.stderr.write(f"{failed} out of {len(updates)} operation(s) failed.\n")
        if found.get(KRAFT_VERSION) is not None and len(updates) > 1:
            ctx.env.stderr.write(f"kafka-features: hint: {KRAFT_VERSION_HINT}\n")
    return status


def _kind(args) -> int:
    from kraftsman.controller.client.admin import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE

    return UNSAFE_DOWNGRADE if getattr(args, "unsafe", False) else SAFE_DOWNGRADE


def upgrade(args, ctx) -> int:
    """Upgrade metadata.version and other features (UpgradeType UPGRADE)."""
    from kraftsman.controller.client.admin import UPGRADE

    return send_updates("upgrade", ctx, flag_updates(args, ctx, UPGRADE), args.dry_run)


def downgrade(args, ctx) -> int:
    """Downgrade features (SAFE_DOWNGRADE, or UNSAFE_DOWNGRADE with --unsafe)."""
    return send_updates("downgrade", ctx, flag_updates(args, ctx, _kind(args)), args.dry_run)


def disable(args, ctx) -> int:
    """Set features to level 0 (a downgrade)."""
    return send_updates("disable", ctx, disable_updates(args, ctx, _kind(args)), args.dry_run)


# ---------------------------------------------------------------- lookups (no connection)


def version_mapping(args, ctx) -> int:
    """Print metadata.version and each production feature's default level for a release."""
    from kraftsman.storage import features as ft

    from ..storage import tool as storage_tool

    try:
        text = storage_tool.version_mapping_text(args.release_version)
    except storage_tool.Failure as e:
        raise _bad(ctx, str(e)) from None
    mv = ft.from_version_string(args.release_version or str(ft.LATEST_PRODUCTION))
    ctx.emit(text, release_version=args.release_version or str(ft.LATEST_PRODUCTION),
             metadata_version_level=mv.level, features=ft.default_levels(mv))
    return ExitStatus.OK


def dependencies(ctx, name: str, level: int) -> tuple[tuple[str, int], ...]:
    """Return what `name=level` requires, or fail with FeatureCommand's lookup messages."""
    from kraftsman.storage import features as ft

    try:
        if name == ft.METADATA_VERSION:
            ft.by_level(level)           # "Unknown metadata.version <n>"
            return ()
    except ft.FeatureError as e:
        raise _bad(ctx, str(e)) from None
    known = ft.feature(name)
    if known is None:
        raise _bad(ctx, f"Unknown feature: {name}")
    definition = known.level(level)
    if definition is None:               # Feature.fromFeatureLevel(level, true)
        raise _bad(ctx, f"No feature:{name} with feature level {level}")
    return definition.dependencies


def feature_dependencies(args, ctx) -> int:
    """Print what each --feature name=level requires (kafka-storage's text); stop at the first bad one."""
    from ..storage.tool import dependency_text

    rows = []
    for item in args.feature:
        name, level = _assignment(ctx, item)
        deps = dependencies(ctx, name, level)
        if not structured(ctx.args.output):
            ctx.env.stdout.write(dependency_text(name, level, deps))
        rows.append({"feature": name, "level": level,
                     "dependencies": [{"feature": dep, "level": dep_level} for dep, dep_level in deps]})
    if structured(ctx.args.output):
        ctx.emit("", features=rows)
    return ExitStatus.OK
