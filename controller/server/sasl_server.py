"""Server side of SASL on SASL_PLAINTEXT / SASL_SSL listeners: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802).

Rules:
- Pure logic, no I/O: the Listener hands every request of an unauthenticated connection to
  SaslSession.step(api_key, version, body) and sends what it returns, Kafka's SaslServerAuthenticator
  state by state:
  * before the handshake only ApiVersions (answered by the Listener) and SaslHandshake are accepted;
    anything else closes the connection without an answer (Kafka's IllegalSaslStateException);
  * SaslHandshake v1 naming an enabled mechanism moves on; a disabled one is answered with
    UNSUPPORTED_SASL_MECHANISM (33) and the enabled list, then the connection closes; v0 (raw tokens
    afterwards) is refused by closing the connection;
  * after the handshake only SaslAuthenticate is accepted; another request gets ILLEGAL_SASL_STATE (34)
    and the connection closes; a failed exchange gets SASL_AUTHENTICATION_FAILED (58) with Kafka's
    message, then the connection closes.
- PLAIN users come from `listener.name.<l>.plain.sasl.jaas.config` (`user_<name>="<password>"` options);
  SCRAM credentials come from a lookup (the metadata image's UserScramCredentialRecords). Passwords
  and proofs are compared in constant time.
- The authenticated principal is `User:<name>`.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS = 17, 36, 18
SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISMS = ("PLAIN",) + tuple(SCRAM_HASHES)
PLAIN_FAILED = "Authentication failed: Invalid username or password"
_JAAS_USER = re.compile(r'user_([^\s=]+)\s*=\s*"((?:[^"\\]|\\.)*)"')


class SaslFailed(Exception):
    """Signal a failed exchange; str() is the message Kafka sends back in SaslAuthenticateResponse."""


def plain_users(jaas_config: str | None) -> dict[str, str]:
    """Return {user: password} from a PlainLoginModule JAAS line (`user_alice="pw"` options)."""
    return dict(_JAAS_USER.findall(jaas_config or ""))


@dataclass(frozen=True)
class Outcome:
    """Tell the Listener what to do with one pre-authentication request: answer `response` (None: close
    without one), then close when `close` is set."""

    response: object = None
    close: bool = False
    reason: str = ""


class PlainServer:
    """Check SASL PLAIN's one client message `authzid NUL user NUL password` against the JAAS users."""

    def __init__(self, users: dict[str, str]):
        self.users, self.username, self.done = users, None, False

    def evaluate(self, message: bytes) -> bytes:
        """Check the client message; return the (empty) server answer or raise SaslFailed."""
        parts = message.split(b"\0")
        if len(parts) != 3:
            raise SaslFailed("Invalid SASL/PLAIN response: expected 3 tokens, got " + str(len(parts)))
        authzid, user, password = (p.decode("utf-8", "replace") for p in parts)
        if not user:
            raise SaslFailed("Authentication failed: username not specified")
        if not password:
            raise SaslFailed("Authentication failed: password not specified")
        expected = self.users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslFailed(PLAIN_FAILED)
        if authzid and authzid != user:
            raise SaslFailed("Authentication failed: Client requested an authorization id that is different from "
                             "username")
        self.username, self.done = user, True
        return b""


