"""Controller self-registration (KIP-919): when a controller registers, and what it sends."""
from __future__ import annotations

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.image import EMPTY
from kraftsman.controller.quorum.cluster_control import ClusterControl
from kraftsman.controller.quorum.context import ControllerContext, QuorumConfig
from kraftsman.controller.server.controller_registration import RETRY_BACKOFF_MS, SelfRegistration
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

INCARNATION = Uuid.from_longs(0x1234, 0x5678)


def image(*records, mv: int = 21):
    delta = MetadataDelta(EMPTY)
    for record in [ApiMessageAndVersion(codec.message_class("FeatureLevelRecord")(
            name="metadata.version", feature_level=mv), 0), *records]:
        delta.replay(record)
    return delta.apply()


def registration() -> SelfRegistration:
    return SelfRegistration(2, INCARNATION, [("CONTROLLER", "localhost", 9093, "PLAINTEXT"),
                                             ("SECURE", "localhost", 9094, "SASL_SSL")])


def registered(reg: SelfRegistration, mv: int = 21):
    """Return the image after the active controller handled `reg`'s request."""
    ctx = ControllerContext(image=image(mv=mv), config=QuorumConfig())
    result = ClusterControl(QuorumConfig()).controller_registration(ctx, reg.request())
    assert result.response.error_code == 0
    return image(*result.records, mv=mv)


def test_the_request_carries_listeners_features_and_the_incarnation():
    request = registration().request()
    assert (request.controller_id, bytes(request.incarnation_id), request.zk_migration_ready) == (
        2, bytes(INCARNATION), False)
    assert [(x.name, x.host, x.port, x.security_protocol) for x in request.listeners] == [
        ("CONTROLLER", "localhost", 9093, 0), ("SECURE", "localhost", 9094, 3)]
    assert [(f.name, f.min_supported_version, f.max_supported_version) for f in request.features] == [
        ("kraft.version", 0, 1), ("metadata.version", 1, 21)]


def test_due_from_3_7_iv0_until_the_image_holds_this_incarnation():
    reg = registration()
    assert not reg.due(image(mv=14), 0)  # controllers register from 3.7-IV0 (level 15)
    assert reg.due(image(mv=15), 0)
    done = registered(reg)
    reg.finished(0, 0)
    assert not reg.due(done, 10)
    restarted = SelfRegistration(2, Uuid.from_longs(9, 9), reg.listeners)
    assert restarted.due(done, 10)  # the image holds the previous incarnation


def test_one_request_at_a_time_and_a_backoff_after_a_failure():
    reg = registration()
    reg.request()
    assert not reg.due(image(), 0)
    reg.finished(41, 1000)  # NOT_CONTROLLER
    assert not reg.due(image(), 1000 + RETRY_BACKOFF_MS - 1)
    assert reg.due(image(), 1000 + RETRY_BACKOFF_MS)
    reg.request()
    reg.finished(None, 5000)  # no answer (connection lost)
    assert not reg.due(image(), 5000) and reg.due(image(), 5000 + RETRY_BACKOFF_MS)
