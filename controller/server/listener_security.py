"""Per-listener security: what a Listener needs to serve SSL, SASL_PLAINTEXT and SASL_SSL connections.

Rules:
- `for_listener` reads Kafka's settings for one listener: the protocol from the config's security map, TLS
  from `ssl.*` (tls.server_context), SASL from `sasl.enabled.mechanisms` and `<mechanism>.sasl.jaas.config`,
  each first as `listener.name.<listener, lower case>.<key>`. PLAINTEXT listeners get None.
- A failed authentication is answered after `connection.failed.authentication.delay.ms` (default 100), as
  Kafka delays it to slow down password guessing; then the connection closes.
- Supported mechanisms are PLAIN and SCRAM-SHA-256/512; any other enabled mechanism (Kafka's default is
  GSSAPI) and PLAIN without `user_<name>` entries are ConfigErrors naming the listener.
- Without SASL the principal is the TLS one (tls.principal) or User:ANONYMOUS; with SASL it is the
  authenticated user. SaslHandshake and SaslAuthenticate are in every listener's ApiVersions (api_versions.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import sasl_server, tls
from .config import ConfigError, ControllerConfig


@dataclass
class ListenerSecurity:
    """Hold one listener's security protocol, TLS context and SASL settings."""

    protocol: str
    ssl_context: object = None
    mechanisms: tuple[str, ...] = ()
    plain_users: dict = field(default_factory=dict)
    scram_lookup: object = None
    max_receive_size: int = 524_288      # sasl.server.max.receive.size: largest frame before authentication
    failure_delay_ms: int = 100          # connection.failed.authentication.delay.ms: wait before the failure answer

    @property
    def uses_sasl(self) -> bool:
        """Tell whether connections must authenticate with SASL first."""
        return self.protocol.startswith("SASL_")

    def session(self) -> sasl_server.SaslSession | None:
        """Return a fresh SASL session for a new connection (None when the listener has no SASL)."""
        if not self.uses_sasl:
            return None
        return sasl_server.SaslSession(self.mechanisms, self.plain_users, self.scram_lookup or (lambda m, u: None))

    def principal(self, writer) -> str:
        """Return the principal of a new connection before any SASL exchange."""
        return tls.principal(writer.get_extra_info("ssl_object")) if self.ssl_context is not None else tls.ANONYMOUS


def for_listener(config: ControllerConfig, name: str, scram_lookup=None) -> ListenerSecurity | None:
    """Build the security of listener `name` (None for PLAINTEXT); raise ConfigError on bad settings."""
    protocol = config.security_protocol(name)
    if protocol == "PLAINTEXT":
        return None
    props = config.props
    security = ListenerSecurity(protocol, scram_lookup=scram_lookup)
    if protocol.endswith("SSL"):
        try:
            security.ssl_context = tls.server_context(props, name, protocol)
        except tls.TlsConfigError as e:
            raise ConfigError(str(e)) from None
    if security.uses_sasl:
        _sasl_settings(security, props, name)
    return security


def _sasl_settings(security: ListenerSecurity, props: dict, name: str) -> None:
    text = tls.setting(props, name, "sasl.enabled.mechanisms", "GSSAPI") or ""
    mechanisms = tuple(m.strip().upper() for m in text.split(",") if m.strip())
    unsupported = [m for m in mechanisms if m not in sasl_server.MECHANISMS]
    if not mechanisms or unsupported:
        raise ConfigError(f"SASL mechanism(s) {', '.join(unsupported) or '(none)'} of listener {name} are not "
                          f"supported by kraftsman: set sasl.enabled.mechanisms to some of "
                          f"{', '.join(sasl_server.MECHANISMS)}")
    security.mechanisms = mechanisms
    size = tls.setting(props, name, "sasl.server.max.receive.size", "524288")
    if not size.isdigit():
        raise ConfigError(f"Invalid value {size} for configuration sasl.server.max.receive.size: Not a number of "
                          "type INT")
    security.max_receive_size = int(size)
    delay = (props.get("connection.failed.authentication.delay.ms") or "100").strip()
    if not delay.isdigit():
        raise ConfigError(f"Invalid value {delay} for configuration connection.failed.authentication.delay.ms: "
                          "Not a number of type INT")
    security.failure_delay_ms = int(delay)
    if "PLAIN" in mechanisms:
        jaas = props.get(f"listener.name.{name.lower()}.plain.sasl.jaas.config") or props.get("sasl.jaas.config")
        security.plain_users = sasl_server.plain_users(jaas)
        if not security.plain_users:
            raise ConfigError(f"SASL/PLAIN on listener {name} needs users: set listener.name.{name.lower()}."
                              f"plain.sasl.jaas.config with user_<name>=\"<password>\" options")


def check(config: ControllerConfig) -> None:
    """Build every listener's security and the peers' client security once (loading the key files), so that bad
    settings are one ConfigError when the server starts, before any socket opens; all-PLAINTEXT has none."""
    if set(config.security_protocols.values()) == {"PLAINTEXT"}:
        return
    from .client_security import for_peers

    for ep in config.listeners:
        for_listener(config, ep.name)
    for_peers(config)


def scram_lookup_from(image_of):
    """Return a SCRAM credential lookup (mechanism name, user) -> UserScramCredentialRecord | None over
    `image_of()` (the current committed metadata image)."""
    from kraftsman.storage.scram import MECHANISMS

    def lookup(mechanism: str, user: str):
        entry = image_of().scram.entries.get((MECHANISMS[mechanism].type, user))
        return entry[0] if entry is not None else None
    return lookup
