"""UpdateFeatures (v0-2) on the active controller, as Kafka's FeatureControlManager.updateFeatures of the release
this controller speaks for (QuorumConfig.kafka_version).

Rules:
- Kafka 3.9: each feature of the request gets its own result, sorted by name (a name given twice: the last update
  counts); the FeatureLevelRecords of the features that pass are appended together, or none with validate_only.
- Kafka 4.x: all or nothing. The features are checked in the order of a Java HashMap of their names; the first
  error fails the whole request: a top-level INVALID_UPDATE_VERSION "The update failed for all features since the
  following feature had an error: <reason>", no per-feature results, no records. On success v0-1 list every
  feature with error code 0 (message "NONE", Errors.NONE's); v2 has no results. Finalizing
  eligible.leader.replicas.version also writes the ELR safety records (a cluster-level min.insync.replicas
  ConfigRecord when there is none; broker-level ones removed) ahead of the FeatureLevelRecords.
- Errors are INVALID_UPDATE_VERSION (95) with Kafka's texts: "Invalid update version <v> for feature <f>.
  <reason>"; metadata.version: 3.9 "Invalid metadata.version <v>. <reason>", 4.x also "Unsupported
  metadata.version downgrade from <cur> to <new>. <reason>" and "Valid versions are from 7 to <latest>.".
- The checks, in Kafka's order: an unknown upgrade type; a level below 0; a level this controller does not
  support (the release's supported ranges), or that a registered broker or (from metadata.version 3.7-IV0,
  KIP-919) a registered controller does not support, or a voter that has not registered; a downgrade asked as an
  upgrade or an upgrade asked as a downgrade; then metadata.version's own checks, kraft.version's, or the
  dependencies of Feature.validateVersion against the finalized levels with every update of the request applied.
- Version 0's AllowDowngrade means a safe downgrade (UpdateFeaturesRequest.getFeature); from version 1
  UpgradeType says it: 1 upgrade, 2 safe downgrade, 3 unsafe downgrade.
- kraft.version is the Raft layer's (KRaftVersionRecord, ctx.kraft_version). Kafka 3.9: kraftsman accepts the
  level it already has (no record) and refuses any other, saying why. Kafka 4.x: an upgrade is the Raft layer's
  (ctx.kraft_upgrade: a static quorum moves to kraft.version 1 once every voter's directory id is known), with a
  NoOpRecord to wait on; unlike Kafka, which upgrades as it meets kraft.version in its loop, kraftsman only
  checks it there and upgrades once every feature of the request passed (never half an update).
"""
from __future__ import annotations

from dataclasses import dataclass

from kraftsman.controller.image.features import METADATA_VERSION
from kraftsman.storage import features as ft
from kraftsman.storage import metadata_versions as mvs
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .context import ControllerContext, ControllerResult
from .feature_levels import CONTROLLER_REGISTRATION_LEVEL, metadata_version, supported_features
from .java_hash_order import JavaHashMap

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
DISABLED = (0, 0)
ALL_FAILED = "The update failed for all features since the following feature had an error: "
MIN_INSYNC_REPLICAS = "min.insync.replicas"
_RESPONSE = codec.message_class("UpdateFeaturesResponse")
_FEATURE_LEVEL = codec.message_class("FeatureLevelRecord")
_CONFIG = codec.message_class("ConfigRecord")
_BROKER = 4  # ConfigResource.Type.BROKER


@dataclass(frozen=True)
class UpdateRules:
    """What one release's FeatureControlManager does differently."""

    all_or_nothing: bool      # 4.x: the first error fails every feature (else one result per feature)
    kraft_upgrade_noop: bool  # 4.x: an upgrade of kraft.version to its level writes a NoOpRecord
    metadata_texts: str       # "3.9" or "4.x": metadata.version's refusal texts and checks


UPDATE_RULES = {"3.9": UpdateRules(False, False, "3.9"),
                **dict.fromkeys(("4.0", "4.1", "4.2"), UpdateRules(True, True, "4.x"))}


class _Invalid(Exception):
    """An update refused with INVALID_UPDATE_VERSION; the message is Kafka's."""


