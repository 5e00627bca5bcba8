"""State helpers of the fixture cluster (tests/admin_cluster.AdminCluster): each sends what a Kafka admin tool
sends, through a broker's listener, then waits until both brokers' images hold the result.

Rules:
- Every helper raises FixtureClusterError when an answer holds an error, naming it; nothing is left half done
  silently. Topics are created with an exact replica assignment when one is given (the fixture's recorded
  placements), else with Kafka's defaults (the controller places them).
- Reassignments wait for what the caller asks: completed (the new replicas caught up and joined the ISR) or only
  started; throttles are the configs kafka-reassign-partitions sets (broker rates, topic replica lists).
"""
from __future__ import annotations

import os

from .admin_cluster import (
    BROKER,
    DELETE,
    PREFERRED,
    SET,
    TOPIC,
    AdminCluster,
    message,
    salted,
)

ACL_RESOURCE = {"topic": 2, "group": 3, "cluster": 4, "transactional-id": 5}
ACL_PATTERN = {"literal": 3, "prefixed": 4}
ACL_OPERATION = {"all": 2, "read": 3, "write": 4, "create": 5, "delete": 6, "alter": 7, "describe": 8,
                 "cluster_action": 9, "describe_configs": 10, "alter_configs": 11, "idempotent_write": 12}
ACL_PERMISSION = {"deny": 2, "allow": 3}


