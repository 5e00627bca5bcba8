"""A small BLOCKING Kafka protocol client (no asyncio) for command-line tools that must start fast.

Rules:
- One SyncConnection owns one socket: connect within the deadline, optional TLS (ssl module, PEM
  files), ApiVersions negotiation (KIP-511: on UNSUPPORTED_VERSION retry at the server's highest
  version), optional SASL (SaslHandshake v1 + SaslAuthenticate, see wire.sasl), then requests one at
  a time with increasing correlation ids, each checked against its response.
- Every operation takes an absolute `deadline` (time.monotonic()); nothing blocks past it.
- Failures are ClientError subclasses with one-line messages naming host:port: Unreachable (refused,
  unknown host, connect timeout), RequestTimeout (NoActiveController: only refusals until the deadline),
  NotKafka (the peer answered something that is not a Kafka frame, or closed the socket on our ApiVersions),
  UnsupportedVersion, AuthenticationFailed.
- With TRACE set (--verbose), every connection, request and response is traced as one line (no secrets).
- Frames follow storage.protocol.framing's header rules but are built from the one API's spec
  (api_by_name loads `<name>Request` only), not framing's registry of every spec: loading that
  registry costs more than the rest of a command's start-up. Only this package opens sockets.
"""
from __future__ import annotations

import functools
import itertools
import re
import socket
import struct
import time
from dataclasses import dataclass

from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

SOFTWARE_NAME, SOFTWARE_VERSION = "kraftsman", "0"
# A function taking one line, set by the command line's --verbose: each request and response is traced.
TRACE = None
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# The Admin client settings ClientConfig.from_properties honours (Kafka's names), each with what it does: the
# keys -X (--client-property) accepts, and `-X list` / `-X help` shows.
CLIENT_PROPERTIES = {
    "client.id": "the client id sent with every request (default kraftsman-admin)",
    "request.timeout.ms": "how long to wait for each answer, in ms (default 30000; --timeout bounds the whole run)",
    "security.protocol": "PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL",
    "ssl.truststore.location": "a PEM file of the CA certificates to trust",
    "ssl.truststore.certificates": "the CA certificates themselves, as PEM text",
    "ssl.truststore.type": "PEM: the only store type kraftsman reads",
    "ssl.keystore.location": "a PEM file of the client's certificate (and its key, unless ssl.key.location)",
    "ssl.keystore.type": "PEM: the only store type kraftsman reads",
    "ssl.keystore.password": "the password of the client's private key (as ssl.key.password)",
    "ssl.key.location": "a PEM file of the client's private key (default: ssl.keystore.location)",
    "ssl.key.password": "the password of the client's private key",
    "ssl.endpoint.identification.algorithm": "https (default): check the server's host name; empty: do not",
    "sasl.mechanism": "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (with a SASL_ security.protocol)",
    "sasl.jaas.config": 'a JAAS line holding username="..." and password="..."',
    "sasl.username": "the SASL user (instead of sasl.jaas.config)",
    "sasl.password": "the SASL password (instead of sasl.jaas.config)",
}
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


class ClientError(Exception):
    """A request could not be completed; the message is one line."""


class Unreachable(ClientError):
    """The address cannot be reached (unknown host, refused, connect timeout)."""


class RequestTimeout(ClientError):
    """The server did not answer within the deadline."""


class NoActiveController(RequestTimeout):
    """Every server that answered refused (NOT_CONTROLLER, NOT_LEADER_OR_FOLLOWER) until the deadline."""


class NotKafka(ClientError):
    """The peer does not speak the Kafka protocol (or broke the connection)."""


class UnsupportedVersion(ClientError):
    """The server and kraftsman share no version of an API."""


class AuthenticationFailed(ClientError):
    """TLS or SASL authentication failed."""


@dataclass
class ClientConfig:
    """Admin client properties this client honours (Kafka's names in from_properties)."""

    client_id: str = "kraftsman-admin"
    bootstrap_controllers: bool = False     # the addresses are controllers (bootstrap.controllers, KIP-919)
    request_timeout_ms: int = 30_000
    security_protocol: str = "PLAINTEXT"
    ssl_cafile: str | None = None
    ssl_cadata: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_key_password: str | None = None
    ssl_check_hostname: bool = True
    sasl_mechanism: str = "GSSAPI"
    sasl_username: str | None = None
    sasl_password: str | None = None

    @property
    def uses_ssl(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> "ClientConfig":
        """Build a config from Admin client properties; raise ValueError (one line) on bad values."""
        config = cls()
        config.client_id = props.get("client.id", config.client_id)
        config.request_timeout_ms = _int_property(props, "request.timeout.ms", config.request_timeout_ms)
        config.security_protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
        if config.security_protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"Invalid value {props['security.protocol']} for configuration security.protocol: "
                             f"String must be one of: {', '.join(SECURITY_PROTOCOLS)}")
        _ssl_properties(config, props)
        _sasl_properties(config, props)
        return config


