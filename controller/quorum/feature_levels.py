"""What the finalized metadata.version allows, and the feature check of a broker registration.

Rules:
- Gates are Kafka 3.9's MetadataVersion methods, by feature level (storage.metadata_versions):
  6 = 3.3-IV2 BrokerRegistrationChangeRecord, 7 = 3.3-IV3 in-controlled-shutdown state,
  8 = 3.4-IV0 ZK migration (RegisterBrokerRecord v2), 15 = 3.7-IV0 controller registration,
  17 = 3.7-IV2 directory assignment (RegisterBrokerRecord v3, log dirs), 5 = 3.3-IV1 NoOpRecord.
  The real logs agree: MV 7 -> RegisterBrokerRecord v1, MV 11/14 -> v2, MV 19-21 -> v3.
- An image without metadata.version counts as level 1 (3.0-IV1, MINIMUM_KRAFT_VERSION).
- A broker feature range must contain the finalized level (metadata.version defaults to 1, others
  to 0); a broker that sends no metadata.version range supports only level 1 (Kafka 3.9's rule; 4.x refuses
  it: INVALID_REGISTRATION), and a finalized feature the broker does not list must be at 0.
- The supported ranges a controller advertises are the release's (storage.features.FeatureSet.supported_ranges).
"""
from __future__ import annotations

from typing import NamedTuple

from kraftsman.controller.image.features import METADATA_VERSION, MINIMUM_KRAFT_LEVEL
from kraftsman.storage.features import FEATURE_SETS
from kraftsman.storage.protocol.errors import Errors

from .api_error import ApiError

BROKER_REGISTRATION_CHANGE_LEVEL = 6
IN_CONTROLLED_SHUTDOWN_LEVEL = 7
MIGRATION_LEVEL = 8
METADATA_TRANSACTION_LEVEL = 13   # 3.6-IV1: Begin/EndTransactionRecord
CONTROLLER_REGISTRATION_LEVEL = 15
DIRECTORY_ASSIGNMENT_LEVEL = 17
NOOP_RECORD_LEVEL = 5
# Kafka 3.9's supported feature ranges, as its controllers advertise them (golden ApiVersions frames)
SUPPORTED_FEATURES = FEATURE_SETS["3.9"].supported_ranges()


def supported_features(release: str = "3.9", unstable_enabled: bool = False) -> dict[str, tuple[int, int]]:
    """Return the feature ranges a controller of `release` supports and advertises (metadata.version first)."""
    return FEATURE_SETS[release].supported_ranges(unstable_enabled)


def metadata_version(image) -> int:
    """Return the finalized metadata.version level of `image` (1 when none is set)."""
    return image.features.metadata_version_level


def register_broker_record_version(level: int) -> int:
    """Return the RegisterBrokerRecord version Kafka 3.9 writes at metadata.version `level`."""
    if level >= DIRECTORY_ASSIGNMENT_LEVEL:
        return 3
    if level >= MIGRATION_LEVEL:
        return 2
    return 1 if level >= IN_CONTROLLED_SHUTDOWN_LEVEL else 0


def finalized_level(image, name: str) -> int:
    """Return the finalized level of feature `name` (metadata.version defaults to 1, others to 0)."""
    if name == METADATA_VERSION:
        return metadata_version(image)
    return image.features.finalized.get(name, 0)


class RegistrationRules(NamedTuple):
    """How one release's controller checks a registering broker's features."""

    unsupported: str            # format(broker_id=, level=, name=, lo=, hi=)
    requires_metadata_version: bool   # 4.x refuses a registration without a metadata.version range


REGISTRATION_RULES = {
    "3.9": RegistrationRules("Unable to register because the broker {broker_id} does not support version {level} of "
                             "{name}. It wants a version between {lo} and {hi}, inclusive.", False),
    **{release: RegistrationRules("Unable to register because the broker does not support finalized version {level} "
                                  "of {name}. The broker wants a version between {lo} and {hi}, inclusive.", True)
       for release in ("4.0", "4.1", "4.2")},
}


def check_broker_feature(image, broker_id: int, name: str, lo: int, hi: int, release: str = "3.9") -> None:
    """Raise UNSUPPORTED_VERSION when [lo, hi] does not contain the finalized level of `name`."""
    level = finalized_level(image, name)
    if not lo <= level <= hi:
        raise ApiError(Errors.UNSUPPORTED_VERSION, REGISTRATION_RULES[release].unsupported.format(
            broker_id=broker_id, level=level, name=name, lo=lo, hi=hi))


def registration_features(image, broker_id: int, features, release: str = "3.9") -> list[tuple[str, int, int]]:
    """Check a BrokerRegistration's features; return (name, min, max) for the record, in request order.
    A broker without a metadata.version range supports only level 1 (3.9) or is refused (4.x); a finalized
    feature it does not list must be at 0."""
    out = []
    for f in features:
        check_broker_feature(image, broker_id, f.name, f.min_supported_version, f.max_supported_version, release)
        out.append((f.name, f.min_supported_version, f.max_supported_version))
    if all(name != METADATA_VERSION for name, _, _ in out):
        if REGISTRATION_RULES[release].requires_metadata_version:
            raise ApiError(Errors.INVALID_REGISTRATION, "Request features do not contain 'metadata.version'")
        check_broker_feature(image, broker_id, METADATA_VERSION, MINIMUM_KRAFT_LEVEL, MINIMUM_KRAFT_LEVEL)
        out.append((METADATA_VERSION, MINIMUM_KRAFT_LEVEL, MINIMUM_KRAFT_LEVEL))
    listed = {name for name, _, _ in out}
    for name, level in image.features.finalized.items():
        if level and name not in listed:
            check_broker_feature(image, broker_id, name, 0, 0, release)
    return out
