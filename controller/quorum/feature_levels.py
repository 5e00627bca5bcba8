"""What the finalized metadata.version allows, and the feature check of a broker registration.

Rules:
- Gates are Kafka 3.9's MetadataVersion methods, by feature level (features.METADATA_VERSIONS):
  6 = 3.3-IV2 BrokerRegistrationChangeRecord, 7 = 3.3-IV3 in-controlled-shutdown state,
  8 = 3.4-IV0 ZK migration (RegisterBrokerRecord v2), 15 = 3.7-IV0 controller registration,
  17 = 3.7-IV2 directory assignment (RegisterBrokerRecord v3, log dirs), 5 = 3.3-IV1 NoOpRecord.
  The real logs agree: MV 7 -> RegisterBrokerRecord v1, MV 11/14 -> v2, MV 19-21 -> v3.
- An image without metadata.version counts as level 1 (3.0-IV1, MINIMUM_KRAFT_VERSION).
- A broker feature range must contain the finalized level (metadata.version defaults to 1, others
  to 0); a broker that sends no metadata.version range supports only level 1 (Kafka's rule).
"""
from __future__ import annotations

from kraftsman.controller.image.features import METADATA_VERSION, MINIMUM_KRAFT_LEVEL
from kraftsman.storage.protocol.errors import Errors

from .api_error import ApiError

BROKER_REGISTRATION_CHANGE_LEVEL = 6
IN_CONTROLLED_SHUTDOWN_LEVEL = 7
MIGRATION_LEVEL = 8
CONTROLLER_REGISTRATION_LEVEL = 15
DIRECTORY_ASSIGNMENT_LEVEL = 17
NOOP_RECORD_LEVEL = 5
# Kafka 3.9's supported feature ranges, as its controllers advertise them (golden ApiVersions frames)
SUPPORTED_FEATURES = {"kraft.version": (0, 1), "metadata.version": (1, 21)}


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


def check_broker_feature(image, broker_id: int, name: str, lo: int, hi: int) -> None:
    """Raise UNSUPPORTED_VERSION when [lo, hi] does not contain the finalized level of `name`."""
    level = finalized_level(image, name)
    if not lo <= level <= hi:
        raise ApiError(Errors.UNSUPPORTED_VERSION, f"Unable to register because the broker {broker_id} does not "
                                                f"support version {level} of {name}. It wants a version between "
                                                f"{lo} and {hi}, inclusive.")


def registration_features(image, broker_id: int, features) -> list[tuple[str, int, int]]:
    """Check a BrokerRegistration's features; return (name, min, max) for the record, in request order."""
    out = []
    for f in features:
        check_broker_feature(image, broker_id, f.name, f.min_supported_version, f.max_supported_version)
        out.append((f.name, f.min_supported_version, f.max_supported_version))
    if all(name != METADATA_VERSION for name, _, _ in out):
        check_broker_feature(image, broker_id, METADATA_VERSION, MINIMUM_KRAFT_LEVEL, MINIMUM_KRAFT_LEVEL)
        out.append((METADATA_VERSION, MINIMUM_KRAFT_LEVEL, MINIMUM_KRAFT_LEVEL))
    return out
