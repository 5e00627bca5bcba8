"""UpdateFeatures (v0-1) on the active controller, as Kafka 3.9's FeatureControlManager.updateFeatures.

Rules:
- Each feature of the request gets its own result, sorted by name (a name given twice: the last update
  counts); the FeatureLevelRecords of the features that pass are appended together, or none with
  validate_only. Errors are INVALID_UPDATE_VERSION (95) with Kafka's texts:
  "Invalid update version <v> for feature <f>. <reason>" or "Invalid metadata.version <v>. <reason>".
- The checks, in Kafka's order: an unknown upgrade type; a level below 0; a level this controller does not
  support (SUPPORTED_FEATURES), or that a registered broker or (from metadata.version 3.7-IV0, KIP-919)
  a registered controller does not support, or a voter that has not registered; a downgrade asked as an
  upgrade or an upgrade asked as a downgrade; then for metadata.version: unknown level, a ZooKeeper
  migration in progress, below 3.3-IV0, and a downgrade across a version that changed the metadata
  (refused, safe or unsafe); for other features, the dependencies of Features.validateVersion against
  the finalized levels with every update of the request applied.
- Version 0's AllowDowngrade means a safe downgrade (UpdateFeaturesRequest.getFeature); from version 1
  UpgradeType says it: 1 upgrade, 2 safe downgrade, 3 unsafe downgrade.
- kraft.version is the Raft layer's (KRaftVersionRecord, ctx.kraft_version): Kafka 3.9 would write a
  FeatureLevelRecord for it that nothing reads; kraftsman accepts the level it already has (no record) and
  refuses any other, saying why.
"""
from __future__ import annotations

from kraftsman.controller.image.features import METADATA_VERSION
from kraftsman.storage import features as ft
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .context import ControllerContext, ControllerResult
from .feature_levels import CONTROLLER_REGISTRATION_LEVEL, SUPPORTED_FEATURES, metadata_version

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
DISABLED = (0, 0)
# metadata.version levels whose MetadataVersion.didMetadataChange() is true in Kafka 3.9 (1..21)
METADATA_CHANGED = frozenset({1, 3, 5, 6, 7, 8, 11, 13, 14, 15, 17})
_RESPONSE = codec.message_class("UpdateFeaturesResponse")
_FEATURE_LEVEL = codec.message_class("FeatureLevelRecord")


class _Invalid(Exception):
    """An update refused with INVALID_UPDATE_VERSION; the message is Kafka's."""


def update_features(ctx: ControllerContext, request) -> ControllerResult:
    """Answer UpdateFeatures: one result per feature, FeatureLevelRecords for those that pass."""
    updates = {u.feature: (u.max_version_level, _upgrade_type(ctx.api_version, u)) for u in request.feature_updates}
    proposed = dict(ctx.image.features.finalized)
    proposed[METADATA_VERSION] = metadata_version(ctx.image)
    proposed.update({name: level for name, (level, _) in updates.items()})
    records, results = [], []
    for name in sorted(updates):
        level, upgrade_type = updates[name]
        try:
            _check(ctx, name, level, upgrade_type, proposed)
        except _Invalid as e:
            results.append(_RESPONSE.UpdatableFeatureResult(feature=name, error_code=Errors.INVALID_UPDATE_VERSION,
                                                            error_message=str(e)))
            continue
        results.append(_RESPONSE.UpdatableFeatureResult(feature=name, error_code=0, error_message=None))
        if name != ft.KRAFT_VERSION:  # the level it has: nothing to write
            records.append(ApiMessageAndVersion(_FEATURE_LEVEL(name=name, feature_level=level), 0))
    validate_only = ctx.api_version >= 1 and request.validate_only
    return ControllerResult([] if validate_only else records, _RESPONSE(results=results))


def _upgrade_type(api_version: int, update) -> int:
    if api_version == 0:
        return SAFE_DOWNGRADE if update.allow_downgrade else UPGRADE
    return update.upgrade_type


def _check(ctx: ControllerContext, name: str, level: int, upgrade_type: int, proposed: dict) -> None:
    """Raise _Invalid with Kafka's message when `name` may not move to `level`."""
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        raise _invalid(name, level, "The controller does not support the given upgrade type.")
    current = proposed_current(ctx, name)
    if level < 0:
        raise _invalid(name, level, "A feature version cannot be less than 0.")
    reason = reason_not_supported(ctx, name, level)
    if reason is not None:
        raise _invalid(name, level, reason)
    if level < current and upgrade_type == UPGRADE:
        raise _invalid(name, level, "Can't downgrade the version of this feature without setting the upgrade type "
                                    "to either safe or unsafe downgrade.")
    if level > current and upgrade_type != UPGRADE:
        raise _invalid(name, level, "Can't downgrade to a newer version.")
    if name == METADATA_VERSION:
        _check_metadata_version(ctx, level, current, upgrade_type == UNSAFE_DOWNGRADE)
    elif name == ft.KRAFT_VERSION and level != current:
        raise _invalid(name, level, "kraft.version is kept by the Raft layer (KRaftVersionRecord), not by "
                                    "FeatureLevelRecords; kraftsman does not change it through UpdateFeatures.")
    elif name != ft.KRAFT_VERSION:
        _check_dependencies(name, level, proposed)