def metadata_changed(low: int, high: int) -> bool:
    """Tell whether a version in (low, high] changed the metadata (MetadataVersion.checkIfMetadataChanged)."""
    return mvs.metadata_changed(low, high)


def update_features(ctx: ControllerContext, request) -> ControllerResult:
    """Answer UpdateFeatures as the controller's release does."""
    updates = {u.feature: (u.max_version_level, _upgrade_type(ctx.api_version, u)) for u in request.feature_updates}
    proposed = dict(ctx.image.features.finalized)
    proposed[METADATA_VERSION] = metadata_version(ctx.image)
    proposed.update({name: level for name, (level, _) in updates.items()})
    validate_only = ctx.api_version >= 1 and request.validate_only
    if UPDATE_RULES[ctx.config.kafka_version].all_or_nothing:
        return _all_or_nothing(ctx, request, updates, proposed, validate_only)
    return _per_feature(ctx, updates, proposed, validate_only)


def _per_feature(ctx: ControllerContext, updates: dict, proposed: dict, validate_only: bool) -> ControllerResult:
    """Kafka 3.9: one result per feature, the passing features' records written."""
    records, results = [], []
    for name in sorted(updates):
        level, upgrade_type = updates[name]
        try:
            record = _check(ctx, name, level, upgrade_type, proposed)
        except _Invalid as e:
            results.append(_RESPONSE.UpdatableFeatureResult(feature=name, error_code=Errors.INVALID_UPDATE_VERSION,
                                                            error_message=str(e)))
            continue
        results.append(_RESPONSE.UpdatableFeatureResult(feature=name, error_code=0, error_message=None))
        records += [record] if record is not None and record.message.name != ft.KRAFT_VERSION else []
    return ControllerResult([] if validate_only else records, _RESPONSE(results=results))


def _all_or_nothing(ctx: ControllerContext, request, updates: dict, proposed: dict,
                    validate_only: bool) -> ControllerResult:
    """Kafka 4.x: the first failing feature (in HashMap order) fails them all; else every record, atomically."""
    order = JavaHashMap()
    for u in request.feature_updates:
        order.put(u.feature, None)
    records = []
    for name in order.keys():
        level, upgrade_type = updates[name]
        try:
            record = _check(ctx, name, level, upgrade_type, proposed)
        except _Invalid as e:
            return ControllerResult([], _RESPONSE(error_code=Errors.INVALID_UPDATE_VERSION,
                                                  error_message=ALL_FAILED + str(e), results=[]))
        if record is not None:
            records.append(record)
    if not validate_only and updates.get(ft.ELR_VERSION, (0, 0))[0] > 0:
        records = elr_safety_records(ctx) + records
    kraft = updates.get(ft.KRAFT_VERSION)
    if not validate_only and kraft is not None and kraft[0] > ctx.kraft_version:
        ctx.kraft_upgrade(kraft[0], False)      # checked above; applied once every feature passed
    results = [] if ctx.api_version >= 2 else [
        _RESPONSE.UpdatableFeatureResult(feature=u.feature, error_code=0, error_message="NONE")
        for u in request.feature_updates]
    return ControllerResult([] if validate_only else records, _RESPONSE(error_code=0, results=results))


def elr_safety_records(ctx: ControllerContext) -> list[ApiMessageAndVersion]:
    """Return what enabling ELR needs first: a cluster-level min.insync.replicas (the static one) when the cluster
    has none, and the removal of every broker-level min.insync.replicas (maybeGenerateElrSafetyRecords)."""
    records = []
    configs = ctx.image.configs.resources
    if MIN_INSYNC_REPLICAS not in configs.get((_BROKER, ""), {}):
        records.append(_min_insync(ctx, "", str(ctx.config.min_insync_replicas)))
    for resource_type, name in sorted(configs):
        if resource_type == _BROKER and name and MIN_INSYNC_REPLICAS in configs[(resource_type, name)]:
            records.append(_min_insync(ctx, name, None))
    return records


def _min_insync(ctx: ControllerContext, resource: str, value: str | None) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(_CONFIG(resource_type=_BROKER, resource_name=resource, name=MIN_INSYNC_REPLICAS,
                                        value=value), 0)


def _upgrade_type(api_version: int, update) -> int:
    if api_version == 0:
        return SAFE_DOWNGRADE if update.allow_downgrade else UPGRADE
    return update.upgrade_type


