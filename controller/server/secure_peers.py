"""Raft traffic to peers over a TLS/SASL controller listener: a PeerRouter whose peers log in first.

Rules:
- SecurePeerRouter behaves exactly as PeerRouter (queues, backoff, drops while down) but opens each peer
  connection with wire.secure_connect.open_connection (TLS, ApiVersions, SaslHandshake v1 + SaslAuthenticate)
  using the controller's client security (sasl.mechanism.controller.protocol and the listener's JAAS login).
- A failed login counts as an unreachable peer (backoff, messages dropped: Raft retries on its timers) and
  is logged as a warning naming the peer, since it means a configuration mismatch, not a network blip.
- SCRAM cannot carry the first election (credentials live in the metadata log the quorum has not committed
  yet); PLAIN from the JAAS config can, as in Kafka, where controllers use PLAIN, GSSAPI or OAUTHBEARER.
"""
from __future__ import annotations

import asyncio
import logging

from kraftsman.controller.wire.connection import UnsupportedVersion
from kraftsman.controller.wire.secure_connect import AuthenticationError, ClientSecurity, open_connection

from .peers import PeerLink, PeerRouter

log = logging.getLogger("kraftsman.server")


class SecurePeerRouter(PeerRouter):
    """Route Raft requests as PeerRouter does, over connections that authenticate with `security`."""

    def __init__(self, node_id: int, endpoints: dict, on_response, *, security: ClientSecurity, **kw):
        super().__init__(node_id, endpoints, on_response, **kw)
        self.security = security

    def send(self, env) -> None:
        """Queue a Raft request for env.dst (creating its authenticating peer on first use)."""
        address = self.endpoints.get(env.dst)
        if env.dst not in self._peers and address is not None:
            self._peers[env.dst] = _SecurePeer(self, env.dst, tuple(address))
        super().send(env)


class _SecurePeer(PeerLink):
    """Serve one peer as PeerLink does, opening its connection with secure_connect."""

    async def _connection(self):
        if self.conn is not None and not self.conn.closed:
            return self.conn
        r = self.router
        try:
            conn = await open_connection(*self.address, r.security, client_id=r.client_id,
                                         timeout_ms=r.connect_timeout_ms)
        except AuthenticationError as e:
            log.warning("raft %d: cannot log in to node %d at %s:%d: %s", r.node_id, self.peer_id, *self.address, e)
            return self._down()
        except (OSError, ConnectionError, asyncio.TimeoutError, UnsupportedVersion) as e:
            log.debug("raft %d: node %d at %s:%d unreachable: %s", r.node_id, self.peer_id, *self.address, e)
            return self._down()
        self.conn, self.backoff_ms = conn, r.reconnect_backoff_ms
        return conn

    def _down(self) -> None:
        self.down_until = self.loop.time() + self.backoff_ms / 1000
        self.backoff_ms = min(self.backoff_ms * 2, self.router.reconnect_backoff_max_ms)
        return None
