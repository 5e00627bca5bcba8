"""A simulated Kafka 4.x broker's rules (broker_4x): version negotiation, registered features, the loader's check."""
from __future__ import annotations

import pytest

from kraftsman.controller.client import broker_4x
from kraftsman.controller.server.api_versions import controller_api_versions
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record


def _feature_batch(level: int) -> bytes:
    record = ApiMessageAndVersion(codec.message_class("FeatureLevelRecord")(name="metadata.version",
                                                                            feature_level=level), 0)
    return build_batch([(None, write_metadata_record(record))], 0)


def test_a_4_2_broker_speaks_the_highest_common_versions():
    assert broker_4x.negotiate("4.2", controller_api_versions(release="4.2"))["Fetch"] == 18
    assert broker_4x.negotiate("4.2", controller_api_versions(release="3.9"))["Fetch"] == 17   # a 3.9 controller
    assert broker_4x.negotiate("4.0", controller_api_versions(release="4.2"))["Fetch"] == 17   # 4.0 stops at 17


def test_a_controller_without_what_a_4x_broker_needs_is_refused():
    body = controller_api_versions(release="4.2")
    body.api_keys = [k for k in body.api_keys if k.api_key != 63]          # no BrokerHeartbeat
    with pytest.raises(broker_4x.UnsupportedController, match="BrokerHeartbeat not at all"):
        broker_4x.negotiate("4.2", body)


def test_registered_features_are_the_releases_in_kafkas_order():
    """The order a real 4.2 broker's RegisterBrokerRecord lists them (transcripts-4.2.0.md)."""
    assert broker_4x.registration_features("4.2") == [
        ("group.version", 0, 1), ("kraft.version", 0, 1), ("metadata.version", 7, 29), ("share.version", 0, 1),
        ("streams.version", 0, 1), ("transaction.version", 0, 2), ("eligible.leader.replicas.version", 0, 1)]
    assert ("metadata.version", 7, 25) in broker_4x.registration_features("4.0")
    assert all(name not in ("share.version", "streams.version") for name, *_ in broker_4x.registration_features("4.0"))


def test_the_loader_refuses_a_metadata_version_its_release_cannot_load():
    watch = broker_4x.MetadataWatch("4.2")
    watch.replay_batches(_feature_batch(21))
    assert watch.metadata_version == 21
    with pytest.raises(broker_4x.FatalMetadata) as e:
        watch.replay_batches(_feature_batch(6))
    assert str(e.value) == (
        "Unsupported metadata version - if you are currently upgrading your cluster, please ensure the metadata "
        "version is set to 3.3-IV3 (or higher) before updating the software version. The metadata version can be "
        "updated via the `kafka-features` command-line tool. Caused by: No MetadataVersion with feature level 6. "
        "Valid feature levels are from 7 to 30.")
    with pytest.raises(broker_4x.FatalMetadata, match="Valid feature levels are from 7 to 29"):
        broker_4x.MetadataWatch("4.1").replay_batches(_feature_batch(30))     # 4.3-IV0 is past 4.1
