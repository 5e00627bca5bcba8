"""Read the client side of a controller's own properties: how it logs in to its peers and to the active
controller, as Kafka's controller-side client does.

Rules:
- `controller_client_security(config)` reads the first listener of controller.listener.names: its protocol
  from listener.security.protocol.map, `sasl.mechanism.controller.protocol` (Kafka's default GSSAPI is
  refused: PLAIN and SCRAM only), the login (`username`/`password` options) from
  `listener.name.<l>.<mechanism>.sasl.jaas.config` or `sasl.jaas.config`, TLS trust and key from
  `ssl.truststore.*` / `ssl.keystore.location` (listener-prefixed first). PLAINTEXT gives None. Bad settings
  are ConfigErrors.
- The connections themselves are opened by wire.secure_connect.
"""
from __future__ import annotations

import re
import ssl

from kraftsman.controller.wire import sasl
from kraftsman.controller.wire.secure_connect import ClientSecurity

from . import tls
from .config import ConfigError, ControllerConfig

_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def controller_client_security(config: ControllerConfig) -> ClientSecurity | None:
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
    if mechanism not in sasl.MECHANISMS:
        raise ConfigError(f"sasl.mechanism.controller.protocol={mechanism} is not supported by kraftsman "
                          f"(supported: {', '.join(sasl.MECHANISMS)})")
    jaas = props.get(f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config") or \
        props.get("sasl.jaas.config", "")
    options = dict(_JAAS_OPTION.findall(jaas))
    if "username" not in options or "password" not in options:
        raise ConfigError(f"controllers authenticate to listener {listener} with {mechanism}: its JAAS config "
                          f"(listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config) needs "
                          "username=\"...\" and password=\"...\"")
    return ClientSecurity(protocol, context, mechanism, options["username"], options["password"])


def for_peers(config: ControllerConfig) -> ClientSecurity | None:
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
