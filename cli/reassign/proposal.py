"""kafka-reassign-partitions --generate's proposal: Kafka's AdminUtils.assignReplicasToBrokers over the brokers of
--broker-list, each topic keeping its partition count and replication factor.

Rules:
- Rack-unaware (no broker has a rack, or --disable-rack-aware): partition p's first replica is the broker at
  (p + start) in the broker list, the others follow it at 1 + (shift + j) % (n - 1) places on, and the shift
  grows by one after every n partitions; start and shift are random draws in [0, n) (AdminUtils' Random).
- Rack-aware (every broker has a rack): the same over the brokers alternated by rack (racks sorted, each rack's
  brokers sorted), skipping a broker whose rack already holds a replica while another rack holds none, or that
  already holds one while another broker holds none. Some brokers with a rack and some without: "Not all brokers
  have rack information. Add --disable-rack-aware in command line to make replica assignment without rack
  information." (AdminOperationException).
- The broker list is the cluster's brokers (DescribeCluster, its order) named in --broker-list; unknown ids are
  left out, as in Kafka. A replication factor above their number is Kafka's InvalidReplicationFactorException.
- Topics are visited, and each topic's replication factor taken from its first partition, in the order of
  Kafka's HashMaps (java_hash_order), so a seeded Random gives Kafka's draws in Kafka's order.
"""
from __future__ import annotations

import random

from kraftsman.controller.quorum.java_hash_order import JavaHashMap, java_order, topic_partition_hash

from ..common.jopt import KafkaError

ADMIN_OPERATION = "org.apache.kafka.server.common.AdminOperationException"
INVALID_REPLICATION_FACTOR = "org.apache.kafka.common.errors.InvalidReplicationFactorException"
RACKS_MIXED = ("Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
               "assignment without rack information.")


def replica_index(first: int, shift: int, j: int, n: int) -> int:
    """Return the broker index of the (j + 2)-th replica (AdminUtils.replicaIndex)."""
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated(racks: dict[int, str]) -> list[int]:
    """Return the brokers alternated by rack: the first of each rack (racks sorted), then the second, ..."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    columns = [sorted(by_rack[r]) for r in sorted(by_rack, key=java_order)]
    return [column[i] for i in range(max(map(len, columns), default=0)) for column in columns if i < len(column)]


def assign(brokers: list[tuple[int, str | None]], partitions: int, replication_factor: int,
           rng: random.Random) -> dict[int, list[int]]:
    """Return {partition: replicas} for (broker id, rack or None) brokers (AdminUtils.assignReplicasToBrokers)."""
    if replication_factor > len(brokers):
        raise KafkaError(f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.",
                         INVALID_REPLICATION_FACTOR, traced=False)
    if all(rack is None for _, rack in brokers):
        return _rack_unaware([b for b, _ in brokers], partitions, replication_factor, rng)
    return _rack_aware(dict(brokers), partitions, replication_factor, rng)


def _firsts(n: int, partitions: int, rng: random.Random):
    """Yield (partition, index of its first replica, shift) with Kafka's random start and shift (two draws)."""
    start, shift = rng.randrange(n), rng.randrange(n)
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        yield p, (p + start) % n, shift


def _rack_unaware(ids: list[int], partitions: int, rf: int, rng: random.Random) -> dict[int, list[int]]:
    n = len(ids)
    return {p: [ids[first]] + [ids[replica_index(first, shift, j, n)] for j in range(rf - 1)]
            for p, first, shift in _firsts(n, partitions, rng)}


def _rack_aware(racks: dict[int, str], partitions: int, rf: int, rng: random.Random) -> dict[int, list[int]]:
    arranged = rack_alternated(racks)
    n, rack_count = len(arranged), len(set(racks.values()))
    result = {}
    for p, first, shift in _firsts(n, partitions, rng):
        replicas = [arranged[first]]
        racks_used, k = {racks[arranged[first]]}, 0
        for _ in range(rf - 1):
            while True:
                broker = arranged[replica_index(first, shift * rack_count, k, n)]
                k += 1
                if ((racks[broker] not in racks_used or len(racks_used) == rack_count)
                        and (broker not in replicas or len(set(replicas)) == n)):
                    replicas.append(broker)
                    racks_used.add(racks[broker])
                    break
        result[p] = replicas
    return result


def broker_metadata(nodes, wanted: list[int], rack_aware: bool) -> list[tuple[int, str | None]]:
    """Return (id, rack) of the cluster's `nodes` named in `wanted`, in the nodes' order (getBrokerMetadata)."""
    chosen = set(wanted)
    found = [(n.node_id, n.rack if rack_aware else None) for n in nodes if n.node_id in chosen]
    rackless = sum(1 for _, rack in found if rack is None)
    if rack_aware and rackless not in (0, len(found)):
        raise KafkaError(RACKS_MIXED, ADMIN_OPERATION)
    return found


def propose(current: dict, brokers: list[tuple[int, str | None]], rng: random.Random) -> dict:
    """Return the proposed {(topic, partition): replicas} for the current assignment (calculateAssignment)."""
    by_key = JavaHashMap(hash_of=topic_partition_hash)
    for tp, replicas in current.items():
        by_key.put(tp, replicas)
    by_topic = JavaHashMap()
    for (topic, _), replicas in by_key.items():
        if topic not in by_topic:
            by_topic.put(topic, [])
        by_topic.get(topic).append(replicas)
    proposed = {}
    for topic, assignments in by_topic.items():
        for index, replicas in assign(brokers, len(assignments), len(assignments[0]), rng).items():
            proposed[(topic, index)] = replicas
    return proposed