def _unescape(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")


class ScramServer:
    """Run SCRAM's server side: client-first -> server-first, client-final (proof checked) -> server-final."""

    def __init__(self, mechanism: str, lookup, nonce: str | None = None):
        self.mechanism, self.hash_name, self.lookup = mechanism, SCRAM_HASHES[mechanism], lookup
        self.nonce = nonce or base64.b64encode(secrets.token_bytes(18)).decode()
        self.username, self.done = None, False
        self._credential = self._client_first = self._server_first = None

    def _failed(self) -> SaslFailed:
        return SaslFailed("Authentication failed during authentication due to invalid credentials with SASL "
                          f"mechanism {self.mechanism}")

    def evaluate(self, message: bytes) -> bytes:
        """Answer the next client message or raise SaslFailed (Kafka's generic message)."""
        try:
            text = message.decode("utf-8")
        except UnicodeDecodeError:
            raise self._failed() from None
        if self._credential is None:
            return self._first(text)
        return self._final(text)

    def _first(self, text: str) -> bytes:
        gs2, _, bare = text.partition(",")
        authzid, _, bare = bare.partition(",")
        attrs = dict(p.split("=", 1) for p in bare.split(",") if "=" in p)
        if gs2 != "n" or "n" not in attrs or "r" not in attrs:
            raise self._failed()
        user = _unescape(attrs["n"])
        if authzid and _unescape(authzid[2:]) != user:
            raise self._failed()
        credential = self.lookup(self.mechanism, user)
        if credential is None or credential.iterations < 4096:
            raise self._failed()
        self.username, self._credential, self._client_first = user, credential, bare
        salt = base64.b64encode(bytes(credential.salt)).decode()
        self._server_first = f"r={attrs['r']}{self.nonce},s={salt},i={credential.iterations}"
        return self._server_first.encode()

    def _final(self, text: str) -> bytes:
        without_proof, sep, proof = text.rpartition(",p=")
        attrs = dict(p.split("=", 1) for p in without_proof.split(",") if "=" in p)
        expected_nonce = self._server_first.split(",", 1)[0][2:]
        if not sep or attrs.get("r") != expected_nonce or attrs.get("c") not in ("biws", "eSws"):
            raise self._failed()
        auth = f"{self._client_first},{self._server_first},{without_proof}".encode()
        stored_key, server_key = bytes(self._credential.stored_key), bytes(self._credential.server_key)
        signature = hmac.new(stored_key, auth, self.hash_name).digest()
        try:
            client_proof = base64.b64decode(proof, validate=True)
        except ValueError:
            raise self._failed() from None
        client_key = bytes(a ^ b for a, b in zip(client_proof, signature))
        if len(client_proof) != len(signature) or not hmac.compare_digest(
                hashlib.new(self.hash_name, client_key).digest(), stored_key):
            raise self._failed()
        self.done = True
        return b"v=" + base64.b64encode(hmac.new(server_key, auth, self.hash_name).digest())


class SaslSession:
    """Track one connection's SASL state: handshake, then authenticate rounds, then `principal` is set."""

    def __init__(self, mechanisms: tuple[str, ...], users: dict[str, str], scram_lookup):
        self.mechanisms, self.users, self.scram_lookup = tuple(mechanisms), users, scram_lookup
        self.server = None
        self.principal: str | None = None

    @property
    def complete(self) -> bool:
        """Tell whether the client authenticated."""
        return self.principal is not None

    def step(self, api_key: int, version: int, body) -> Outcome:
        """Serve one request of a connection that has not authenticated yet (not ApiVersions)."""
        if self.server is None:
            if api_key != SASL_HANDSHAKE:
                return Outcome(reason=f"unexpected request (api key {api_key}) during SASL handshake")
            return self._handshake(version, body)
        if api_key != SASL_AUTHENTICATE:
            from kraftsman.controller.quorum import error_responses

            name = framing.api_info(api_key).name
            message = f"Unexpected Kafka request of type {name} during SASL authentication."
            return Outcome(error_responses.error_response(name, body, Errors.ILLEGAL_SASL_STATE, message), close=True,
                           reason=message)
        return self._authenticate(body)

    def _handshake(self, version: int, body) -> Outcome:
        cls = codec.message_class("SaslHandshakeResponse")
        if body.mechanism not in self.mechanisms:
            refusal = cls(error_code=Errors.UNSUPPORTED_SASL_MECHANISM, mechanisms=list(self.mechanisms))
            return Outcome(refusal, close=True,
                           reason=f"SASL mechanism {body.mechanism!r} not enabled")
        if version == 0:
            return Outcome(reason="SaslHandshake v0 (raw SASL tokens) is not supported; use v1")
        self.server = (PlainServer(self.users) if body.mechanism == "PLAIN"
                       else ScramServer(body.mechanism, self.scram_lookup))
        return Outcome(cls(error_code=0, mechanisms=list(self.mechanisms)))

    def _authenticate(self, body) -> Outcome:
        try:
            answer = self.server.evaluate(bytes(body.auth_bytes or b""))
        except SaslFailed as e:
            return Outcome(_error("SaslAuthenticate", Errors.SASL_AUTHENTICATION_FAILED, str(e)), close=True,
                           reason=f"SASL authentication failed: {e}")
        if self.server.done:
            self.principal = f"User:{self.server.username}"
        return Outcome(codec.message_class("SaslAuthenticateResponse")(error_code=0, auth_bytes=answer,
                                                                       session_lifetime_ms=0))


def _error(api: str, code: int, message: str):
    return codec.message_class(f"{api}Response")(error_code=code, error_message=message)


def after_authentication(api_key: int):
    """Answer SaslHandshake / SaslAuthenticate on an authenticated (or non-SASL) connection: ILLEGAL_SASL_STATE."""
    if api_key == SASL_HANDSHAKE:
        return codec.message_class("SaslHandshakeResponse")(error_code=Errors.ILLEGAL_SASL_STATE, mechanisms=[])
    return _error("SaslAuthenticate", Errors.ILLEGAL_SASL_STATE,
                  "SaslAuthenticate request received after successful authentication")
