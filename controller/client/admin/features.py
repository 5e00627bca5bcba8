"""Kafka's feature calls: describe_features (ApiVersions) and update_features (UpdateFeatures).

Rules:
- ApiVersions at the highest version both sides speak; features come from v3 (tagged fields).
- UpdateFeatures v1 carries UpgradeType and ValidateOnly, v0 only AllowDowngrade, so a v0-only server gets safe
  downgrades and plain upgrades, and validate-only or unsafe requests fail as unsupported. Its answer maps every
  requested feature to None (done) or its error message, as Kafka's Admin client does: a top-level error fails
  every feature, a feature missing from the results fails, and a null message becomes the Kafka exception's
  default text for the error code.
"""
from __future__ import annotations

import time

from kraftsman.storage.protocol.errors import Errors

from .. import sync_client as sc
from ..active_controller import Refused
from .core import ServerError, error_message
from .results import FeatureMetadata

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3             # UpdateFeatures' UpgradeType


class FeatureCalls:
    """ApiVersions' features and UpdateFeatures (a part of Admin)."""

    def describe_features(self) -> FeatureMetadata:
        """Return the supported and finalized features of the server reached (ApiVersions)."""
        return self._on_active_controller(lambda conn: _describe_features_on(conn, self.deadline), "ApiVersions")

    def update_features(self, updates: dict[str, tuple[int, int]], validate_only: bool) -> dict[str, str | None]:
        """Send UpdateFeatures ({name: (level, upgrade type)}); return {name: None or its error message}."""
        def attempt(conn: sc.SyncConnection) -> dict[str, str | None]:
            response = _update_features_on(conn, updates, validate_only, self.deadline)
            if response.error_code == Errors.NOT_CONTROLLER:
                raise Refused(Errors.NOT_CONTROLLER.name)
            return feature_outcomes(updates, response)

        return self._on_active_controller(attempt, "UpdateFeatures")


def _describe_features_on(conn: sc.SyncConnection, deadline: float) -> FeatureMetadata:
    from kraftsman.storage.protocol import codec

    body = codec.message_class("ApiVersionsRequest")(client_software_name=sc.SOFTWARE_NAME,
                                                     client_software_version=sc.SOFTWARE_VERSION)
    response = conn.request("ApiVersions", conn.pick_version("ApiVersions"), body, deadline)
    if response.error_code:
        raise ServerError(response.error_code, error_message(response.error_code, None))
    epoch = getattr(response, "finalized_features_epoch", -1)                   # the features are v3+
    supported = {f.name: (f.min_version, f.max_version) for f in getattr(response, "supported_features", [])}
    finalized = {f.name: f.max_version_level for f in getattr(response, "finalized_features", [])}
    return FeatureMetadata(supported, finalized, None if epoch < 0 else epoch)


def _update_features_on(conn: sc.SyncConnection, updates: dict[str, tuple[int, int]], validate_only: bool,
                        deadline: float):
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("UpdateFeatures")
    cls = codec.message_class("UpdateFeaturesRequest")
    if version == 0 and (validate_only or any(kind == UNSAFE_DOWNGRADE for _, kind in updates.values())):
        raise sc.UnsupportedVersion(f"{conn.name} speaks UpdateFeatures v0 only, which has no "
                                    f"{'validate-only mode' if validate_only else 'unsafe downgrade'}")
    timeout_ms = max(1, int((deadline - time.monotonic()) * 1000))
    if version == 0:
        keys = [cls.FeatureUpdateKey(feature=name, max_version_level=level, allow_downgrade=kind != UPGRADE)
                for name, (level, kind) in sorted(updates.items())]
        body = cls(timeout_ms=timeout_ms, feature_updates=keys)
    else:
        keys = [cls.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=kind)
                for name, (level, kind) in sorted(updates.items())]
        body = cls(timeout_ms=timeout_ms, feature_updates=keys, validate_only=validate_only)
    return conn.request("UpdateFeatures", version, body, deadline)


def feature_outcomes(updates: dict[str, tuple[int, int]], response) -> dict[str, str | None]:
    """Map each requested feature to None or its error message, as KafkaAdminClient.updateFeatures does."""
    if response.error_code:
        message = error_message(response.error_code, response.error_message)
        return {name: message for name in updates}
    results = {r.feature: r for r in response.results if r.feature in updates}
    found = {}
    for name in updates:
        result = results.get(name)
        if result is None:
            found[name] = f"The controller response did not contain a result for feature {name}"
        else:
            found[name] = error_message(result.error_code, result.error_message) if result.error_code else None
    return found