def _int_property(props: dict, name: str, default: int) -> int:
    text = props.get(name)
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"Invalid value {text} for configuration {name}: Not a number of type INT") from None
    if value < 0:
        raise ValueError(f"Invalid value {value} for configuration {name}: Value must be at least 0")
    return value


def _ssl_properties(config: ClientConfig, props: dict) -> None:
    for name in ("ssl.truststore.type", "ssl.keystore.type"):
        if props.get(name, "PEM").upper() != "PEM":
            raise ValueError(f"{name}={props[name]} is not supported: kraftsman reads PEM files only")
    config.ssl_cafile = props.get("ssl.truststore.location")
    config.ssl_cadata = props.get("ssl.truststore.certificates")
    config.ssl_certfile = props.get("ssl.keystore.location")
    config.ssl_keyfile = props.get("ssl.key.location", config.ssl_certfile)
    config.ssl_key_password = props.get("ssl.key.password") or props.get("ssl.keystore.password")
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https")
    config.ssl_check_hostname = algorithm.strip().lower() == "https"


def _sasl_properties(config: ClientConfig, props: dict) -> None:
    config.sasl_mechanism = props.get("sasl.mechanism", config.sasl_mechanism).strip().upper()
    options = dict(_JAAS_OPTION.findall(props.get("sasl.jaas.config", "")))
    config.sasl_username = props.get("sasl.username", options.get("username"))
    config.sasl_password = props.get("sasl.password", options.get("password"))
    if config.uses_sasl:
        from kraftsman.controller.wire.sasl import MECHANISMS

        if config.sasl_mechanism not in MECHANISMS:
            raise ValueError(f"sasl.mechanism {config.sasl_mechanism} is not supported (supported: "
                             f"{', '.join(MECHANISMS)})")
        if config.sasl_username is None or config.sasl_password is None:
            raise ValueError("SASL needs a username and password: set sasl.jaas.config "
                             "(username=\"...\" password=\"...\") or sasl.username and sasl.password")


def parse_address(text: str) -> tuple[str, int]:
    """Parse `host:port` (IPv6 as `[::1]:9092`); raise ValueError with Kafka's message."""
    match = re.fullmatch(r"\[?([^\[\]/@]*?)\]?:(\d+)", text.strip())
    if not match or not match.group(1) or not 0 < int(match.group(2)) < 65536:
        raise ValueError(f"Invalid url in bootstrap.servers: {text.strip()}")
    return match.group(1), int(match.group(2))


