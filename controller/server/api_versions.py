"""The APIs a kraftsman controller serves, and the ApiVersionsResponse that advertises them (KIP-35, KIP-511).

Rules:
- The table is data: API names in CONTROLLER_APIS, version ranges from our schema files. An API whose
  schema kraftsman does not carry yet is left out at import time (never a crash), so the list grows as
  schemas land. Kafka 3.9's own controller list (the golden ApiVersions frames) is the test oracle.
- Metadata is served by kraftsman's controller for admin clients (KIP-919 style); Kafka 3.9's controller
  does not list it. Vote goes to v2 (KIP-996, Kafka 4.0) where 3.9 stops at v1, and DescribeCluster to
  v2 (KIP-1073, Kafka 4.0's IncludeFencedBrokers) where 3.9 stops at v1. Envelope (forwarding,
  KIP-590) is unwrapped by the Listener itself.
- Every listener lists SaslHandshake and SaslAuthenticate, as Kafka's controller listeners do whatever their
  security protocol: the Listener answers them itself (ILLEGAL_SASL_STATE once authenticated or without SASL).
  DescribeDelegationToken is listed as Kafka's controller lists it, and answered as Kafka's controller answers
  it, UNKNOWN_SERVER_ERROR (brokers answer it from their own token cache; no broker forwards it). Not listed,
  though Kafka 3.9's controller lists it: ControlledShutdown (ZooKeeper brokers during a migration; its v0
  request header has no client id).
- Each release's controller advertises its own ranges (RELEASE_RANGES within the schemas': 3.9's maxima, 4.x's
  KIP-896 floors, Fetch 18 from 4.1, AddRaftVoter 1 in 4.2, ...) and its own supported features.
- Features: supported ranges and finalized levels come from arguments; a finalized level of 0 means the
  feature is not set and is not listed (Kafka lists only levels > 0); finalized min level == max level.
  Below ApiVersions v4 supported features whose minimum is 0 are left out (KAFKA-17492, 3.9 and 4.x alike).
- ClientSoftwareName/Version of ApiVersions v3+ must match Kafka's pattern, else INVALID_REQUEST (42).
"""
from __future__ import annotations

from kraftsman.controller.image.features import hash_map_order
from kraftsman.controller.quorum.feature_levels import SUPPORTED_FEATURES, supported_features
from kraftsman.controller.quorum.java_hash_order import JavaHashMap
from kraftsman.storage.protocol import codec, framing

CONTROLLER_APIS = (
    "ApiVersions", "Metadata", "DescribeCluster", "DescribeQuorum", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch",
    "Fetch", "FetchSnapshot", "BrokerRegistration", "BrokerHeartbeat", "UnregisterBroker", "ControllerRegistration",
    "CreateTopics", "DeleteTopics", "CreatePartitions", "AlterPartition", "AlterPartitionReassignments",
    "ListPartitionReassignments", "ElectLeaders", "IncrementalAlterConfigs", "AddRaftVoter", "RemoveRaftVoter",
    "UpdateRaftVoter", "DescribeConfigs", "AlterConfigs", "AllocateProducerIds", "Envelope", "DescribeAcls",
    "CreateAcls", "DeleteAcls", "AlterClientQuotas", "DescribeUserScramCredentials", "AlterUserScramCredentials",
    "UpdateFeatures", "AssignReplicasToDirs", "CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken",
    "DescribeDelegationToken", "SaslHandshake", "SaslAuthenticate",
)
# Each release's controller listener, where it differs from the full range of our schemas (which hold 3.9's
# versions and 4.x's new ones): 3.9's maxima; 4.x's KIP-896 floors and its maxima (raw ApiVersions of a real 4.2
# controller, brokers-4x.md section 7). An API's range is this one within its schema's.
_KIP_896 = {"Fetch": (4, 18), "CreateTopics": (2, 7), "DeleteTopics": (1, 6), "AlterPartition": (2, 3),
            "DescribeAcls": (1, 3), "CreateAcls": (1, 3), "DeleteAcls": (1, 3), "DescribeConfigs": (1, 4),
            "CreateDelegationToken": (1, 3), "RenewDelegationToken": (1, 2), "ExpireDelegationToken": (1, 2),
            "DescribeDelegationToken": (1, 3)}
RELEASE_RANGES: dict[str, dict[str, tuple[int, int]]] = {
    "3.9": {"Fetch": (0, 17), "Metadata": (0, 12), "UpdateFeatures": (0, 1), "AddRaftVoter": (0, 0),
            "AlterPartitionReassignments": (0, 0)},   # DescribeCluster v2 and Vote v2: kraftsman's in every release
    "4.0": {**_KIP_896, "Fetch": (4, 17), "AddRaftVoter": (0, 0), "AlterPartitionReassignments": (0, 0)},
    "4.1": {**_KIP_896, "AddRaftVoter": (0, 0)},
    "4.2": dict(_KIP_896),
}


