"""Replica placement: Kafka's StripedReplicaPlacer (rack-aware round robin with a random start).

Rules:
- Usable brokers are the registered brokers not in controlled shutdown; fenced ones may hold replicas
  (never the first), as in Kafka. Brokers group by rack (None is a rack of its own).
- Broker lists start sorted with a random offset, racks sorted (no rack first) with a random offset.
- Each partition takes its first replica from the first rack (from the cursor) with an unfenced broker,
  then one broker per rack from the cursor on, skipping the leader's rack once (unfenced before fenced),
  until the replication factor is reached; the cursor then moves one rack on.
- Every broker list rotates by one per partition ("epoch"); after as many partitions as there are
  unfenced brokers, racks and broker lists are reshuffled with ctx.rng, so assignments keep varying.
- Errors are PlacementError with Kafka's InvalidReplicationFactorException messages.
"""
from __future__ import annotations

import random

from kraftsman.controller.image.image import MetadataImage


class PlacementError(Exception):
    """The replication factor cannot be met (Kafka's InvalidReplicationFactorException)."""


class _BrokerList:
    __slots__ = ("brokers", "epoch", "index", "offset")

    def __init__(self):
        self.brokers: list[int] = []
        self.epoch = self.index = self.offset = 0

    def initialize(self, rng: random.Random) -> None:
        """Sort the brokers and pick a random start offset."""
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def next(self, epoch: int) -> int:
        """Return the next broker of this epoch's rotation, or -1 when the epoch used them all."""
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    __slots__ = ("fenced", "unfenced")

    def __init__(self):
        self.fenced, self.unfenced = _BrokerList(), _BrokerList()

    def next(self, epoch: int) -> int:
        """Return the next unfenced broker, else the next fenced one, else -1."""
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)


def _check(replication_factor: int, total: int, unfenced: int) -> None:
    if replication_factor <= 0:
        raise PlacementError(f"Invalid replication factor {replication_factor}: the replication factor must be "
                             "positive.")
    if unfenced == 0:
        raise PlacementError("All brokers are currently fenced.")
    if replication_factor > total:
        raise PlacementError(f"The target replication factor of {replication_factor} cannot be reached because "
                             f"only {total} broker(s) are registered.")


def _rack_key(name: str | None) -> tuple:
    return (name is not None, name or "")


class RackList:
    """The usable brokers by rack, with the placement cursor (Kafka's RackList)."""

    def __init__(self, rng: random.Random, brokers):
        self.rng = rng
        self.racks: dict = {}
        self.total = self.unfenced = 0
        for broker_id, rack_name, fenced in brokers:
            rack = self.racks.setdefault(rack_name, _Rack())
            (rack.fenced if fenced else rack.unfenced).brokers.append(broker_id)
            self.total += 1
            self.unfenced += 0 if fenced else 1
        for rack in self.racks.values():
            rack.fenced.initialize(rng)
            rack.unfenced.initialize(rng)
        self.rack_names = sorted(self.racks, key=_rack_key)
        self.offset = rng.randrange(len(self.rack_names)) if self.rack_names else 0
        self.epoch = 0

    def shuffle(self) -> None:
        """Reshuffle racks and broker lists."""
        self.rng.shuffle(self.rack_names)
        for rack in self.racks.values():
            self.rng.shuffle(rack.fenced.brokers)
            self.rng.shuffle(rack.unfenced.brokers)

    def place(self, replication_factor: int) -> list[int]:
        """Return the replicas of the next partition."""
        _check(replication_factor, self.total, self.unfenced)
        if self.epoch == self.unfenced and self.unfenced > 1:
            self.shuffle()
            self.epoch = 0
        count = len(self.rack_names)
        if self.offset == count:
            self.offset = 0
        first_rack = self.offset
        while (leader := self.racks[self.rack_names[first_rack]].unfenced.next(self.epoch)) < 0:
            first_rack = (first_rack + 1) % count
        brokers, rack_index = [leader], self.offset
        while len(brokers) < replication_factor:
            broker = -1
            while broker < 0:
                if rack_index == first_rack:
                    first_rack = -1
                else:
                    broker = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % count
            brokers.append(broker)
        self.epoch += 1
        self.offset += 1
        return brokers


def usable_brokers(image: MetadataImage) -> list[tuple[int, str | None, bool]]:
    """Return (id, rack, fenced) of every registered broker not in controlled shutdown, by id."""
    out = []
    for broker_id in sorted(image.cluster.brokers):
        record = image.cluster.brokers[broker_id].record
        if not record.in_controlled_shutdown:
            out.append((broker_id, record.rack, bool(record.fenced)))
    return out


def place(image: MetadataImage, rng: random.Random, num_partitions: int, replication_factor: int) -> list[list[int]]:
    """Return the replica lists of `num_partitions` new partitions, or raise PlacementError."""
    racks = RackList(rng, usable_brokers(image))
    _check(replication_factor, racks.total, racks.unfenced)
    return [racks.place(replication_factor) for _ in range(num_partitions)]
