"""Shared builders for the replication handler tests: images with brokers, contexts, requests, replay."""
from __future__ import annotations

import random

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.image import EMPTY
from kraftsman.controller.quorum.context import ControllerContext, ControllerNode, QuorumConfig
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion


def M(spec: str, /, **fields):
    """Build a message of spec `spec`."""
    return codec.message_class(spec)(**fields)


def S(spec: str, struct: str, /, **fields):
    """Build a nested struct of spec `spec`."""
    return getattr(codec.message_class(spec), struct)(**fields)


def dir_id(broker_id: int) -> Uuid:
    """Return a fixed, recognisable log directory id for a broker."""
    return Uuid.from_longs(0x1000 + broker_id, 0x2000 + broker_id)


def broker(broker_id: int, fenced: bool = False, rack: str | None = None, shutdown: bool = False,
           epoch: int = 10, dirs: int = 1) -> ApiMessageAndVersion:
    """Return a RegisterBrokerRecord (v3: log dirs) for one broker."""
    message = M("RegisterBrokerRecord", broker_id=broker_id, broker_epoch=epoch + broker_id, rack=rack,
                fenced=fenced, in_controlled_shutdown=shutdown, log_dirs=[dir_id(broker_id)] * dirs)
    return ApiMessageAndVersion(message, 3)


def feature(level: int) -> ApiMessageAndVersion:
    """Return the metadata.version FeatureLevelRecord."""
    return ApiMessageAndVersion(M("FeatureLevelRecord", name="metadata.version", feature_level=level), 0)


def replay(image, records):
    """Return the image with `records` applied through MetadataDelta."""
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    return delta.apply()


def cluster(*brokers, mv: int = 21):
    """Return an image with metadata.version `mv` and the given RegisterBrokerRecords (ints = plain brokers)."""
    records = [feature(mv)] + [broker(b) if isinstance(b, int) else b for b in brokers]
    return replay(EMPTY, records)


def context(image, version: int = 0, seed: int = 0, **config) -> ControllerContext:
    """Return a ControllerContext over `image` with a seeded rng and QuorumConfig overrides."""
    controllers = tuple(ControllerNode(n, "127.0.0.1", 9092 + n) for n in (1, 2, 3))
    return ControllerContext(image=image, api_version=version, rng=random.Random(seed), cluster_id="cid",
                             node_id=1, leader_id=1, controllers=controllers, config=QuorumConfig(**config))


def create_request(*topics, validate_only: bool = False):
    """Return a CreateTopicsRequest of (name, partitions, replication factor[, configs dict]) tuples."""
    items = []
    for name, partitions, factor, *rest in topics:
        configs = [S("CreateTopicsRequest", "CreatableTopicConfig", name=k, value=v)
                   for k, v in (rest[0] if rest else {}).items()]
        items.append(S("CreateTopicsRequest", "CreatableTopic", name=name, num_partitions=partitions,
                       replication_factor=factor, configs=configs))
    return M("CreateTopicsRequest", topics=items, validate_only=validate_only)


def run(handler, image, request, version: int = 7, **kw):
    """Run a handler; return (result, image after replaying its records)."""
    result = handler(context(image, version, **kw), request)
    return result, replay(image, result.records)


def record_types(result) -> list[str]:
    """Return the record class names of a result, in order."""
    return [type(r.message).__name__.removeprefix("_S_") for r in result.records]
