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
- A BrokerLayout (usable brokers grouped by rack and sorted) depends only on the image's brokers: a request
  computes it once and every topic's RackList copies it. Draws from ctx.rng are exactly Kafka's (shuffling
  a list of 0 or 1 element draws nothing, so it is skipped).
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
        """Pick a random start offset (the brokers come sorted from the BrokerLayout)."""
        if self.brokers:
            self.offset = rng.randrange(len(self.brokers))

    def next(self, epoch: int) -> int:
        """Return the next broker of this epoch's rotation, or -1 when the epoch used them all."""
        brokers = self.brokers
        n = len(brokers)
        if not n:
            return -1
        if self.epoch != epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % n
        index = self.index
        if index >= n:
            return -1
        self.index = index + 1
        return brokers[(index + self.offset) % n]


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


class BrokerLayout:
    """The usable brokers grouped by rack (first-seen order), each rack's fenced and unfenced ids sorted."""

    __slots__ = ("racks", "rack_names", "total", "unfenced")

    def __init__(self, brokers):
        self.racks: dict = {}
        self.total = self.unfenced = 0
        for broker_id, rack_name, fenced in brokers:
            lists = self.racks.get(rack_name)
            if lists is None:
                lists = self.racks[rack_name] = ([], [])
            lists[0 if fenced else 1].append(broker_id)
            self.total += 1
            self.unfenced += 0 if fenced else 1
        for fenced, unfenced in self.racks.values():
            fenced.sort()
            unfenced.sort()
        self.rack_names = sorted(self.racks, key=_rack_key)

    @classmethod
    def of(cls, image: MetadataImage) -> "BrokerLayout":
        """Return the layout of the image's usable brokers."""
        return cls(usable_brokers(image))


class RackList:
    """The usable brokers by rack, with the placement cursor (Kafka's RackList)."""

    def __init__(self, rng: random.Random, brokers, layout: BrokerLayout | None = None):
        self.rng = rng
        layout = BrokerLayout(brokers) if layout is None else layout
        self.racks: dict = {}
        self.total, self.unfenced = layout.total, layout.unfenced
        for rack_name, (fenced, unfenced) in layout.racks.items():
            rack = self.racks[rack_name] = _Rack()
            rack.fenced.brokers, rack.unfenced.brokers = list(fenced), list(unfenced)
            rack.fenced.initialize(rng)
            rack.unfenced.initialize(rng)
        self.rack_names = list(layout.rack_names)
        self.offset = rng.randrange(len(self.rack_names)) if self.rack_names else 0
        self.epoch = 0

    def shuffle(self) -> None:
        """Reshuffle racks and broker lists."""
        shuffle = self.rng.shuffle
        if len(self.rack_names) > 1:
            shuffle(self.rack_names)
        for rack in self.racks.values():
            if len(rack.fenced.brokers) > 1:
                shuffle(rack.fenced.brokers)
            if len(rack.unfenced.brokers) > 1:
                shuffle(rack.unfenced.brokers)

    def place(self, replication_factor: int) -> list[int]:
        """Return the replicas of the next partition."""
        _check(replication_factor, self.total, self.unfenced)
        return self._place(replication_factor)

    def place_many(self, count: int, replication_factor: int) -> list[list[int]]:
        """Return the replicas of the next `count` partitions."""
        _check(replication_factor, self.total, self.unfenced)
        place = self._place
        return [place(replication_factor) for _ in range(count)]

    def _place(self, replication_factor: int) -> list[int]:
        if self.epoch == self.unfenced and self.unfenced > 1:
            self.shuffle()
            self.epoch = 0
        names, racks, epoch = self.rack_names, self.racks, self.epoch
        count = len(names)
        if self.offset == count:
            self.offset = 0
        first_rack = offset = self.offset
        while (leader := racks[names[first_rack]].unfenced.next(epoch)) < 0:
            first_rack = (first_rack + 1) % count
        brokers, rack_index = [leader], offset
        while len(brokers) < replication_factor:
            broker = -1
            while broker < 0:
                if rack_index == first_rack:
                    first_rack = -1
                else:
                    broker = racks[names[rack_index]].next(epoch)
                rack_index = (rack_index + 1) % count
            brokers.append(broker)
        self.epoch = epoch + 1
        self.offset = offset + 1
        return brokers


def usable_brokers(image: MetadataImage) -> list[tuple[int, str | None, bool]]:
    """Return (id, rack, fenced) of every registered broker not in controlled shutdown, by id."""
    out = []
    for broker_id in sorted(image.cluster.brokers):
        record = image.cluster.brokers[broker_id].record
        if not record.in_controlled_shutdown:
            out.append((broker_id, record.rack, bool(record.fenced)))
    return out


def place(image: MetadataImage, rng: random.Random, num_partitions: int, replication_factor: int,
          layout: BrokerLayout | None = None) -> list[list[int]]:
    """Return the replica lists of `num_partitions` new partitions, or raise PlacementError (layout: the
    image's BrokerLayout when the caller already has it)."""
    racks = RackList(rng, (), BrokerLayout.of(image) if layout is None else layout)
    return racks.place_many(num_partitions, replication_factor)
