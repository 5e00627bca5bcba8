"""Kafka's Admin calls (the client side of the admin APIs), their result types and errors, over the blocking client.

Rules:
- `from kraftsman.controller.client.admin import Admin, ServerError` is the entry: Admin (client.py) joins one
  mixin per area over the core (core.py: errors, connections, Kafka 3.9's routing: any node for reads, the
  controller for controller-bound writes, a node by id); results.py holds the shared result types.
- Areas, one module each: cluster (DescribeCluster, UnregisterBroker, ApiVersions of every node), quorum
  (DescribeQuorum, Add/RemoveRaftVoter), features (ApiVersions' features, UpdateFeatures), topics (Metadata,
  DescribeTopicPartitions, CreateTopics, DeleteTopics, CreatePartitions), configs (DescribeConfigs,
  IncrementalAlterConfigs, AlterConfigs), reassignments (List/AlterPartitionReassignments), elections
  (ElectLeaders), quotas (Describe/AlterClientQuotas, Describe/AlterUserScramCredentials), acls (DescribeAcls,
  CreateAcls, DeleteAcls). A new
  call is one method in its area's mixin plus its result type; a new area is one module and one base of Admin
  (client.py).
- Errors: a server error code is ServerError (code, Kafka's message); an API or version the server lacks is
  sync_client.UnsupportedVersion; connection failures are sync_client's (Unreachable, RequestTimeout,
  NotKafka, AuthenticationFailed). Nothing here prints or chooses words or exit codes: the tools do.
- This module only re-exports what callers name.
"""
from __future__ import annotations

from .client import Admin
from .cluster import BROKERS, CONTROLLERS
from .configs import BROKER, BROKER_LOGGER, TOPIC
from .core import ServerError, error_message
from .features import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE, UPGRADE, feature_outcomes
from .quorum import METADATA_TOPIC, leader_endpoint
from .results import (
    ClusterInfo,
    Config,
    ConfigEntry,
    ConfigSynonym,
    CreatedTopic,
    FeatureMetadata,
    NewTopic,
    Node,
    NodeApiVersions,
    PartitionReassignment,
    QuorumInfo,
    ReplicaState,
    TopicDescription,
    TopicListing,
    TopicPartitionInfo,
)

__all__ = ["Admin", "BROKER", "BROKERS", "BROKER_LOGGER", "CONTROLLERS", "ClusterInfo", "Config", "ConfigEntry",
           "ConfigSynonym", "CreatedTopic", "FeatureMetadata", "METADATA_TOPIC", "NewTopic", "Node", "NodeApiVersions",
           "PartitionReassignment", "QuorumInfo", "ReplicaState", "SAFE_DOWNGRADE", "ServerError", "TOPIC",
           "TopicDescription", "TopicListing", "TopicPartitionInfo", "UNSAFE_DOWNGRADE", "UPGRADE", "error_message",
           "feature_outcomes", "leader_endpoint"]
