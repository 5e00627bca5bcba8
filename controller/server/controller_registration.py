"""Controller self-registration (KIP-919), as Kafka's ControllerRegistrationManager does it.

Rules:
- Every controller registers itself with the active controller once its committed image is at
  metadata.version 3.7-IV0 or later: a ControllerRegistration carrying an incarnation id drawn when the
  process starts, its controller listeners (advertised host, port, security protocol), ZkMigrationReady
  false and the features its release supports (quorum.feature_levels.supported_features), in a Java HashMap's
  order as Kafka lists them.
- It registers again whenever the committed image does not hold a registration of this incarnation (a
  restart; the active controller wrote no record yet): one request at a time, and after a failure (an
  error code, a lost connection) not again before RETRY_BACKOFF_MS.
- The request travels like any write: the active controller proposes it itself, a standby forwards it.
  Kafka's UpdateFeatures checks what registered controllers support (controller/quorum/features_control.py);
  the shell shows them under /image/cluster/controllers.
"""
from __future__ import annotations

import asyncio
import uuid

from kraftsman.controller.image.render import SECURITY_PROTOCOLS
from kraftsman.controller.quorum.feature_levels import CONTROLLER_REGISTRATION_LEVEL, SUPPORTED_FEATURES
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid

from .api_versions import java_feature_order

RETRY_BACKOFF_MS = 1000
_PROTOCOL_IDS = {name: code for code, name in SECURITY_PROTOCOLS.items()}


class SelfRegistration:
    """Decide when this controller must (re)register and build its ControllerRegistration request."""

    def __init__(self, node_id: int, incarnation_id, listeners: list[tuple[str, str, int, str]],
                 features: dict[str, tuple[int, int]] | None = None):
        self.node_id, self.incarnation_id, self.listeners = node_id, incarnation_id, listeners
        self.features = SUPPORTED_FEATURES if features is None else features
        self.in_flight = False
        self._retry_at_ms = 0

    def due(self, image, now_ms: int) -> bool:
        """Tell whether a registration should be sent now, judged from the committed image."""
        if self.in_flight or now_ms < self._retry_at_ms:
            return False
        if image.features.metadata_version_level < CONTROLLER_REGISTRATION_LEVEL:
            return False
        current = image.cluster.controllers.get(self.node_id)
        return current is None or bytes(current.record.incarnation_id) != bytes(self.incarnation_id)

    def request(self):
        """Return the ControllerRegistrationRequest (v0) of this controller."""
        cls = codec.message_class("ControllerRegistrationRequest")
        listeners = [cls.Listener(name=name, host=host, port=port, security_protocol=_PROTOCOL_IDS[protocol])
                     for name, host, port, protocol in self.listeners]
        features = [cls.Feature(name=name, min_supported_version=lo, max_supported_version=hi)
                    for name, (lo, hi) in java_feature_order(self.features, 0, first=True)]
        self.in_flight = True
        return cls(controller_id=self.node_id, incarnation_id=self.incarnation_id, zk_migration_ready=False,
                   listeners=listeners, features=features)

    def finished(self, error_code: int | None, now_ms: int) -> None:
        """Note the outcome of the request in flight (None: no answer); back off after a failure."""
        self.in_flight = False
        if error_code != 0:
            self._retry_at_ms = now_ms + RETRY_BACKOFF_MS

    def send_if_due(self, image, clock, write) -> None:
        """Send the registration through `write(api, version, body)` (an awaitable answer) when due;
        `clock()` is the controller's time in ms."""
        if not self.due(image, clock()):
            return
        answer = asyncio.ensure_future(write("ControllerRegistration", 0, self.request()))

        def finished(f: asyncio.Future) -> None:
            ok = not f.cancelled() and f.exception() is None and f.result() is not None
            self.finished(f.result().error_code if ok else None, clock())
        answer.add_done_callback(finished)


def for_listeners(node_id: int, host: str, listeners, names, protocol_of,
                  features: dict[str, tuple[int, int]] | None = None) -> SelfRegistration:
    """Return a process's SelfRegistration: a fresh incarnation, its bound listeners named in `names`
    (controller.listener.names), each with `protocol_of(name)`, and the features its release supports."""
    bound = [(x.name, host, x.port, protocol_of(x.name)) for x in listeners if x.name in names]
    return SelfRegistration(node_id, Uuid(uuid.uuid4().bytes), bound, features)


def registered_endpoints(image, listener: str) -> dict[int, tuple[str, int]]:
    """Return controller id -> (host, port) of the registered controllers' endpoints on `listener`."""
    return {cid: (e.host, e.port) for cid, reg in image.cluster.controllers.items()
            for e in reg.record.end_points if e.name == listener}
