"""kafka-reassign-partitions' replication throttles: which replicas of which topics are throttled while partitions
move, at which rate on which brokers, and the config changes that set and clear them (Kafka 3.9's
ReassignPartitionsCommand).

Rules:
- A move has sources (the replicas a partition has now, or, while a reassignment is under way, its replicas less
  the ones being added) and destinations (the target replicas that are no source). The moves of --execute are
  those of every ongoing reassignment plus the plan's.
- Each moving topic gets leader.replication.throttled.replicas "partition:source,..." and
  follower.replication.throttled.replicas "partition:destination,..." (each a sorted set of strings, so "10:4"
  comes before "2:4"; a topic with no destination gets ""), and every source or destination broker the rates
  leader.replication.throttled.rate and follower.replication.throttled.rate (--throttle). --replica-alter-log-dirs-
  throttle sets replica.alter.log.dirs.io.max.bytes.per.second on the brokers named with a log directory.
- Clearing (--verify once done, --cancel) deletes the three broker rates on every broker of the cluster and of the
  plan, and the two replica lists on every topic of the plan.
- Changes are {(resource type, name): [(key, value or None, operation)]}, applied by actions.alter_configs.
"""
from __future__ import annotations

from dataclasses import dataclass

from kraftsman.controller.client.admin.configs import BROKER, DELETE, SET, TOPIC
from kraftsman.controller.quorum.java_hash_order import java_order

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LOG_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_THROTTLES = (LEADER_RATE, FOLLOWER_RATE, LOG_DIRS_RATE)
TOPIC_THROTTLES = (LEADER_REPLICAS, FOLLOWER_REPLICAS)


@dataclass
class PartitionMove:
    """Where a partition's data comes from and goes to."""

    sources: set[int]
    destinations: set[int]


def current_moves(reassignments: dict) -> dict[str, dict[int, PartitionMove]]:
    """Return the moves of the ongoing reassignments ({(topic, partition): PartitionReassignment})."""
    moves: dict[str, dict[int, PartitionMove]] = {}
    for (topic, index), r in reassignments.items():
        adding = set(r.adding_replicas)
        moves.setdefault(topic, {})[index] = PartitionMove(set(r.replicas) - adding, adding)
    return moves


def proposed_moves(reassignments: dict, targets: dict, current: dict) -> dict[str, dict[int, PartitionMove]]:
    """Return the ongoing moves plus the plan's ({(topic, partition): target replicas}), whose sources are the
    ongoing move's, else the partition's `current` replicas."""
    moves = current_moves(reassignments)
    for (topic, index), replicas in targets.items():
        moving = moves.setdefault(topic, {})
        sources = set(moving[index].sources) if index in moving else set(current[(topic, index)])
        moving[index] = PartitionMove(sources, set(replicas) - sources)
    return moves


def _sorted_strings(items) -> str:
    return ",".join(sorted(set(items), key=java_order))


def leader_throttles(moves: dict) -> dict[str, str]:
    """Return each moving topic's leader.replication.throttled.replicas."""
    return {topic: _sorted_strings(f"{i}:{s}" for i, m in parts.items() for s in m.sources)
            for topic, parts in moves.items()}


def follower_throttles(moves: dict) -> dict[str, str]:
    """Return each moving topic's follower.replication.throttled.replicas."""
    return {topic: _sorted_strings(f"{i}:{d}" for i, m in parts.items() for d in m.destinations if d not in m.sources)
            for topic, parts in moves.items()}


def reassigning_brokers(moves: dict) -> list[int]:
    """Return every source and destination broker of `moves`, sorted."""
    return sorted({b for parts in moves.values() for m in parts.values() for b in m.sources | m.destinations})


def topic_throttle_changes(moves: dict) -> dict:
    """Return the changes that set each moving topic's throttled replica lists."""
    leaders, followers = leader_throttles(moves), follower_throttles(moves)
    return {(TOPIC, topic): [(LEADER_REPLICAS, leaders[topic], SET), (FOLLOWER_REPLICAS, followers[topic], SET)]
            for topic in moves}


def broker_rate_changes(brokers, rate: int) -> dict:
    """Return the changes that set --throttle's rate on `brokers`."""
    return {(BROKER, str(b)): [(LEADER_RATE, str(rate), SET), (FOLLOWER_RATE, str(rate), SET)] for b in brokers}


def log_dir_rate_changes(brokers, rate: int) -> dict:
    """Return the changes that set --replica-alter-log-dirs-throttle's rate on `brokers`."""
    return {(BROKER, str(b)): [(LOG_DIRS_RATE, str(rate), SET)] for b in brokers}


def clear_broker_changes(brokers) -> dict:
    """Return the changes that delete the throttle rates of `brokers`."""
    return {(BROKER, str(b)): [(key, None, DELETE) for key in BROKER_THROTTLES] for b in brokers}


def clear_topic_changes(topics) -> dict:
    """Return the changes that delete the throttled replica lists of `topics`."""
    return {(TOPIC, t): [(key, None, DELETE) for key in TOPIC_THROTTLES] for t in topics}
