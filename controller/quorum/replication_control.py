"""Partition replication (Kafka's ReplicationControlManager): request handlers by API name, and the broker hooks.

Rules:
- HANDLERS maps the API name (as framing.api_info(key).name, e.g. "CreateTopics") to
  `handler(ctx, request) -> ControllerResult`; READ_ONLY names the ones that never return records.
- The handlers are written in topics, reassignment, partition_elections, directories and metadata (the config
  APIs are configuration_control's, as in Kafka).
- The hooks on_broker_fenced / on_broker_unfenced / on_controlled_shutdown / on_broker_unregistered /
  on_broker_shutdown / on_directories_offline return
  PartitionChangeRecords for cluster_control (broker_fencing) to append with its own registration change record.
"""
from __future__ import annotations

from .directories import assign_replicas_to_dirs, newly_offline, on_directories_offline, sorted_dirs
from .metadata import metadata
from .partition_elections import (
    balance_leaders,
    elect_leaders,
    elect_unclean_leaders,
    on_broker_fenced,
    on_broker_shutdown,
    on_broker_unfenced,
    on_broker_unregistered,
    on_controlled_shutdown,
)
from .reassignment import alter_partition, alter_partition_reassignments, list_partition_reassignments
from .topics import create_partitions, create_topics, delete_topics

HANDLERS = {
    "CreateTopics": create_topics,
    "DeleteTopics": delete_topics,
    "CreatePartitions": create_partitions,
    "AlterPartition": alter_partition,
    "AlterPartitionReassignments": alter_partition_reassignments,
    "ListPartitionReassignments": list_partition_reassignments,
    "ElectLeaders": elect_leaders,
    "Metadata": metadata,
    "AssignReplicasToDirs": assign_replicas_to_dirs,
}

READ_ONLY = frozenset({"ListPartitionReassignments", "Metadata"})

__all__ = ["HANDLERS", "READ_ONLY", "balance_leaders", "elect_unclean_leaders", "newly_offline", "on_broker_fenced",
           "on_broker_shutdown", "on_broker_unfenced", "on_broker_unregistered", "on_controlled_shutdown",
           "on_directories_offline", "sorted_dirs"]
