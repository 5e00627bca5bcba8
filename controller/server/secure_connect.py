"""Open authenticated asyncio Connections (TLS, SASL) to another controller, as Kafka's controller-side client does.

Rules:
- `controller_client_security(config)` reads the client side from the server's own properties, as Kafka does
  for the first listener of controller.listener.names: its protocol from listener.security.protocol.map,
  `sasl.mechanism.controller.protocol` (Kafka's default GSSAPI is refused: PLAIN and SCRAM only), the login
  (`username`/`password` options) from `listener.name.<l>.<mechanism>.sasl.jaas.config` or `sasl.jaas.config`,
  TLS trust and key from `ssl.truststore.*` / `ssl.keystore.location` (listener-prefixed first). PLAINTEXT
  gives None. Bad settings are ConfigErrors.
- `open_connection(host, port, security, ...)` connects (with TLS), negotiates ApiVersions, then runs
  SaslHandshake v1 + SaslAuthenticate with sync_sasl's pure mechanism clients; a refused mechanism, a
  failed exchange or a server signature that does not verify raises AuthenticationError (a ConnectionError,
  so callers treat it like an unreachable peer).
"""
from __future__ import annotations

import asyncio
import re
import ssl
from dataclasses import dataclass

from kraftsman.storage.protocol import codec

from . import sync_sasl, tls
from .config_error import ConfigError  # ControllerConfig: annotations only (no import circle)
from .peers import Connection, RequestTimeout

_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


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


def controller_client_security(config: "ControllerConfig") -> ClientSecurity | None:
    """Return the client security for the first controller listener (None when it is PLAINTEXT)."""
    listener = config.controller_listener().name
    protocol = config.security_protocol(listener)
    if protocol == "PLAINTEXT":
        return None
    props = config.props
    context = _client_context(props, listener) if protocol.endswith("SSL") else None
    if not protocol.startswith("SASL_"):
        return ClientSecurity(protocol, context)
    mechanism = (props.get("sasl.mechanism.controller.protocol") or "GSSAPI").strip().upper()
    if mechanism not in sync_sasl.MECHANISMS:
        raise ConfigError(f"sasl.mechanism.controller.protocol={mechanism} is not supported by kraftsman "
                          f"(supported: {', '.join(sync_sasl.MECHANISMS)})")
    jaas = props.get(f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config") or \
        props.get("sasl.jaas.config", "")
    options = dict(_JAAS_OPTION.findall(jaas))
    if "username" not in options or "password" not in options:
        raise ConfigError(f"controllers authenticate to listener {listener} with {mechanism}: its JAAS config "
                          f"(listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config) needs "
                          "username=\"...\" and password=\"...\"")
    return ClientSecurity(protocol, context, mechanism, options["username"], options["password"])


def for_peers(config: "ControllerConfig") -> ClientSecurity | None:
    """Return the client security Raft and forwarding need: None when the first controller listener is
    PLAINTEXT or this controller has no other voter or bootstrap server to talk to."""
    others = set(config.static_voters) - {config.node_id}
    if config.security_protocol(config.controller_listener().name) == "PLAINTEXT":
        return None
    return controller_client_security(config) if others or config.bootstrap_servers else None


def _client_context(props: dict, listener: str) -> ssl.SSLContext:
    get = lambda key: tls.setting(props, listener, key)  # noqa: E731
    try:
        cadata = get("ssl.truststore.certificates")
        context = ssl.create_default_context(cafile=get("ssl.truststore.location") or None,
                                             cadata=tls.normalize_pem(cadata) if cadata else None)
        tls.set_protocols(context, tls.setting(props, listener, "ssl.enabled.protocols", "TLSv1.2,TLSv1.3"))
        algorithm = tls.setting(props, listener, "ssl.endpoint.identification.algorithm", "https") or ""
        context.check_hostname = algorithm.lower() == "https"
        location, chain, key = (get(k) for k in ("ssl.keystore.location", "ssl.keystore.certificate.chain",
                                                 "ssl.keystore.key"))
        if location or (chain and key):
            tls.load_keystore(context, location, chain, key, get("ssl.key.password"), listener)
    except (OSError, ssl.SSLError, tls.TlsConfigError) as e:
        raise ConfigError(f"cannot load the TLS client material for listener {listener}: "
                          f"{getattr(e, 'strerror', None) or e}") from None
    return context


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
        async with asyncio.timeout(timeout_ms / 1000):  # not wait_for (see peers.Connection.open)
            reader, writer = await asyncio.open_connection(host, port, ssl=context, server_hostname=host)
    except TimeoutError:
        raise RequestTimeout(f"connecting to {host}:{port} (TLS) timed out after {timeout_ms} ms") from None
    except ssl.SSLError as e:
        raise AuthenticationError(f"TLS handshake with {host}:{port} failed: {e.reason or e}") from None
    return Connection(reader, writer, host=host, port=port, client_id=client_id, timeout_ms=timeout_ms)


async def _authenticate(conn: Connection, security: ClientSecurity, timeout_ms: int) -> None:
    where = f"{conn.host}:{conn.port}"
    body = codec.message_class("SaslHandshakeRequest")(mechanism=security.mechanism)
    handshake = await conn.request("SaslHandshake", 1, body, timeout_ms=timeout_ms)
    if handshake.error_code:
        raise AuthenticationError(f"{where} does not enable SASL mechanism {security.mechanism} (enabled: "
                                  f"{', '.join(handshake.mechanisms)})")
    client = sync_sasl.client_for(security.mechanism, security.username, security.password)
    version, cls = conn.pick_version("SaslAuthenticate"), codec.message_class("SaslAuthenticateRequest")
    message = client.first()
    try:
        while message is not None:
            response = await conn.request("SaslAuthenticate", version, cls(auth_bytes=message), timeout_ms=timeout_ms)
            if response.error_code:
                raise AuthenticationError(f"SASL authentication to {where} failed: "
                                          f"{response.error_message or response.error_code}")
            message = client.respond(bytes(response.auth_bytes or b""))
    except sync_sasl.SaslError as e:
        raise AuthenticationError(f"SASL authentication to {where} failed: {e}") from None
