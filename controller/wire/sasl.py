"""Client side of SASL PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677) as Kafka clients speak them.

Rules:
- Pure message logic, no I/O: client.sync_client and wire.secure_connect drive the exchange over
  SaslHandshake v1 + SaslAuthenticate.
- A mechanism object answers `first()` then `respond(server_bytes)` until `done`; a bad or forged
  server message raises SaslError (one line), including a server signature that does not verify.
- SCRAM user names are escaped as RFC 5802 says ("=" -> "=3D", "," -> "=2C"); the GS2 header is "n,,"
  (no channel binding, no authzid), as Kafka's ScramSaslClient sends.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISMS = ("PLAIN",) + tuple(HASHES)


class SaslError(ValueError):
    """The SASL exchange failed or the server's message is malformed."""


class PlainClient:
    """SASL PLAIN: one message, authzid empty."""

    def __init__(self, username: str, password: str):
        self.username, self.password, self.done = username, password, False

    def first(self) -> bytes:
        """Return the only client message: NUL username NUL password."""
        return b"\0" + self.username.encode() + b"\0" + self.password.encode()

    def respond(self, server: bytes) -> bytes | None:
        """Accept the server's (empty) answer; nothing more to send."""
        self.done = True
        return None


def _escape(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def _attributes(message: bytes) -> dict[str, str]:
    try:
        text = message.decode("utf-8")
        return dict(part.split("=", 1) for part in text.split(","))
    except (UnicodeDecodeError, ValueError):
        raise SaslError(f"malformed SCRAM server message {message[:60]!r}") from None


class ScramClient:
    """SCRAM client: client-first, then client-final from server-first, then verify server-final."""

    def __init__(self, username: str, password: str, hash_name: str, nonce: str | None = None):
        self.username, self.password, self.hash_name = username, password, hash_name
        self.nonce = nonce or base64.b64encode(secrets.token_bytes(18)).decode()
        self.done, self._server_signature, self._bare = False, None, ""

    def first(self) -> bytes:
        """Return client-first-message `n,,n=<user>,r=<nonce>`."""
        self._bare = f"n={_escape(self.username)},r={self.nonce}"
        return ("n,," + self._bare).encode()

    def respond(self, server: bytes) -> bytes | None:
        """Return client-final for server-first; check server-final (then return None)."""
        if self._server_signature is None:
            return self._final(server)
        attrs = _attributes(server)
        if "e" in attrs:
            raise SaslError(f"SCRAM authentication failed: {attrs['e']}")
        if base64.b64decode(attrs.get("v", "")) != self._server_signature:
            raise SaslError("SCRAM server signature does not verify: the server does not know the password")
        self.done = True
        return None

    def _final(self, server: bytes) -> bytes:
        attrs = _attributes(server)
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s"), attrs.get("i", "")
        if not nonce.startswith(self.nonce) or salt is None or not iterations.isdigit():
            raise SaslError("invalid SCRAM server-first message (nonce, salt or iterations)")
        salted = hashlib.pbkdf2_hmac(self.hash_name, self.password.encode(), base64.b64decode(salt),
                                     int(iterations))
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._bare},{server.decode()},{without_proof}".encode()
        client_key = hmac.new(salted, b"Client Key", self.hash_name).digest()
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        signature = hmac.new(stored_key, auth_message, self.hash_name).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        server_key = hmac.new(salted, b"Server Key", self.hash_name).digest()
        self._server_signature = hmac.new(server_key, auth_message, self.hash_name).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def client_for(mechanism: str, username: str, password: str):
    """Return the client of `mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)."""
    if mechanism == "PLAIN":
        return PlainClient(username, password)
    if mechanism in HASHES:
        return ScramClient(username, password, HASHES[mechanism])
    raise SaslError(f"unsupported sasl.mechanism {mechanism!r} (supported: {', '.join(MECHANISMS)})")
