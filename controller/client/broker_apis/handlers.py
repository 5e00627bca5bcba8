"""BrokerApis: what a Kafka 3.9 broker does with each request on its client listener (KafkaApis.handle).

Rules:
- LOCAL requests are answered from the broker's committed image, server properties and replicas;
  FORWARDED ones go to the active controller in an Envelope as they came (maybeForwardToController /
  forwardToControllerOrFail); (Incremental)AlterConfigs are checked here first (config_writes).
- Anything else the broker advertises (produce, consumer groups, transactions, delegation tokens, telemetry,
  ...) is not simulated: the handler answers None and the listener closes the connection.
"""
from __future__ import annotations

import random

from . import admin_reads, config_writes, metadata_reads

FORWARDED = frozenset({"CreateTopics", "DeleteTopics", "CreatePartitions", "CreateAcls", "DeleteAcls", "ElectLeaders",
                       "AlterPartitionReassignments", "ListPartitionReassignments", "AlterClientQuotas",
                       "AlterUserScramCredentials", "UpdateFeatures", "DescribeQuorum", "UnregisterBroker",
                       "AddRaftVoter", "RemoveRaftVoter"})
LOCAL = frozenset({"Metadata", "DescribeCluster", "DescribeTopicPartitions", "DescribeConfigs", "DescribeAcls",
                   "DescribeClientQuotas", "DescribeUserScramCredentials", "DescribeLogDirs", "Fetch"})
CHECKED_THEN_FORWARDED = frozenset({"IncrementalAlterConfigs", "AlterConfigs"})
LISTENER = "PLAINTEXT"


class BrokerApis:
    """Answer requests for broker `broker_id` from `follower.image`, `replicas`, and the controller `channel`."""

    def __init__(self, broker_id: int, cluster_id: str, properties: dict[str, str], *, follower, channel, replicas,
                 rng: random.Random | None = None):
        self.broker_id, self.cluster_id, self.properties = broker_id, cluster_id, dict(properties)
        self.follower, self.channel, self.replicas = follower, channel, replicas
        self.config = admin_reads.broker_config(self.properties)
        self.rng = rng or random.Random()
        self.served: dict[str, int] = {}
        self._local = {"Metadata": self._metadata, "DescribeCluster": self._describe_cluster,
                       "DescribeTopicPartitions": self._describe_topic_partitions,
                       "DescribeConfigs": self._describe_configs, "DescribeAcls": self._describe_acls,
                       "DescribeClientQuotas": self._describe_quotas, "DescribeUserScramCredentials": self._scram,
                       "DescribeLogDirs": self._log_dirs, "Fetch": self._fetch}

    def handle(self, request, body):
        """Return the answer to `request` (a listener.BrokerRequest), an awaitable of it, or None."""
        name = request.api_name
        self.served[name] = self.served.get(name, 0) + 1
        if name in FORWARDED:
            return self.channel.forward(request, body)
        if name in CHECKED_THEN_FORWARDED:
            return config_writes.alter_configs(request, body, node_id=self.broker_id, forward=self.channel.forward)
        local = self._local.get(name)
        return None if local is None else local(request, body)

    def _metadata(self, request, body):
        return metadata_reads.metadata(self.follower.image, body, version=request.api_version, listener=LISTENER,
                                       cluster_id=self.cluster_id, rng=self.rng)

    def _describe_cluster(self, request, body):
        return metadata_reads.describe_cluster(self.follower.image, body, version=request.api_version,
                                               listener=LISTENER, cluster_id=self.cluster_id, rng=self.rng)

    def _describe_topic_partitions(self, request, body):
        return metadata_reads.describe_topic_partitions(self.follower.image, body, listener=LISTENER)

    def _describe_configs(self, request, body):
        return admin_reads.describe_configs_answer(self.follower.image, body, version=request.api_version,
                                                   node_id=self.broker_id, config=self.config)

    def _describe_acls(self, request, body):
        return admin_reads.describe_acls_answer(self.follower.image, body, version=request.api_version,
                                                properties=self.properties)

    def _describe_quotas(self, request, body):
        return admin_reads.describe_client_quotas_answer(self.follower.image, body)

    def _scram(self, request, body):
        return admin_reads.describe_scram_answer(self.follower.image, body, version=request.api_version)

    def _log_dirs(self, request, body):
        return self.replicas.describe_log_dirs(body)

    def _fetch(self, request, body):
        if request.api_version < 12:
            return None  # replica and consumer fetches before v12 are not simulated
        return self.replicas.fetch(body, request.api_version)
