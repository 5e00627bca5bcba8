"""Builders for the cluster-control tests: registration requests, heartbeats, images with partitions, replay."""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.image import EMPTY
from kraftsman.controller.quorum.context import ControllerContext, ControllerNode, QuorumConfig
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO.parent / "shared" / "fixtures" / "kafka-wire-3.9"
CLUSTER_ID = "Xq3mZ8tnT3ahbQ6c2Rj1Vw"
TOPIC_ID = Uuid.from_longs(0x7777, 0x8888)


def M(spec: str, /, **fields):
    """Build a message of spec `spec`."""
    return codec.message_class(spec)(**fields)


def S(spec: str, struct: str, /, **fields):
    """Build a nested struct of spec `spec`."""
    return getattr(codec.message_class(spec), struct)(**fields)


def incarnation(n: int) -> Uuid:
    """Return a recognisable incarnation id."""
    return Uuid.from_longs(0xABC0 + n, 0xDEF0 + n)


def log_dir(n: int) -> Uuid:
    """Return a recognisable, unreserved log directory id."""
    return Uuid.from_longs(0x1000 + n, 0x2000 + n)


def feature(level: int, name: str = "metadata.version") -> ApiMessageAndVersion:
    """Return a FeatureLevelRecord."""
    return ApiMessageAndVersion(M("FeatureLevelRecord", name=name, feature_level=level), 0)


def broker_record(broker_id: int, epoch: int, fenced: bool = False, inc: int | None = None,
                  shutdown: bool = False) -> ApiMessageAndVersion:
    """Return a RegisterBrokerRecord v3 with one PLAINTEXT endpoint and one log dir."""
    endpoint = S("RegisterBrokerRecord", "BrokerEndpoint", name="PLAINTEXT", host=f"b{broker_id}", port=9092,
                 security_protocol=0)
    message = M("RegisterBrokerRecord", broker_id=broker_id, broker_epoch=epoch, fenced=fenced,
                incarnation_id=incarnation(broker_id if inc is None else inc), end_points=[endpoint],
                in_controlled_shutdown=shutdown, log_dirs=[log_dir(broker_id)], rack=None)
    return ApiMessageAndVersion(message, 3)


def partition(partition_id: int, replicas: list[int], leader: int, isr: list[int] | None = None):
    """Return a PartitionRecord of topic 't' (TOPIC_ID)."""
    message = M("PartitionRecord", partition_id=partition_id, topic_id=TOPIC_ID, replicas=replicas,
                isr=list(replicas if isr is None else isr), leader=leader, leader_epoch=0, partition_epoch=0,
                directories=[log_dir(r) for r in replicas])
    return ApiMessageAndVersion(message, 1)


def topic(*partitions) -> list:
    """Return the TopicRecord of 't' and its PartitionRecords."""
    return [ApiMessageAndVersion(M("TopicRecord", name="t", topic_id=TOPIC_ID), 0), *partitions]


def replay(image, records):
    """Return the image with `records` applied through MetadataDelta (raises on inconsistent records)."""
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    return delta.apply()


def image_of(*records, mv: int = 21):
    """Return an image with metadata.version `mv` and the records."""
    return replay(EMPTY, [feature(mv), *records])


def ctx(image, version: int = 0, now: int = 0, offset: int = 100, **config) -> ControllerContext:
    """Return a ControllerContext for handlers."""
    controllers = tuple(ControllerNode(n, "127.0.0.1", 29092 + n) for n in (1, 2, 3))
    return ControllerContext(image=image, now_ms=now, api_version=version, next_offset=offset, cluster_id=CLUSTER_ID,
                             node_id=3, leader_id=3, controllers=controllers, config=QuorumConfig(**config),
                             rng=random.Random(0))


def at(context: ControllerContext, **changes) -> ControllerContext:
    """Return a copy of a context with some fields changed."""
    return dataclasses.replace(context, **changes)


def registration_request(broker_id: int = 1, inc: int | None = None, mv_range=(1, 21), dirs=None, **fields):
    """Return a BrokerRegistrationRequest with one listener, kraft.version 0-1 and metadata.version `mv_range`."""
    features = [S("BrokerRegistrationRequest", "Feature", name="kraft.version", min_supported_version=0,
                  max_supported_version=1)]
    if mv_range is not None:
        features.append(S("BrokerRegistrationRequest", "Feature", name="metadata.version",
                          min_supported_version=mv_range[0], max_supported_version=mv_range[1]))
    listener = S("BrokerRegistrationRequest", "Listener", name="PLAINTEXT", host=f"b{broker_id}", port=9092,
                 security_protocol=0)
    values = dict(broker_id=broker_id, cluster_id=CLUSTER_ID, incarnation_id=incarnation(broker_id if inc is None
                                                                                          else inc),
                  listeners=[listener], features=features, rack=None,
                  log_dirs=[log_dir(broker_id)] if dirs is None else dirs)
    values.update(fields)
    return M("BrokerRegistrationRequest", **values)


def heartbeat(broker_id: int, epoch: int, offset: int, want_fence: bool = False, want_shut_down: bool = False):
    """Return a BrokerHeartbeatRequest."""
    return M("BrokerHeartbeatRequest", broker_id=broker_id, broker_epoch=epoch, current_metadata_offset=offset,
             want_fence=want_fence, want_shut_down=want_shut_down)


def names(records) -> list[str]:
    """Return the record type names of a list of records."""
    return [r.name for r in records]


def wire(file: str):
    """Decode one recorded Kafka 3.9 frame: (header, body); skip when ../shared is absent."""
    path = WIRE / file
    if not path.is_file():
        pytest.skip(f"Kafka wire fixture {path} not found (../shared is absent)")
    frame = framing.strip_size(path.read_bytes())
    if "_req_" in path.name:
        return framing.decode_request(frame)
    key = {"BrokerRegistration": 62, "BrokerHeartbeat": 63, "ControllerRegistration": 70, "DescribeCluster": 60,
           "AllocateProducerIds": 67, "api64": 64}
    api = next(k for name, k in key.items() if f"_{name}_" in path.name)
    version = int(path.name.split("_v")[1].split("_")[0])
    return framing.decode_response(api, version, frame)
