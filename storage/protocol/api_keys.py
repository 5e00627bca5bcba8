"""The API keys Kafka 3.9's client knows (its ApiKeys enum, keys 0-87): each key's name, the client's version
range and the listeners its request spec names. kafka-broker-api-versions prints a node's answer against it
(NodeApiVersions.toString): the usable version of each API, UNSUPPORTED for a client API the node leaves out.

Rules:
- Derived from kraftsman's schemas where kraftsman carries the API (the request spec's name, validVersions and
  listeners, as Kafka's generator builds ApiMessageType from the same JSON); stated in STATED where it does not:
  the 43 APIs kraftsman has no spec for (produce, consume, groups, transactions, ZooKeeper-era and share-group
  RPCs), and the 9 whose spec kraftsman keeps at a later release than 3.9 for its 4.x modes (Fetch, Metadata,
  AlterPartitionReassignments, Vote, UpdateFeatures, DescribeCluster and AddRaftVoter gained versions in 4.x;
  Envelope and AllocateProducerIds lost 3.9's zkBroker listener in 4.0), each marked `later`. A stated row for a key
  whose spec says the same is a mistake (tests/storage/protocol/test_api_keys.py): each fact has one home.
- `latest` is the top of validVersions, unstable versions included: ApiKeys.latestVersion() is
  highestSupportedVersion(true), so the share-group APIs (3.9's only version, v0, unstable) count as v0.
- A client API (ApiKeys.clientApis) is one whose listeners include zkBroker or broker; controller-only APIs
  (Vote, BrokerRegistration, ...) are known to the client but not client APIs.
- Kafka 3.9's NodeApiVersions prints no deprecation marker, so the specs' deprecatedVersions are not kept here.
- Data only: the schemas are read on first use (not at import), once.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

RELEASE = "3.9"
_LISTENERS = {"z": "zkBroker", "b": "broker", "c": "controller"}

# key name versions listeners (z zkBroker, b broker, c controller): Kafka 3.9's request specs where kraftsman has
# no spec, or has one from a later release (marked)
STATED = """
0 Produce 0-11 zb
1 Fetch 0-17 zbc                      later: kraftsman's spec has 4.1's v18
2 ListOffsets 0-9 zb
3 Metadata 0-12 zb                    later: kraftsman's spec has 4.x's v13
4 LeaderAndIsr 0-7 z
5 StopReplica 0-4 z
6 UpdateMetadata 0-8 z
7 ControlledShutdown 0-3 zc
8 OffsetCommit 0-9 zb
9 OffsetFetch 0-9 zb
10 FindCoordinator 0-6 zb
11 JoinGroup 0-9 zb
12 Heartbeat 0-4 zb
13 LeaveGroup 0-5 zb
14 SyncGroup 0-5 zb
15 DescribeGroups 0-5 zb
16 ListGroups 0-5 zb
21 DeleteRecords 0-2 zb
22 InitProducerId 0-5 zb
23 OffsetForLeaderEpoch 0-4 zb
24 AddPartitionsToTxn 0-5 zb
25 AddOffsetsToTxn 0-4 zb
26 EndTxn 0-4 zb
27 WriteTxnMarkers 0-1 zb
28 TxnOffsetCommit 0-4 zb
34 AlterReplicaLogDirs 0-2 zb
42 DeleteGroups 0-2 zb
45 AlterPartitionReassignments 0 zbc   later: kraftsman's spec has 4.1's v1
47 OffsetDelete 0 zb
52 Vote 0-1 c                          later: kraftsman's spec has 4.0's v2 (KIP-996)
57 UpdateFeatures 0-1 zbc             later: kraftsman's spec has 4.x's v2
58 Envelope 0 cz                       later: 4.0 dropped the zkBroker listener
60 DescribeCluster 0-1 zbc             later: kraftsman's spec has 4.0's v2 (KIP-1073)
61 DescribeProducers 0 zb
65 DescribeTransactions 0 zb
66 ListTransactions 0-1 zb
67 AllocateProducerIds 0 zc            later: 4.0 dropped the zkBroker listener
68 ConsumerGroupHeartbeat 0 zb
69 ConsumerGroupDescribe 0 zb
71 GetTelemetrySubscriptions 0 b
72 PushTelemetry 0 b
74 ListClientMetricsResources 0 b
76 ShareGroupHeartbeat 0 b
77 ShareGroupDescribe 0 b
78 ShareFetch 0 b
79 ShareAcknowledge 0 b
80 AddRaftVoter 0 cb                   later: kraftsman's spec has 4.2's v1
83 InitializeShareGroupState 0 b
84 ReadShareGroupState 0 b
85 WriteShareGroupState 0 b
86 DeleteShareGroupState 0 b
87 ReadShareGroupStateSummary 0 b
"""


@dataclass(frozen=True)
class ApiKey:
    """One API key as Kafka 3.9's client knows it: key, name, the client's oldest and latest versions, and the
    listeners its spec names."""

    key: int
    name: str
    oldest: int
    latest: int
    listeners: frozenset[str]

    @property
    def client_api(self) -> bool:
        """Tell whether the key is one of ApiKeys.clientApis (a broker or ZooKeeper-era broker listener's)."""
        return bool(self.listeners & {"zkBroker", "broker"})


def stated() -> dict[int, ApiKey]:
    """Return the STATED rows by key."""
    rows = {}
    for line in STATED.strip().splitlines():
        key, name, versions, letters = line.split()[:4]
        oldest, _, latest = versions.partition("-")
        rows[int(key)] = ApiKey(int(key), name, int(oldest), int(latest or oldest),
                                frozenset(_LISTENERS[c] for c in letters))
    return rows


def from_schemas() -> dict[int, ApiKey]:
    """Return the API keys kraftsman's request specs describe (at kraftsman's versions)."""
    from .framing import api_registry
    from .schema import load

    return {key: ApiKey(key, info.name, info.valid_versions.lo, info.valid_versions.hi,
                        frozenset(load(info.request).listeners))
            for key, info in api_registry().items()}


@functools.lru_cache(maxsize=None)
def api_keys() -> dict[int, ApiKey]:
    """Return every API key Kafka 3.9's client knows, by key (ascending): the stated rows over the schemas'."""
    return dict(sorted((from_schemas() | stated()).items()))
