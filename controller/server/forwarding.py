"""forwarding: a standby controller relays a client's write to the active controller (one hop).

Rules:
- One connection per active controller, opened on first use (TLS/SASL as client_security reads from the
  config) and dropped when a request on it fails.
- One hop only: a request that was itself forwarded (its client id starts with FORWARDED) is answered
  NOT_CONTROLLER, as is any write when the leader is unknown or unreachable; clients retry on that code
  as Kafka's do, so nothing waits for a leader that is gone.
"""
from __future__ import annotations

import asyncio
import logging

from kraftsman.controller.quorum import error_responses as errors
from kraftsman.storage.protocol.errors import Errors

log = logging.getLogger("kraftsman.server")
FORWARDED = "kraftsman-forwarded-by-"


class WriteForwarder:
    """Relay writes from this standby to the active controller."""

    def __init__(self, node_id: int, security, timeout_ms: int):
        self.node_id, self.security, self.timeout_ms = node_id, security, timeout_ms
        self._conns: dict[int, object] = {}

    async def forward(self, leader: int | None, address: tuple[str, int] | None, name: str, version: int, body,
                      client_id: str | None):
        """Send the write to `leader` at `address` and return its answer, or NOT_CONTROLLER."""
        from kraftsman.controller.wire import secure_connect

        if leader is None or address is None or (client_id or "").startswith(FORWARDED):
            return errors.error_response(name, body, Errors.NOT_CONTROLLER)
        try:
            conn = self._conns.get(leader)
            if conn is None or getattr(conn, "closed", False):
                conn = await secure_connect.open_connection(*address, self.security,
                                                            client_id=f"{FORWARDED}{self.node_id}",
                                                            timeout_ms=self.timeout_ms)
                self._conns[leader] = conn
            return await conn.request(name, version, body, timeout_ms=self.timeout_ms * 5)
        except Exception as e:  # the leader went away: the client retries like on NOT_CONTROLLER
            log.info("node %d: forwarding %s to %d failed: %s", self.node_id, name, leader, e)
            self._conns.pop(leader, None)
            return errors.error_response(name, body, Errors.NOT_CONTROLLER)

    async def close(self) -> None:
        """Close every connection."""
        conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            result = conn.close()
            if asyncio.iscoroutine(result):
                await result