def _check(ctx: ControllerContext, name: str, level: int, upgrade_type: int,
           proposed: dict) -> ApiMessageAndVersion | None:
    """Return the record `name` -> `level` writes, or raise _Invalid with Kafka's message."""
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
    elif name == ft.KRAFT_VERSION:
        return _kraft_version(ctx, level, current, upgrade_type)
    else:
        _check_dependencies(ctx, name, level, proposed)
    return ApiMessageAndVersion(_FEATURE_LEVEL(name=name, feature_level=level), 0)


def _kraft_version(ctx: ControllerContext, level: int, current: int, upgrade_type: int):
    """Check kraft.version (the Raft layer's): the level the quorum runs passes, another is refused."""
    rules = UPDATE_RULES[ctx.config.kafka_version]
    if level == current:
        if rules.kraft_upgrade_noop and upgrade_type == UPGRADE:
            return ApiMessageAndVersion(codec.message_class("NoOpRecord")(), 0)   # 4.x: an offset to wait on
        return None
    if not rules.kraft_upgrade_noop:
        raise _invalid(ft.KRAFT_VERSION, level, "kraft.version is kept by the Raft layer (KRaftVersionRecord), not "
                                                "by FeatureLevelRecords; kraftsman does not change it through "
                                                "UpdateFeatures.")
    if upgrade_type != UPGRADE:
        raise _invalid(ft.KRAFT_VERSION, level, "Can't downgrade the version of this feature.")
    reason = ctx.kraft_upgrade(level, True) if ctx.kraft_upgrade is not None else "the Raft layer is not reachable"
    if reason is not None:
        raise _invalid(ft.KRAFT_VERSION, level, reason)
    return ApiMessageAndVersion(codec.message_class("NoOpRecord")(), 0)     # the upgrade itself comes last


def proposed_current(ctx: ControllerContext, name: str) -> int:
    """Return the finalized level of `name` (metadata.version: 1 when unset; others: 0)."""
    if name == METADATA_VERSION:
        return metadata_version(ctx.image)
    if name == ft.KRAFT_VERSION:
        return ctx.kraft_version
    return ctx.image.features.finalized.get(name, 0)


def reason_not_supported(ctx: ControllerContext, name: str, level: int) -> str | None:
    """Return why this controller, a registered broker or a voter cannot run `name` at `level`, or None."""
    local = supported_features(ctx.config.kafka_version, ctx.config.unstable_feature_versions)
    reason = _outside(level, f"Local controller {ctx.node_id}", local.get(name, DISABLED))
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
    """Raise _Invalid as FeatureControlManager.updateMetadataVersion of the release does."""
    table = ft.FEATURE_SETS[ctx.config.kafka_version].metadata
    if UPDATE_RULES[ctx.config.kafka_version].metadata_texts == "4.x":
        if not table.knows_level(level):
            raise _invalid_mv(level, f"Valid versions are from {table.minimum.level} to {table.latest_testing.level}.")
        if level < current and metadata_changed(level, current):
            reason = ("Unsafe metadata downgrade is not supported in this version." if unsafe else
                      "Refusing to perform the requested downgrade because it might delete metadata information.")
            raise _Invalid(f"Unsupported metadata.version downgrade from {current} to {level}. {reason}")
        return
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


def _check_dependencies(ctx: ControllerContext, name: str, level: int, proposed: dict) -> None:
    """Raise _Invalid when `name` at `level` needs a level the update would not leave (Feature.validateVersion)."""
    features = ft.FEATURE_SETS[ctx.config.kafka_version]
    try:
        features.dependencies_of(name, level)
        features.validate(name, level, proposed)
    except ft.FeatureError as e:
        raise _invalid(name, level, str(e)) from None


def _invalid(name: str, level: int, reason: str) -> _Invalid:
    return _Invalid(f"Invalid update version {level} for feature {name}. {reason}")


def _invalid_mv(level: int, reason: str) -> _Invalid:
    return _Invalid(f"Invalid metadata.version {level}. {reason}")


HANDLERS = {"UpdateFeatures": update_features}
READ_ONLY: frozenset = frozenset()
