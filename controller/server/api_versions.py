"""The APIs a kraftsman controller serves, and the ApiVersionsResponse that advertises them (KIP-35, KIP-511).

Rules:
- The table is data: API names in CONTROLLER_APIS, version ranges from our schema files. An API whose
  schema kraftsman does not carry yet is left out at import time (never a crash), so the list grows as
  schemas land. Kafka 3.9's own controller list (the golden ApiVersions frames) is the test oracle.
- Metadata is served by kraftsman's controller for admin clients (KIP-919 style); Kafka 3.9's controller
  does not list it. Vote goes to v2 (KIP-996, Kafka 4.0) where 3.9 stops at v1, and DescribeCluster to
  v2 (KIP-1073, Kafka 4.0's IncludeFencedBrokers) where 3.9 stops at v1. Envelope (forwarding,
  KIP-590) is unwrapped by the Listener itself. Not served, though Kafka 3.9's controller lists them:
  ControlledShutdown (ZooKeeper brokers during a migration) and DescribeDelegationToken (brokers answer it
  from their own token cache; no broker forwards it).
- Features: supported ranges and finalized levels come from arguments; a finalized level of 0 means the
  feature is not set and is not listed (Kafka lists only levels > 0); finalized min level == max level.
- ClientSoftwareName/Version of ApiVersions v3+ must match Kafka's pattern, else INVALID_REQUEST (42).
"""
from __future__ import annotations

from kraftsman.controller.quorum.feature_levels import SUPPORTED_FEATURES
from kraftsman.storage.protocol import codec, framing

CONTROLLER_APIS = (
    "ApiVersions", "Metadata", "DescribeCluster", "DescribeQuorum", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch",
    "Fetch", "FetchSnapshot", "BrokerRegistration", "BrokerHeartbeat", "UnregisterBroker", "ControllerRegistration",
    "CreateTopics", "DeleteTopics", "CreatePartitions", "AlterPartition", "AlterPartitionReassignments",
    "ListPartitionReassignments", "ElectLeaders", "IncrementalAlterConfigs", "AddRaftVoter", "RemoveRaftVoter",
    "UpdateRaftVoter", "DescribeConfigs", "AlterConfigs", "AllocateProducerIds", "Envelope", "DescribeAcls",
    "CreateAcls", "DeleteAcls", "AlterClientQuotas", "DescribeUserScramCredentials", "AlterUserScramCredentials",
    "UpdateFeatures", "AssignReplicasToDirs", "CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken",
)


def _table() -> dict[int, tuple[int, int]]:
    by_name = {info.name: info for info in framing.api_registry().values()}
    table = {}
    for name in CONTROLLER_APIS:
        info = by_name.get(name)
        if info is not None:
            table[info.api_key] = (info.valid_versions.lo, info.valid_versions.hi)
    return dict(sorted(table.items()))


CONTROLLER_API_VERSIONS: dict[int, tuple[int, int]] = _table()
VOTE_KEY = next(info.api_key for info in framing.api_registry().values() if info.name == "Vote")


def api_versions_response(apis: dict[int, tuple[int, int]] | None = None, *,
                          supported_features: dict[str, tuple[int, int]] | None = None,
                          finalized_features: dict[str, int] | None = None, finalized_epoch: int = -1,
                          zk_migration_ready: bool = False, throttle_time_ms: int = 0):
    """Build the ApiVersionsResponse body listing `apis` (api_key -> (min, max)) and the features."""
    cls = codec.message_class("ApiVersionsResponse")
    apis = CONTROLLER_API_VERSIONS if apis is None else apis
    supported = SUPPORTED_FEATURES if supported_features is None else supported_features
    keys = [cls.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(apis.items())]
    sup = [cls.SupportedFeatureKey(name=n, min_version=lo, max_version=hi) for n, (lo, hi) in sorted(supported.items())]
    fin = [cls.FinalizedFeatureKey(name=n, max_version_level=level, min_version_level=level)
           for n, level in sorted((finalized_features or {}).items()) if level and level > 0]
    return cls(error_code=0, api_keys=keys, throttle_time_ms=throttle_time_ms, supported_features=sup,
               finalized_features_epoch=finalized_epoch, finalized_features=fin,
               zk_migration_ready=zk_migration_ready)


def controller_apis(vote_max_version: int | None = None) -> dict[int, tuple[int, int]]:
    """Return the served API table, Vote capped at `vote_max_version` (1 for a voter speaking Kafka 3.9)."""
    if vote_max_version is None:
        return CONTROLLER_API_VERSIONS
    vote = VOTE_KEY
    lo, hi = CONTROLLER_API_VERSIONS[vote]
    return {**CONTROLLER_API_VERSIONS, vote: (lo, min(hi, vote_max_version))}


def controller_api_versions(features=None, *, kraft_version: int | None = None, finalized_epoch: int = -1,
                            vote_max_version: int | None = None):
    """Build a controller's ApiVersionsResponse from a FeaturesImage (metadata.version + finalized levels)."""
    finalized: dict[str, int] = {}
    if features is not None:
        if features.metadata_version is not None:
            finalized["metadata.version"] = features.metadata_version
        finalized.update(features.finalized)
    if kraft_version is not None:
        finalized["kraft.version"] = kraft_version
    return api_versions_response(controller_apis(vote_max_version), finalized_features=finalized,
                                 finalized_epoch=finalized_epoch)


def check_request(body, api_version: int) -> int:
    """Return the error code for an ApiVersions request: INVALID_REQUEST for a bad v3+ client software id."""
    return framing.api_versions_request_error(body, api_version)


def error_response(code: int):
    """Build the ApiVersionsResponse that only carries `code` (Kafka lists no APIs with INVALID_REQUEST)."""
    return codec.message_class("ApiVersionsResponse")(error_code=code)
