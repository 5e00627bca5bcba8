"""Apply the quorum controller's logic (Kafka's QuorumController): requests in, metadata records and responses out.

"quorum" here is the quorum *controller*, the state machine the Raft log replicates; the Raft quorum itself
(votes, epochs, log replication, voter sets) is controller/raft, and its quorum maths controller/raft/quorum.py.

Naming rule of this package:
- `<slice>_control.py` is a part that owns a slice of the metadata and serves requests: it alone registers
  handlers (HANDLERS: API name -> handler, READ_ONLY: the APIs that never write), which controller.py joins.
  It is named after Kafka's control manager for that slice: replication_control (ReplicationControlManager:
  topics, partitions, ISR, reassignments, partition leader elections), configuration_control
  (ConfigurationControlManager: the config APIs), cluster_control (ClusterControlManager: registrations,
  heartbeats, fencing, DescribeCluster), features_control, acls_control, scram_control, quotas_control
  (ClientQuotaControlManager), tokens_control (DelegationTokenControlManager), producer_ids_control.
- Every other module is a plain name and registers nothing: it holds the handlers a `_control` module
  registers, named after the request they answer (alter_configs, describe_configs, describe_cluster, metadata)
  or the concept they work on (topics, reassignment, directories), or a pure helper (partitions, placement,
  staging, feature_levels, api_error, java_hash_order).
- Where a word means something else elsewhere in the tree, the name says which side: partition_elections
  (partition leaders, not Raft's controller/raft/election.py), replication_control (partition replicas and
  ISR, not Raft's log replication in controller/raft/leader.py and follower.py); "configs" are the topic and
  broker configs kept in the metadata (ConfigRecord: alter_configs, describe_configs, topic_configs_schema,
  broker_configs_schema, configs_synonyms), not the Raft core's settings (controller/raft/config.py) nor the
  server properties (controller/server/config.py). QuorumConfig (context.py) is this controller's settings.
"""