def _table(release: str = "3.9") -> dict[int, tuple[int, int]]:
    by_name = {info.name: info for info in framing.api_registry().values()}
    table = {}
    for name in CONTROLLER_APIS:
        info = by_name.get(name)
        if info is None:
            continue
        lo, hi = info.valid_versions.lo, info.valid_versions.hi
        cap_lo, cap_hi = RELEASE_RANGES[release].get(name, (lo, hi))
        if max(lo, cap_lo) <= min(hi, cap_hi):
            table[info.api_key] = (max(lo, cap_lo), min(hi, cap_hi))
    return dict(sorted(table.items()))


CONTROLLER_API_VERSIONS: dict[int, tuple[int, int]] = _table()
VOTE_KEY = next(info.api_key for info in framing.api_registry().values() if info.name == "Vote")
_TABLES: dict[str, dict[int, tuple[int, int]]] = {"3.9": CONTROLLER_API_VERSIONS}


def release_apis(release: str) -> dict[int, tuple[int, int]]:
    """Return the API table a controller of `release` serves (built once per release)."""
    if release not in _TABLES:
        _TABLES[release] = _table(release)
    return _TABLES[release]


def api_versions_response(apis: dict[int, tuple[int, int]] | None = None, *,
                          supported_features: dict[str, tuple[int, int]] | None = None,
                          finalized_features: dict[str, int] | None = None, finalized_epoch: int = -1,
                          zk_migration_ready: bool = False, throttle_time_ms: int = 0):
    """Build the ApiVersionsResponse body listing `apis` (api_key -> (min, max)) and the features, both in a Java
    HashMap's order of their names as Kafka lists them (metadata.version put first, as Kafka builds the maps)."""
    cls = codec.message_class("ApiVersionsResponse")
    apis = CONTROLLER_API_VERSIONS if apis is None else apis
    supported = SUPPORTED_FEATURES if supported_features is None else supported_features
    keys = [cls.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(apis.items())]
    sup = [cls.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
           for n, (lo, hi) in java_feature_order(supported, 0, first=True)]
    finalized = {n: level for n, level in (finalized_features or {}).items() if level and level > 0}
    fin = [cls.FinalizedFeatureKey(name=n, max_version_level=level, min_version_level=level)
           for n, level in java_feature_order(finalized, len(finalized.keys() - {"metadata.version", "kraft.version"}))]
    return cls(error_code=0, api_keys=keys, throttle_time_ms=throttle_time_ms, supported_features=sup,
               finalized_features_epoch=finalized_epoch, finalized_features=fin,
               zk_migration_ready=zk_migration_ready)


def java_feature_order(values: dict, size: int, first: bool = False) -> list:
    """Return `values`' items as the java.util.HashMap Kafka builds iterates: supported features (`first`) in a
    default map, metadata.version put first; finalized ones copied from the image (a map sized for them), then
    metadata.version and kraft.version put."""
    order = JavaHashMap(int(size / 0.75 + 1) if size else None)
    special = [n for n in ("metadata.version", "kraft.version") if n in values]
    rest = [n for n in sorted(values) if n not in special]
    if not first:                  # copied from the image's map: its own order (FeaturesImage's HashMap)
        rest = hash_map_order(dict.fromkeys(rest))
    for name in (special + rest if first else rest + special):
        order.put(name, values[name])
    return order.items()


def for_request_version(body, version: int):
    """Return `body` as Kafka answers an ApiVersions request of `version`: below v4, supported features whose
    minimum is 0 are left out (old clients cannot read them; KAFKA-17492)."""
    if version >= 4 or not body.supported_features:
        return body
    kept = [f for f in body.supported_features if f.min_version != 0]
    return body.replace(supported_features=kept) if len(kept) != len(body.supported_features) else body


def controller_apis(vote_max_version: int | None = None, release: str = "3.9") -> dict[int, tuple[int, int]]:
    """Return the served API table, Vote capped at `vote_max_version` (1 for a voter speaking Kafka 3.9)."""
    table = release_apis(release)
    if vote_max_version is None:
        return table
    lo, hi = table[VOTE_KEY]
    return {**table, VOTE_KEY: (lo, min(hi, vote_max_version))}


def controller_api_versions(features=None, *, kraft_version: int | None = None, finalized_epoch: int = -1,
                            vote_max_version: int | None = None, release: str = "3.9",
                            unstable_enabled: bool = False):
    """Build a controller's ApiVersionsResponse from a FeaturesImage (metadata.version + finalized levels)."""
    finalized: dict[str, int] = {}
    if features is not None:
        finalized.update(features.finalized)
        if features.metadata_version is not None:
            finalized["metadata.version"] = features.metadata_version
    if kraft_version is not None:
        finalized["kraft.version"] = kraft_version
    return api_versions_response(controller_apis(vote_max_version, release), finalized_features=finalized,
                                 finalized_epoch=finalized_epoch,
                                 supported_features=supported_features(release, unstable_enabled))


def check_request(body, api_version: int) -> int:
    """Return the error code for an ApiVersions request: INVALID_REQUEST for a bad v3+ client software id."""
    return framing.api_versions_request_error(body, api_version)


def error_response(code: int):
    """Build the ApiVersionsResponse that only carries `code` (Kafka lists no APIs with INVALID_REQUEST)."""
    return codec.message_class("ApiVersionsResponse")(error_code=code)
