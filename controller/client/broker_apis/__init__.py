"""What a Kafka 3.9 broker serves to admin clients, for simulated brokers (ServingBroker, serving.py): the client
listener, the metadata image it answers from, forwarding to the active controller, and partition replicas.

Rules:
- One module per job: listener (the socket protocol), api_table (ApiVersions), handlers (which request goes
  where), metadata_reads / admin_reads (answers from the image and the broker's properties), config_writes
  ((Incremental)AlterConfigs checked on the broker), forwarding (Envelope to the active controller),
  image_follower (the committed metadata), replicas / replica_fetcher / replica_quotas / partition_log (logs,
  Fetch, ISR expansion, throttles), serving (the whole broker, its lifecycle).
- Kafka 3.9 is the oracle: the broker's ApiVersions answer is a real 3.9 broker's byte for byte; its reads follow
  KafkaApis, KRaftMetadataCache, ConfigHelper, ClientQuotasImage; its writes are forwarded as ForwardingManager
  does (Envelope v0 with the client's principal and address; NOT_CONTROLLER in the envelope and broken
  connections retried at the active controller for 60 s, then REQUEST_TIMED_OUT).
- Not simulated (the admin tools do not need them): producing and consuming beyond replica data, consumer groups,
  transactions, delegation tokens, telemetry, log4j loggers, SASL/SSL listeners, a broker-side authorizer (every
  connection is User:ANONYMOUS, a super user in the fixture cluster; forwarded writes carry the principal, so the
  controller authorizes them), auto topic creation, ISR shrinking by a leader (the controller removes fenced and
  shut-down brokers), log truncation beyond a follower ahead of its leader. Such a request closes the connection.

Inventory: the RPCs each case of shared/fixtures/kafka-admin-3.9 sends to a broker, besides the admin client's
ApiVersions on every connection and its bootstrap Metadata (L: the broker answers from its image, properties or
replicas; F: forwarded to the active controller in an Envelope), and what broker behaviour its state needs.
Node routing (KafkaAdminClient): reads go to any broker; controller-bound writes to the Metadata answer's
controller, a random alive broker (both brokers must forward); BROKER configs named by id to that broker.

  kafka-topics
  - version, two-actions, create-no-topic, create-bad-config-value (checked in the tool): none.
  - create-partitions-rf, create-replica-assignment, create-existing (TOPIC_ALREADY_EXISTS), create-invalid-name
    (INVALID_TOPIC_EXCEPTION, Kafka's text): CreateTopics v7 F. Placement is the controller's (random start).
  - list-exclude-internal, describe-missing (tool: "does not exist as expected"), delete-if-exists-missing:
    Metadata v12 (all topics) L.
  - delete-existing: Metadata L, DeleteTopics v6 F.
  - alter-partitions-increase: Metadata L, DescribeCluster v1 L + DescribeTopicPartitions v0 L, CreatePartitions v3 F.
  - describe-one, -under-replicated-none, -at-min-isr, -broker-down-one/-unavailable/-all, -broker-down-created-rf2,
    -after-unclean, -final-all: Metadata L, DescribeCluster L, DescribeTopicPartitions L (Elr/LastKnownElr from
    the image: empty lists print "Elr: "), DescribeConfigs v4 of each topic L (non-default entries: the
    DYNAMIC_DEFAULT_BROKER_CONFIG retention.ms shows), DescribeCluster L (live brokers), ListPartitionReassignments
    v0 F. State: ISRs full while both brokers run (leaders expand the ISR); broker 5 stopped by a controlled
    shutdown: leaders move to 4, 5 leaves the ISRs, partitions only on 5 keep ISR [5] with no leader (the
    controller's); a topic created while 5 is down gets replicas [4,5], ISR [4]; after restarts the stopped
    broker catches up and rejoins through the leader's AlterPartition (ISR order = rejoin order).
  kafka-configs
  - describe-topic, describe-missing-topic (UNKNOWN_TOPIC_OR_PARTITION, message ""), bootstrap-controller-describe-
    topic (to a controller): DescribeConfigs v4 with synonyms L.
  - describe-broker: DescribeConfigs BROKER "4" L at broker 4; describe-broker-default(-after-add): BROKER "" L.
  - alter-topic-add/-delete, alter-bad-value (INVALID_CONFIG from the controller): DescribeConfigs L,
    IncrementalAlterConfigs v1 F (checked on the broker first).
  - alter-broker-add/-delete: DescribeConfigs BROKER "4" L, then legacy AlterConfigs v2 BROKER "4" to broker 4,
    checked (node id) then F.
  - alter-user-scram: AlterUserScramCredentials v0 F. alter-client-quota, alter-user-quota,
    alter-user-default-quota-delete: DescribeClientQuotas v1 L (deleted keys must exist), AlterClientQuotas v1 F.
  - describe-users-all: DescribeClientQuotas L (user SPECIFIED), DescribeUserScramCredentials v0 L (every user);
    describe-clients-all: DescribeClientQuotas L.
  - bootstrap-controller-describe-broker: sent to node 4 through the controllers' metadata: times out in Kafka
    (no broker contact). bootstrap-controller-describe-broker-default / -alter-broker-default: a controller's
    DescribeConfigs / IncrementalAlterConfigs (no broker). both-bootstraps: none.
  kafka-acls (StandardAuthorizer in the brokers' properties)
  - list-empty, list-topic, list-topic-match, list-topic-after-remove: DescribeAcls v3 L (from the image).
  - add-deny-topic, add-cluster, add-producer: CreateAcls v3 F. add-no-principal, no-action: none.
  kafka-leader-election
  - preferred-all-nothing-to-do (all partitions: null topics), preferred-json-file, preferred-not-needed
    (ELECTION_NOT_NEEDED), preferred-partition-leader-down (PREFERRED_LEADER_NOT_AVAILABLE), unclean (through
    broker 5): ElectLeaders v2 F. State: leaders off their preferred replica after the restarts; u-0 with ISR [4],
    no leader, while 4 is down and 5 up (unclean: 5 leads, ISR [5], RECOVERING then RECOVERED by the new leader's
    AlterPartition). malformed-json, no-election-type: none.
  kafka-reassign-partitions
  - generate: DescribeCluster L (--broker-list checked), DescribeCluster + DescribeTopicPartitions L.
  - list-none, list-in-progress: ListPartitionReassignments F.
  - execute-expand, execute-throttled-big, execute-missing-broker ("Unknown broker id 9"): ListPartitionReassignments
    F, DescribeCluster L, DescribeCluster + DescribeTopicPartitions L, with --throttle IncrementalAlterConfigs
    TOPIC (leader/follower.replication.throttled.replicas) F and BROKER "4", "5" (the rates) at each broker F,
    then AlterPartitionReassignments v0 F. State: the added replica fetches from the leader and joins the ISR
    (the controller then completes the move); ~1 MB moves at once, ~9 MB at 1000 B/s stays in progress (Kafka's
    windowed quota: one 1 MiB fetch, then about one per 11 s).
  - cancel: ListPartitionReassignments F, AlterPartitionReassignments (null replicas) F, then as verify's clearing.
  - verify-done, verify-done-throttled: ListPartitionReassignments F, DescribeCluster + DescribeTopicPartitions L,
    then clearing throttles: DescribeCluster L, IncrementalAlterConfigs BROKER "4", "5" at each broker F, TOPIC F.
  - no-action: none.
  kafka-broker-api-versions
  - broker4, broker-down: Metadata L (the alive brokers at 127.0.0.1:31014/31015), then ApiVersions v4 L to each:
    the broker's 3.9 table (61 APIs; forwardable ones as the controller serves them). bad-address: nothing listens.
  kafka-cluster, kafka-metadata-quorum
  - cluster-id-bootstrap-server: DescribeCluster L. quorum-describe-status: DescribeQuorum v2 F (the brokers are
    the observers, with their metadata log directory ids). cluster-id-bootstrap-controller: a controller.
    list-endpoints-bootstrap-server, no-subcommand: none.
"""