def proposed_current(ctx: ControllerContext, name: str) -> int:
    """Return the finalized level of `name` (metadata.version: 1 when unset; others: 0)."""
    if name == METADATA_VERSION:
        return metadata_version(ctx.image)
    if name == ft.KRAFT_VERSION:
        return ctx.kraft_version
    return ctx.image.features.finalized.get(name, 0)


def reason_not_supported(ctx: ControllerContext, name: str, level: int) -> str | None:
    """Return why this controller, a registered broker or a voter cannot run `name` at `level`, or None."""
    reason = _outside(level, f"Local controller {ctx.node_id}", SUPPORTED_FEATURES.get(name, DISABLED))
    if reason is not None:
        return reason
    cluster = ctx.image.cluster
    for broker_id in sorted(cluster.brokers):
        reason = _outside(level, f"Broker {broker_id}", _supported(cluster.brokers[broker_id].record, name))
        if reason is not None:
            return reason
    if metadata_version(ctx.image) < CONTROLLER_REGISTRATION_LEVEL:
        return None
    for controller_id in sorted(cluster.controllers):
        if controller_id != ctx.node_id:
            reason = _outside(level, f"Controller {controller_id}",
                              _supported(cluster.controllers[controller_id].record, name))
            if reason is not None:
                return reason
    for voter in sorted(c.node_id for c in ctx.controllers):
        if voter != ctx.node_id and voter not in cluster.controllers:
            return f"controller {voter} has not registered, and may not support this feature"
    return None


def _supported(registration, name: str) -> tuple[int, int]:
    for f in registration.features or ():
        if f.name == name:
            return f.min_supported_version, f.max_supported_version
    return DISABLED


def _outside(level: int, what: str, supported: tuple[int, int]) -> str | None:
    """Return QuorumFeatures.reasonNotSupported's text, or None when `supported` holds `level`."""
    lo, hi = supported
    if lo <= level <= hi:
        return None
    if hi == 0:
        return f"{what} does not support this feature."
    return f"{what} only supports versions {lo if lo == hi else f'{lo}-{hi}'}"


def _check_metadata_version(ctx: ControllerContext, level: int, current: int, unsafe: bool) -> None:
    """Raise _Invalid as FeatureControlManager.updateMetadataVersion does."""
    table = ft.FEATURE_SETS["3.9"].metadata
    try:
        new = table.by_level(level)
    except ft.FeatureError:
        raise _invalid_mv(level, "Unknown metadata.version.") from None
    if ctx.image.features.zk_migration_state in (1, 2):  # MIGRATION, PRE_MIGRATION: ZkMigrationState.inProgress
        raise _invalid_mv(level, "Unable to modify metadata.version while a ZK migration is in progress.")
    if new < table.minimum:
        raise _invalid_mv(level, f"Unable to set a metadata.version less than {table.minimum}")
    if level < current and metadata_changed(level, current):
        if unsafe:
            raise _invalid_mv(level, "Unsafe metadata downgrade is not supported in this version.")
        raise _invalid_mv(level, "Refusing to perform the requested downgrade because it might delete metadata "
                                 "information.")


def metadata_changed(low: int, high: int) -> bool:
    """Tell whether a version in (low, high] changed the metadata (MetadataVersion.checkIfMetadataChanged)."""
    return any(level in METADATA_CHANGED for level in range(low + 1, high + 1))


def _check_dependencies(name: str, level: int, proposed: dict) -> None:
    """Raise _Invalid when `name` at `level` needs a level the update would not leave (Features.validateVersion)."""
    try:
        needs = ft.FEATURE_SETS["3.9"].dependencies_of(name, level)
    except ft.FeatureError as e:
        raise _invalid(name, level, str(e)) from None
    for dep, needed in needs:
        if proposed.get(dep, 0) < needed:
            raise _invalid(name, level, f"{name} {level} must be used with {dep} {needed}")


def _invalid(name: str, level: int, reason: str) -> _Invalid:
    return _Invalid(f"Invalid update version {level} for feature {name}. {reason}")


def _invalid_mv(level: int, reason: str) -> _Invalid:
    return _Invalid(f"Invalid metadata.version {level}. {reason}")


HANDLERS = {"UpdateFeatures": update_features}
READ_ONLY: frozenset = frozenset()
