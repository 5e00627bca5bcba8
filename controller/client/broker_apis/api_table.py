"""The APIs a Kafka 3.9 broker advertises on its client listener, and its ApiVersionsResponse.

Rules:
- BROKER_APIS is a Kafka 3.9.0 broker's answer, as recorded (kafka-wire-3.9's broker ApiVersions frames; the
  admin fixtures' kafka-broker-api-versions output): api key -> (min, max). It is data about Kafka, not about what
  we serve: the listener refuses (closes the connection on) an advertised API it cannot parse, as Kafka does on
  a request it cannot read.
- FORWARDABLE is ApiKeys.forwardable: the broker advertises the intersection of its range and the active
  controller's (ApiVersionsResponse.intersectForwardableApis); an API the controller does not list, or whose
  ranges do not meet, is left out, and all of them are while the controller's versions are unknown.
- Supported features are a 3.9 node's (feature_levels.SUPPORTED_FEATURES: a broker advertises the controllers'
  kraft.version 0-1, metadata.version 1-21); the finalized features are the image's metadata.version (and other
  levels above 0), with the image's offset as their epoch.
- ClientSoftwareName/Version of ApiVersions v3+ must match Kafka's pattern, else INVALID_REQUEST (42).
"""
from __future__ import annotations

from kraftsman.controller.quorum.feature_levels import SUPPORTED_FEATURES
from kraftsman.storage.protocol import codec, framing

_TABLE = """
0 0 11   1 0 17   2 0 9    3 0 12   8 0 9    9 0 9    10 0 6   11 0 9   12 0 4   13 0 5   14 0 5   15 0 5
16 0 5   17 0 1   18 0 4   19 0 7   20 0 6   21 0 2   22 0 5   23 0 4   24 0 5   25 0 4   26 0 4   27 0 1
28 0 4   29 0 3   30 0 3   31 0 3   32 0 4   33 0 2   34 0 2   35 0 4   36 0 2   37 0 3   38 0 3   39 0 2
40 0 2   41 0 3   42 0 2   43 0 2   44 0 1   45 0 0   46 0 0   47 0 0   48 0 1   49 0 1   50 0 0   51 0 0
55 0 2   57 0 1   60 0 1   61 0 0   64 0 0   65 0 0   66 0 1   68 0 0   69 0 0   74 0 0   75 0 0   80 0 0
81 0 0
"""
_NUMBERS = [int(n) for n in _TABLE.split()]
BROKER_APIS: dict[int, tuple[int, int]] = {k: (lo, hi) for k, lo, hi in zip(*[iter(_NUMBERS)] * 3)}
# ApiKeys with forwardable=true that a broker listener carries
FORWARDABLE = frozenset({19, 20, 30, 31, 33, 37, 38, 39, 40, 43, 44, 45, 46, 49, 51, 55, 57, 64, 80, 81})


def advertised(controller_apis: dict[int, tuple[int, int]] | None) -> dict[int, tuple[int, int]]:
    """Return the broker's table with each forwardable API cut to what the active controller serves."""
    out = {}
    for key, (lo, hi) in BROKER_APIS.items():
        if key in FORWARDABLE:
            other = (controller_apis or {}).get(key)
            if other is None or max(lo, other[0]) > min(hi, other[1]):
                continue
            lo, hi = max(lo, other[0]), min(hi, other[1])
        out[key] = (lo, hi)
    return out


def api_versions_response(apis: dict[int, tuple[int, int]], image):
    """Build the ApiVersionsResponse of a broker whose metadata image is `image`."""
    cls = codec.message_class("ApiVersionsResponse")
    finalized = dict(image.features.finalized)
    if image.features.metadata_version is not None:
        finalized["metadata.version"] = image.features.metadata_version
    return cls(error_code=0, throttle_time_ms=0,
               api_keys=[cls.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                         for k, (lo, hi) in sorted(apis.items())],
               supported_features=[cls.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
                                   for n, (lo, hi) in sorted(SUPPORTED_FEATURES.items())],
               finalized_features_epoch=image.provenance.offset,
               finalized_features=[cls.FinalizedFeatureKey(name=n, max_version_level=v, min_version_level=v)
                                   for n, v in sorted(finalized.items()) if v and v > 0],
               zk_migration_ready=False)


def request_error(body, api_version: int) -> int:
    """Return the error code for an ApiVersions request: INVALID_REQUEST for a bad v3+ client software id."""
    return framing.api_versions_request_error(body, api_version)
