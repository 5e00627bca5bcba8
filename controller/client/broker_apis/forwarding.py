"""How the simulated broker hands a client's request to the active controller: Kafka 3.9's ForwardingManager.

Rules:
- The client's request goes as it came (header and body bytes) inside an Envelope v0, with the client's
  principal serialized as Kafka's DefaultKafkaPrincipalBuilder does (DefaultPrincipalData v0) and its IP
  address; the broker's own client id on that channel is its node id ("4"), as a Kafka broker's.
- The channel finds the active controller and sends again on NOT_CONTROLLER in the envelope or a broken
  connection, until `retry_timeout_ms` (60 s, the broker's forwarding channel): then the client gets its
  request's error response with REQUEST_TIMED_OUT (Kafka's TimeoutException).
- An envelope error UNSUPPORTED_VERSION closes the client's connection (None); any other envelope error, or an
  inner answer that does not parse, answers UNKNOWN_SERVER_ERROR; else the inner answer goes back as it is.
- controller_api_versions() asks the active controller's ApiVersions (what the broker intersects with its own).
"""
from __future__ import annotations

import logging

from kraftsman.controller.quorum.error_responses import error_response
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.protocol.primitives import uvarint_bytes

from ..controller_client import ActiveControllerClient, ControllerUnavailable

log = logging.getLogger("kraftsman.broker_sim")
FORWARDING_RETRY_TIMEOUT_MS = 60_000


def serialize_principal(principal: str, token_authenticated: bool = False) -> bytes:
    """Return Kafka's DefaultPrincipalData v0 bytes of "Type:name" (int16 version, compact strings, bool, tags)."""
    kind, _, name = principal.partition(":")
    out = bytearray(b"\x00\x00")
    for text in (kind, name):
        data = text.encode("utf-8")
        out += uvarint_bytes(len(data) + 1) + data
    out += b"\x01" if token_authenticated else b"\x00"
    return bytes(out + b"\x00")


def _address_bytes(peer) -> bytes:
    import ipaddress

    try:
        return ipaddress.ip_address(peer[0]).packed
    except (ValueError, IndexError, TypeError):
        return bytes(4)


class ControllerChannel:
    """Forward requests to the active controller among `controllers` [(host, port), ...]."""

    def __init__(self, controllers, broker_id: int, *, retry_timeout_ms: int = FORWARDING_RETRY_TIMEOUT_MS):
        self.client = ActiveControllerClient(controllers, client_id=str(broker_id), timeout_ms=retry_timeout_ms)
        self.forwarded = 0

    async def forward(self, request, body):
        """Send `request` (a listener.BrokerRequest whose decoded body is `body`) to the active controller and
        return its answer (None: close the client's connection)."""
        envelope = codec.message_class("EnvelopeRequest")(
            request_data=request.frame, request_principal=serialize_principal(request.principal),
            client_host_address=_address_bytes(request.peer))
        try:
            response = await self.client.request("Envelope", 0, envelope)
        except (ControllerUnavailable, OSError, EOFError) as e:
            log.info("forwarding %s timed out: %s", request.api_name, e)
            return error_response(request.api_name, body, Errors.REQUEST_TIMED_OUT)
        self.forwarded += 1
        if response.error_code == Errors.UNSUPPORTED_VERSION:
            return None
        if response.error_code or response.response_data is None:
            return error_response(request.api_name, body, Errors.UNKNOWN_SERVER_ERROR)
        try:
            return framing.decode_response(request.api_key, request.api_version, bytes(response.response_data))[1]
        except framing.FramingError:
            return error_response(request.api_name, body, Errors.UNKNOWN_SERVER_ERROR)

    async def send(self, api_name: str, version: int, body):
        """Send a request of the broker's own (AlterPartition) to the active controller; return the answer."""
        return await self.client.request(api_name, version, body)

    async def controller_api_versions(self) -> dict[int, tuple[int, int]]:
        """Return the active controller's API table (api key -> (min, max))."""
        from kraftsman.controller.wire.connection import SOFTWARE_NAME, SOFTWARE_VERSION

        body = codec.message_class("ApiVersionsRequest")(client_software_name=SOFTWARE_NAME,
                                                         client_software_version=SOFTWARE_VERSION)
        response = await self.client.request("ApiVersions", 3, body)
        return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}

    async def close(self) -> None:
        """Close the connections."""
        await self.client.close()
