"""The RPC side of kafka-features: ApiVersions for `describe`, UpdateFeatures for upgrade / downgrade / disable.

Rules:
- One absolute deadline (time.monotonic()) for the whole operation; requests go where
  controller.client.active_controller routes them: the active controller with --bootstrap-controller (as
  Kafka's Admin does), the first address that answers with --bootstrap-server.
- describe sends its own ApiVersions request at the highest version both sides speak; features come from v3
  (tagged fields).
- update sends UpdateFeatures; a top-level NOT_CONTROLLER (41) is a refusal (the active controller is looked
  for again, the next address tried, rounds with a backoff until the deadline).
- v2 (Kafka 4.0) answers with a top-level error only; v1 carries UpgradeType and ValidateOnly; v0 only
  AllowDowngrade, so a v0-only server gets safe
  downgrades and plain upgrades, and validate-only or unsafe requests fail as unsupported.
- The answer maps every requested feature to None (done) or its error message, as Kafka's Admin client
  does: a top-level error fails every feature, a feature missing from the results fails, and a null message
  becomes the Kafka exception's default text for the error code.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.active_controller import Refused, on_active_controller
from kraftsman.storage.protocol.errors import Errors, default_message

from ..cluster.ops import ServerError

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


@dataclass
class FeatureMetadata:
    """What ApiVersions says of features (Kafka's Admin FeatureMetadata)."""

    supported: dict[str, tuple[int, int]] = field(default_factory=dict)   # name -> (min, max)
    finalized: dict[str, int] = field(default_factory=dict)               # name -> max version level
    epoch: int | None = None                                              # None: FinalizedFeaturesEpoch -1


def error_message(code: int, message: str | None) -> str:
    """Return the message Kafka's exception for `code` carries: the server's, else the default one."""
    if message is not None:
        return message
    return default_message(code) or f"error code {code}"


def describe_features(addresses, config: sc.ClientConfig, deadline: float) -> FeatureMetadata:
    """Return the features as ApiVersions gives them: from the active controller with bootstrap controllers,
    else from the first address that answers."""
    return on_active_controller(addresses, config, deadline, lambda conn: _describe_on(conn, deadline),
                                api="ApiVersions")


def _describe_on(conn: sc.SyncConnection, deadline: float) -> FeatureMetadata:
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


def update_features(addresses, config: sc.ClientConfig, deadline: float, updates: dict[str, tuple[int, int]],
                    validate_only: bool) -> dict[str, str | None]:
    """Send UpdateFeatures ({name: (level, upgrade type)}) to the active controller; return {name: None or
    error message}. Raise sc.UnsupportedVersion when the server cannot take the request, and the error
    active_controller explains a timeout with (sc.NoActiveController when every answer was NOT_CONTROLLER)."""
    def attempt(conn: sc.SyncConnection) -> dict[str, str | None]:
        response = _update_on(conn, updates, validate_only, deadline)
        if response.error_code == Errors.NOT_CONTROLLER:
            raise Refused(Errors.NOT_CONTROLLER.name)
        return outcomes(updates, response, conn.pick_version("UpdateFeatures"))

    return on_active_controller(addresses, config, deadline, attempt, api="UpdateFeatures")


def _update_on(conn: sc.SyncConnection, updates: dict[str, tuple[int, int]], validate_only: bool, deadline: float):
    import time

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


def outcomes(updates: dict[str, tuple[int, int]], response, version: int = 1) -> dict[str, str | None]:
    """Map each requested feature to None or its error message, as KafkaAdminClient.updateFeatures does (v2 answers
    carry no per-feature results: no top-level error means every feature passed)."""
    if response.error_code:
        message = error_message(response.error_code, response.error_message)
        return {name: message for name in updates}
    if version >= 2:
        return {name: None for name in updates}
    results = {r.feature: r for r in response.results if r.feature in updates}
    found = {}
    for name in updates:
        result = results.get(name)
        if result is None:
            found[name] = f"The controller response did not contain a result for feature {name}"
        else:
            found[name] = error_message(result.error_code, result.error_message) if result.error_code else None
    return found
