"""Open authenticated asyncio Connections (TLS, SASL), as Kafka's clients do: a controller to its peers, a
simulated broker to the controllers.

Rules:
- `ClientSecurity` says how to reach a listener: its protocol, a client TLS context, a SASL mechanism and login.
  Who reads it from properties is the caller's business (server.client_security for the controller).
- `open_connection(host, port, security, ...)` connects (with TLS), negotiates ApiVersions, then runs
  SaslHandshake v1 + SaslAuthenticate with wire.sasl's pure mechanism clients; a refused mechanism, a
  failed exchange or a server signature that does not verify raises AuthenticationError (a ConnectionError,
  so callers treat it like an unreachable peer).
"""
from __future__ import annotations

import ssl
from dataclasses import dataclass

from kraftsman.storage.protocol import codec

from . import sasl
from .connection import Connection


class AuthenticationError(ConnectionError):
    """Signal that TLS or SASL authentication with the peer failed."""


@dataclass(frozen=True)
class ClientSecurity:
    """Describe how to reach a listener: protocol, client TLS context, SASL mechanism and login."""

    protocol: str
    ssl_context: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None


async def open_connection(host: str, port: int, security: ClientSecurity | None, *, client_id: str | None,
                          timeout_ms: int) -> Connection:
    """Connect, negotiate versions and authenticate; return a ready Connection."""
    if security is None or security.ssl_context is None:
        conn = await Connection.open(host, port, client_id=client_id, timeout_ms=timeout_ms)
    else:
        conn = await _open_tls(host, port, security.ssl_context, client_id, timeout_ms)
    try:
        await conn.negotiate(timeout_ms=timeout_ms)
        if security is not None and security.mechanism is not None:
            await _authenticate(conn, security, timeout_ms)
    except BaseException:
        await conn.close()
        raise
    return conn


async def _open_tls(host: str, port: int, context, client_id, timeout_ms: int) -> Connection:
    try:
        return await Connection.open(host, port, client_id=client_id, timeout_ms=timeout_ms, ssl=context)
    except ssl.SSLError as e:
        raise AuthenticationError(f"TLS handshake with {host}:{port} failed: {e.reason or e}") from None


async def _authenticate(conn: Connection, security: ClientSecurity, timeout_ms: int) -> None:
    where = f"{conn.host}:{conn.port}"
    body = codec.message_class("SaslHandshakeRequest")(mechanism=security.mechanism)
    handshake = await conn.request("SaslHandshake", 1, body, timeout_ms=timeout_ms)
    if handshake.error_code:
        raise AuthenticationError(f"{where} does not enable SASL mechanism {security.mechanism} (enabled: "
                                  f"{', '.join(handshake.mechanisms)})")
    client = sasl.client_for(security.mechanism, security.username, security.password)
    version, cls = conn.pick_version("SaslAuthenticate"), codec.message_class("SaslAuthenticateRequest")
    message = client.first()
    try:
        while message is not None:
            response = await conn.request("SaslAuthenticate", version, cls(auth_bytes=message), timeout_ms=timeout_ms)
            if response.error_code:
                raise AuthenticationError(f"SASL authentication to {where} failed: "
                                          f"{response.error_message or response.error_code}")
            message = client.respond(bytes(response.auth_bytes or b""))
    except sasl.SaslError as e:
        raise AuthenticationError(f"SASL authentication to {where} failed: {e}") from None