class ClusterOps:
    """The state helpers, over an AdminCluster."""

    def __init__(self, cluster: AdminCluster):
        self.cluster = cluster

    # ------------------------------------------------------------ topics
    def create_topic(self, name: str, partitions: int = -1, replication_factor: int = -1, *,
                     assignment: list[list[int]] | None = None, configs: dict[str, str] | None = None) -> None:
        """Create a topic (CreateTopics v7), with `assignment` [[replicas of p0], ...] when given."""
        cls = "CreateTopicsRequest"
        topic = message(cls).CreatableTopic(
            name=name, num_partitions=-1 if assignment else partitions,
            replication_factor=-1 if assignment else replication_factor,
            assignments=[message(cls).CreatableReplicaAssignment(partition_index=i, broker_ids=list(r))
                         for i, r in enumerate(assignment or [])],
            configs=[message(cls).CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])
        self.cluster._write("CreateTopics", 7, message(cls, topics=[topic], timeout_ms=30_000, validate_only=False))

    def delete_topic(self, name: str) -> None:
        """Delete a topic by name (DeleteTopics v6)."""
        cls = message("DeleteTopicsRequest")
        self.cluster._write("DeleteTopics", 6, message("DeleteTopicsRequest", topics=[cls.DeleteTopicState(name=name)],
                                                       timeout_ms=30_000))

    def add_partitions(self, name: str, count: int, assignment: list[list[int]] | None = None) -> None:
        """Grow a topic to `count` partitions (CreatePartitions v3), the new ones on `assignment` when given."""
        cls = message("CreatePartitionsRequest")
        topic = cls.CreatePartitionsTopic(
            name=name, count=count,
            assignments=None if assignment is None else [cls.CreatePartitionsAssignment(broker_ids=list(r))
                                                         for r in assignment])
        self.cluster._write("CreatePartitions", 3, message("CreatePartitionsRequest", topics=[topic],
                                                           timeout_ms=30_000, validate_only=False))

    # ------------------------------------------------------------ configs
    def alter_configs(self, kind: int, name: str, set_: dict[str, str] | None = None,
                      delete: list[str] | None = None) -> None:
        """Set and delete configs of one resource (IncrementalAlterConfigs v1): TOPIC or BROKER ("" = default)."""
        cls = message("IncrementalAlterConfigsRequest")
        configs = [cls.AlterableConfig(name=k, config_operation=SET, value=v) for k, v in (set_ or {}).items()]
        configs += [cls.AlterableConfig(name=k, config_operation=DELETE, value=None) for k in (delete or [])]
        resource = cls.AlterConfigsResource(resource_type=kind, resource_name=name, configs=configs)
        broker_id = int(name) if kind == BROKER and name else None
        self.cluster._write("IncrementalAlterConfigs", 1, message("IncrementalAlterConfigsRequest",
                                                                  resources=[resource], validate_only=False), broker_id)

    def topic_configs(self, name: str, set_=None, delete=None) -> None:
        """Set and delete a topic's configs."""
        self.alter_configs(TOPIC, name, set_, delete)

    def broker_configs(self, broker_id: int | None, set_=None, delete=None) -> None:
        """Set and delete a broker's dynamic configs (None: the cluster-wide default)."""
        self.alter_configs(BROKER, "" if broker_id is None else str(broker_id), set_, delete)

    # ------------------------------------------------------------ ACLs
    def add_acl(self, principal: str, operation: str, permission: str, resource: str, name: str, *,
                pattern: str = "literal", host: str = "*") -> None:
        """Create one ACL (CreateAcls v3); kinds and operations by kafka-acls' lower-case names."""
        cls = message("CreateAclsRequest")
        creation = cls.AclCreation(resource_type=ACL_RESOURCE[resource], resource_name=name,
                                   resource_pattern_type=ACL_PATTERN[pattern], principal=principal, host=host,
                                   operation=ACL_OPERATION[operation], permission_type=ACL_PERMISSION[permission])
        self.cluster._write("CreateAcls", 3, message("CreateAclsRequest", creations=[creation]))

    def remove_acl(self, principal: str, operation: str, permission: str, resource: str, name: str, *,
                   pattern: str = "literal", host: str = "*") -> None:
        """Delete the ACLs matching exactly these fields (DeleteAcls v3)."""
        cls = message("DeleteAclsRequest")
        acl_filter = cls.DeleteAclsFilter(
            resource_type_filter=ACL_RESOURCE[resource], resource_name_filter=name,
            pattern_type_filter=ACL_PATTERN[pattern], principal_filter=principal, host_filter=host,
            operation=ACL_OPERATION[operation], permission_type=ACL_PERMISSION[permission])
        self.cluster._write("DeleteAcls", 3, message("DeleteAclsRequest", filters=[acl_filter]))

    # ------------------------------------------------------------ quotas and SCRAM
    def quotas(self, entity: dict[str, str | None], set_: dict[str, float] | None = None,
               remove: list[str] | None = None) -> None:
        """Set and remove client quotas of an entity ({"user": "alice"}, {"user": None} = default user)."""
        cls = message("AlterClientQuotasRequest")
        ops = [cls.OpData(key=k, value=float(v), remove=False) for k, v in (set_ or {}).items()]
        ops += [cls.OpData(key=k, value=0.0, remove=True) for k in (remove or [])]
        entry = cls.EntryData(entity=[cls.EntityData(entity_type=k, entity_name=v) for k, v in entity.items()],
                              ops=ops)
        self.cluster._write("AlterClientQuotas", 1, message("AlterClientQuotasRequest", entries=[entry],
                                                            validate_only=False))

    def scram(self, user: str, password: str, iterations: int = 4096, mechanism: int = 1) -> None:
        """Upsert a SCRAM credential (AlterUserScramCredentials v0; 1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512)."""
        cls = message("AlterUserScramCredentialsRequest")
        salt = os.urandom(16)
        upsert = cls.ScramCredentialUpsertion(
            name=user, mechanism=mechanism, iterations=iterations, salt=salt,
            salted_password=salted(password, salt, iterations, "sha256" if mechanism == 1 else "sha512"))
        self.cluster._write("AlterUserScramCredentials", 0, message("AlterUserScramCredentialsRequest",
                                                                    deletions=[], upsertions=[upsert]))

    # ------------------------------------------------------------ leadership and replicas
    def elect(self, partitions: list[tuple[str, int]] | None, election: int = PREFERRED):
        """Run ElectLeaders v2 (None: every partition); return the answer (errors per partition are data)."""
        cls = message("ElectLeadersRequest")
        wanted = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for topic, index in partitions:
                by_topic.setdefault(topic, []).append(index)
            wanted = [cls.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()]
        response = self.cluster.request("ElectLeaders", 2, message("ElectLeadersRequest", election_type=election,
                                                                   topic_partitions=wanted, timeout_ms=30_000))
        self.cluster.sync()
        return response

    def reassign(self, targets: dict[tuple[str, int], list[int] | None], *, complete: bool = True,
                 timeout_s: float = 60) -> None:
        """Start (replicas) or cancel (None) reassignments; with `complete`, wait until each target is the
        partition's replica set with no reassignment left."""
        cls = message("AlterPartitionReassignmentsRequest")
        by_topic: dict[str, list] = {}
        for (topic, index), replicas in targets.items():
            by_topic.setdefault(topic, []).append(cls.ReassignablePartition(partition_index=index, replicas=replicas))
        self.cluster._write("AlterPartitionReassignments", 0, message(
            "AlterPartitionReassignmentsRequest", timeout_ms=30_000,
            topics=[cls.ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()]))
        if complete:
            for (topic, index), replicas in targets.items():
                if replicas is not None:
                    self.cluster.wait_partition(topic, index, f"replicas {replicas} with a full ISR", lambda p, r=replicas:
                                                list(p.replicas) == r and not p.adding_replicas and
                                                not p.removing_replicas and sorted(p.isr) == sorted(r), timeout_s)

    def throttle(self, moves: dict[tuple[str, int], tuple[list[int], list[int]]], rate: int) -> None:
        """Set kafka-reassign-partitions' throttles: topic replica lists (leaders: current replicas, followers: the
        added ones) and the rate on every broker involved."""
        leaders: dict[str, list[str]] = {}
        followers: dict[str, list[str]] = {}
        brokers = set()
        for (topic, index), (current, target) in moves.items():
            leaders.setdefault(topic, []).extend(f"{index}:{b}" for b in current)
            followers.setdefault(topic, []).extend(f"{index}:{b}" for b in target if b not in current)
            brokers |= set(current) | set(target)
        for topic in leaders:
            self.topic_configs(topic, {"leader.replication.throttled.replicas": ",".join(leaders[topic]),
                                       "follower.replication.throttled.replicas": ",".join(followers[topic])})
        for broker_id in sorted(brokers):
            self.broker_configs(broker_id, {"leader.replication.throttled.rate": str(rate),
                                            "follower.replication.throttled.rate": str(rate)})

    def clear_throttles(self, topics: list[str], brokers: list[int]) -> None:
        """Remove the reassignment throttles, as kafka-reassign-partitions --verify does once done."""
        for broker_id in brokers:
            self.broker_configs(broker_id, delete=["leader.replication.throttled.rate",
                                                   "follower.replication.throttled.rate",
                                                   "replica.alter.log.dirs.io.max.bytes.per.second"])
        for topic in topics:
            self.topic_configs(topic, delete=["leader.replication.throttled.replicas",
                                              "follower.replication.throttled.replicas"])

    def produce(self, topic: str, index: int, nbytes: int) -> None:
        """Write `nbytes` into a partition at its leader (what a producer's data does to sizes and replicas)."""
        leader = self.cluster.partition(topic, index).leader
        self.cluster.loop.run(_append(self.cluster.broker(leader), topic, index, nbytes))

    def wait_full_isr(self, timeout_s: float = 60) -> None:
        """Wait until every partition's ISR holds all its replicas."""
        def full(image):
            return all(sorted(t.partition(i).isr) == sorted(t.partition(i).replicas)
                       for t in image.topics.by_id.values() for i in t.partitions)
        self.cluster.wait(full, "every ISR full", timeout_s)


async def _append(broker, topic: str, index: int, nbytes: int) -> None:
    broker.append(topic, index, nbytes)