def parse_addresses(text: str) -> list[tuple[str, int]]:
    """Parse a comma-separated bootstrap list."""
    parts = [p for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError("No resolvable bootstrap urls given in bootstrap.servers")
    return [parse_address(p) for p in parts]


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("deadline passed")
    return left


class SyncConnection:
    """One blocking connection to a Kafka-protocol server."""

    def __init__(self, sock, host: str, port: int, config: ClientConfig):
        self.sock, self.host, self.port, self.config = sock, host, port, config
        self.api_versions: dict[int, tuple[int, int]] | None = None
        self._cids = itertools.count(1)

    @property
    def name(self) -> str:
        return f"{self.host}:{self.port}"

    @classmethod
    def open(cls, host: str, port: int, config: ClientConfig, deadline: float) -> "SyncConnection":
        """Connect (TLS if configured), negotiate versions and authenticate (SASL if configured)."""
        sock = _connect(host, port, deadline)
        if TRACE is not None:
            TRACE(f"connected to {host}:{port} ({config.security_protocol})")
        try:
            if config.uses_ssl:
                sock = _wrap_tls(sock, host, config, deadline)
            conn = cls(sock, host, port, config)
            conn.negotiate(deadline)
            if config.uses_sasl:
                from kraftsman.controller.wire.sasl import client_for

                conn.authenticate(client_for(config.sasl_mechanism, config.sasl_username, config.sasl_password),
                                  deadline)
        except BaseException:
            sock.close()
            raise
        return conn

    def close(self) -> None:
        """Close the socket."""
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ requests
    def request(self, api_name: str, version: int, body, deadline: float):
        """Send one request and return its decoded response body."""
        return self.receive(self.send(api_name, version, body, deadline), deadline)

    def send(self, api_name: str, version: int, body, deadline: float) -> tuple:
        """Send one request without waiting; return what receive() reads its answer with (a server answers a
        connection's requests in the order they came, so several may be in flight)."""
        info = api_by_name(api_name)
        cid = next(self._cids) & 0x7FFFFFFF
        frame = encode_request(info, version, cid, self.config.client_id, body)
        try:
            self.sock.settimeout(_remaining(deadline))
            self.sock.sendall(frame)
        except socket.timeout:
            raise RequestTimeout(f"{api_name} v{version} to {self.name} got no response in time") from None
        except OSError as e:
            raise NotKafka(f"the connection to {self.name} broke during {api_name}: {_reason(e)}") from None
        return info, api_name, version, cid, len(frame), time.monotonic()

    def receive(self, sent: tuple, deadline: float):
        """Read and decode the answer to a request send() sent."""
        info, api_name, version, cid, size, started = sent
        try:
            response = self._read_frame(deadline)
            if TRACE is not None:
                TRACE(f"{api_name} v{version} to {self.name} (correlation id {cid}, {size} bytes): "
                      f"{len(response) + 4} bytes back in {(time.monotonic() - started) * 1000:.1f} ms")
        except socket.timeout:
            raise RequestTimeout(f"{api_name} v{version} to {self.name} got no response in time") from None
        except OSError as e:
            raise NotKafka(f"the connection to {self.name} broke during {api_name}: {_reason(e)}") from None
        try:
            header, decoded = decode_response(info, version, response)
        except codec.CodecError as e:
            raise NotKafka(f"{self.name} sent an undecodable {api_name} response: {e}") from None
        if header.correlation_id != cid:
            raise NotKafka(f"{self.name} answered correlation id {header.correlation_id}, expected {cid}")
        return decoded

    def _read_frame(self, deadline: float) -> bytes:
        size_bytes = self._read_exactly(4, deadline)
        size = struct.unpack(">i", size_bytes)[0]
        if size < 0 or size > framing.MAX_FRAME_SIZE:
            raise NotKafka(f"{self.name} does not speak the Kafka protocol (it sent {size_bytes!r}...)")
        return self._read_exactly(size, deadline)

    def _read_exactly(self, count: int, deadline: float) -> bytes:
        chunks, got = [], 0
        while got < count:
            self.sock.settimeout(_remaining(deadline))
            chunk = self.sock.recv(min(count - got, 1 << 20))
            if not chunk:
                raise NotKafka(f"{self.name} closed the connection (is it a Kafka listener with this "
                               f"security.protocol?)")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    # ------------------------------------------------------------ versions
    def negotiate(self, deadline: float) -> dict[int, tuple[int, int]]:
        """Ask the server's API version ranges (KIP-511 fallback); remember and return them."""
        ours = api_by_name("ApiVersions").valid_versions.hi
        body = codec.message_class("ApiVersionsRequest")(client_software_name=SOFTWARE_NAME,
                                                         client_software_version=SOFTWARE_VERSION)
        response = self.request("ApiVersions", ours, body, deadline)
        if response.error_code == Errors.UNSUPPORTED_VERSION:
            theirs = {k.api_key: k.max_version for k in response.api_keys}.get(framing.API_VERSIONS_KEY, 0)
            response = self.request("ApiVersions", min(ours, theirs), body, deadline)
        if response.error_code:
            raise NotKafka(f"ApiVersions to {self.name} failed with error {response.error_code}")
        self.api_versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        return self.api_versions

    def supports(self, api_name: str, version: int) -> bool:
        """Tell whether the server serves `version` of `api_name` (after negotiate)."""
        info = api_by_name(api_name)
        lo, hi = (self.api_versions or {}).get(info.api_key, (0, -1))
        return lo <= version <= hi and version in info.valid_versions

    def pick_version(self, api_name: str, wanted_max: int | None = None) -> int:
        """Return the highest version of `api_name` both sides speak, at most `wanted_max`."""
        info = api_by_name(api_name)
        hi = info.valid_versions.hi if wanted_max is None else min(wanted_max, info.valid_versions.hi)
        lo = info.valid_versions.lo
        their_lo, their_hi = (self.api_versions or {}).get(info.api_key, (0, -1))
        lo, hi = max(lo, their_lo), min(hi, their_hi)
        if hi < lo:
            raise UnsupportedVersion(f"{self.name} does not support the {info.name} API")
        return hi

    # ------------------------------------------------------------ SASL
    def authenticate(self, mechanism_client, deadline: float) -> None:
        """Run SaslHandshake v1 and SaslAuthenticate rounds with a wire.sasl mechanism client."""
        from kraftsman.controller.wire.sasl import SaslError

        name = "PLAIN" if type(mechanism_client).__name__ == "PlainClient" else self.config.sasl_mechanism
        handshake = self.request("SaslHandshake", 1, codec.message_class("SaslHandshakeRequest")(mechanism=name),
                                 deadline)
        if handshake.error_code:
            raise AuthenticationFailed(f"{self.name} does not enable SASL mechanism {name} (enabled: "
                                       f"{', '.join(handshake.mechanisms)})")
        version, cls = self.pick_version("SaslAuthenticate"), codec.message_class("SaslAuthenticateRequest")
        message = mechanism_client.first()
        try:
            while message is not None:
                response = self.request("SaslAuthenticate", version, cls(auth_bytes=message), deadline)
                if response.error_code:
                    raise AuthenticationFailed(f"SASL authentication to {self.name} failed: "
                                               f"{response.error_message or response.error_code}")
                message = mechanism_client.respond(response.auth_bytes or b"")
        except SaslError as e:
            raise AuthenticationFailed(f"SASL authentication to {self.name} failed: {e}") from None


@dataclass(frozen=True)
class ApiSpec:
    """The few facts of one API the client needs, from its request spec alone (no full registry: fast)."""

    name: str
    api_key: int
    valid_versions: object
    flexible_versions: object


@functools.lru_cache(maxsize=None)
def api_by_name(api_name: str) -> ApiSpec:
    """Return the ApiSpec of an API by name (loads only `<name>Request`)."""
    from kraftsman.storage.protocol import schema

    try:
        spec = schema.load(api_name + "Request")
    except (KeyError, OSError, ValueError):
        raise UnsupportedVersion(f"unknown API {api_name!r}") from None
    return ApiSpec(api_name, spec.api_key, spec.valid_versions, spec.flexible_versions)


def encode_request(api: ApiSpec, version: int, correlation_id: int, client_id: str | None, body) -> bytes:
    """Return the sized request frame: header v2 if `version` is flexible else v1 (framing's rule), then body."""
    header = framing.request_header(api.api_key, version, correlation_id, client_id)
    out = bytearray(4)
    codec.encoder("RequestHeader", 2 if version in api.flexible_versions else 1)(header, out)
    codec.encoder(api.name + "Request", version)(body, out)
    struct.pack_into(">i", out, 0, len(out) - 4)
    return bytes(out)


def decode_response(api: ApiSpec, version: int, frame: bytes):
    """Decode a response frame (no size): header v1 if flexible (v0 always for ApiVersions, KIP-511);
    an ApiVersions body that does not parse at `version` is read at v0 (an UNSUPPORTED_VERSION answer)."""
    flexible = version in api.flexible_versions and api.api_key != framing.API_VERSIONS_KEY
    header, pos = codec.decoder("ResponseHeader", 1 if flexible else 0)(frame, 0)
    name = api.name + "Response"
    try:
        return header, _whole(name, version, frame, pos)
    except codec.CodecError:
        if api.api_key != framing.API_VERSIONS_KEY or version == 0:
            raise
    return header, _whole(name, 0, frame, pos)


def _whole(name: str, version: int, frame: bytes, pos: int):
    body, end = codec.decoder(name, version)(frame, pos)
    if end != len(frame):
        raise codec.CodecError(f"{len(frame) - end} byte(s) of garbage after {name} v{version}", end)
    return body


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


def _connect(host: str, port: int, deadline: float):
    try:
        return socket.create_connection((host, port), timeout=_remaining(deadline))
    except socket.timeout:
        raise Unreachable(f"connecting to {host}:{port} timed out") from None
    except socket.gaierror as e:
        raise Unreachable(f"cannot resolve host {host!r}: {_reason(e)}") from None
    except OSError as e:
        raise Unreachable(f"cannot connect to {host}:{port}: {_reason(e)}") from None


def _wrap_tls(sock, host: str, config: ClientConfig, deadline: float):
    import ssl

    try:
        context = ssl.create_default_context(cafile=config.ssl_cafile, cadata=config.ssl_cadata)
        context.check_hostname = config.ssl_check_hostname
        if config.ssl_certfile:
            context.load_cert_chain(config.ssl_certfile, config.ssl_keyfile, config.ssl_key_password)
    except (OSError, ssl.SSLError, ValueError) as e:
        raise AuthenticationFailed(f"cannot load the TLS trust/key material: {_reason(e)}") from None
    try:
        sock.settimeout(_remaining(deadline))
        return context.wrap_socket(sock, server_hostname=host)
    except socket.timeout:
        raise RequestTimeout(f"TLS handshake with {host} timed out") from None
    except ssl.SSLError as e:
        raise AuthenticationFailed(f"TLS handshake with {host} failed: {e.reason or e}") from None
    except OSError as e:
        raise NotKafka(f"TLS handshake with {host} failed: {_reason(e)}") from None
