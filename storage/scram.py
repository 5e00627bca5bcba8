"""`--add-scram` arguments and SCRAM credentials (ScramParser, ScramFormatter, RFC 5802).

Rules:
- Parsing follows Kafka's ScramParser step by step, with its messages (ScramError).
- Derivation is RFC 5802: SaltedPassword = Hi(password, salt, i) = PBKDF2-HMAC-H;
  StoredKey = H(HMAC(SaltedPassword, "Client Key")); ServerKey = HMAC(SaltedPassword, "Server Key").
- Randomness (the default salt) comes from an injectable callable so tests are deterministic.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Callable

from .protocol import codec
from .records.metadata import ApiMessageAndVersion

DEFAULT_ITERATIONS = 4096


class ScramError(ValueError):
    """A bad `--add-scram` argument; the message is Kafka's."""


@dataclass(frozen=True)
class Mechanism:
    """A SCRAM mechanism: its name, enum name, record type code, hash and iteration bounds."""

    name: str
    enum_name: str
    type: int
    hash_name: str
    min_iterations: int = 4096
    max_iterations: int = 16384


MECHANISMS = {m.name: m for m in (Mechanism("SCRAM-SHA-256", "SCRAM_SHA_256", 1, "sha256"),
                                  Mechanism("SCRAM-SHA-512", "SCRAM_SHA_512", 2, "sha512"))}


@dataclass(frozen=True)
class ScramArgument:
    """One parsed `--add-scram` value; exactly one of password / salted_password is set."""

    mechanism: Mechanism
    name: str
    salt: bytes | None = None
    iterations: int | None = None
    password: str | None = None
    salted_password: bytes | None = None


def parse_argument(text: str) -> ScramArgument:
    """Parse `<MECHANISM>=[key=value,...]` with Kafka's checks and messages."""
    mech_name, eq, config = text.partition("=")
    if not eq:
        raise ScramError(f"Failed to find equals sign in SCRAM argument '{text}'")
    mechanism = MECHANISMS.get(mech_name)
    if mechanism is None:
        raise ScramError(f"The add-scram mechanism {mech_name} is not supported.")
    return _build(mechanism, _components(config))


def _components(config: str) -> dict[str, str]:
    """Split `[k=v,...]` into a dict, unquoting values wrapped in double quotes."""
    trimmed = config.strip()
    if not trimmed.startswith("["):
        raise ScramError("Expected configuration string to start with [")
    if not trimmed.endswith("]"):
        raise ScramError("Expected configuration string to end with ]")
    parts = trimmed[1:-1].split(",")
    while len(parts) > 1 and parts[-1] == "":      # Java's split drops trailing empty strings
        parts.pop()
    result: dict[str, str] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        if not eq:
            raise ScramError(f"No equals sign found in SCRAM component: {part}")
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        result[key] = value
    return result


def _build(mechanism: Mechanism, remaining: dict[str, str]) -> ScramArgument:
    """Pull the known keys out of `remaining` in Kafka's order, checking each."""
    name = remaining.pop("name", None)
    if name is None:
        raise ScramError("You must supply 'name' to add-scram")
    salt_text = remaining.pop("salt", None)
    salt = None if salt_text is None else _b64(salt_text, "Failed to decode given salt: ")
    iterations = _iterations(remaining.pop("iterations", None))
    password = remaining.pop("password", None)
    salted_text = remaining.pop("saltedpassword", None)
    salted = None
    if password is None:
        if salted_text is None:
            raise ScramError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise ScramError("You must supply 'salt' with 'saltedpassword' to add-scram")
        salted = _b64(salted_text, "Failed to decode given saltedPassword: ")
    if remaining:
        raise ScramError(f"Unknown SCRAM configurations: {', '.join(sorted(remaining))}")
    return ScramArgument(mechanism, name, salt, iterations, password, salted)


def _b64(text: str, prefix: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ScramError(prefix + text) from None


def _iterations(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text, 10)
    except ValueError:
        raise ScramError(f"Failed to parse iterations count: {text}") from None
    if not -2**31 <= value < 2**31 or text.strip() != text or "_" in text:
        raise ScramError(f"Failed to parse iterations count: {text}")
    return value


def random_salt() -> bytes:
    """Return Kafka's default salt: the UTF-8 base-36 text of a random 130-bit number."""
    n, digits = secrets.randbits(130), ""
    while True:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        if n == 0:
            return digits.encode("ascii")


def salted_password(mechanism: Mechanism, password: str, salt: bytes, iterations: int) -> bytes:
    """Compute RFC 5802 Hi(password, salt, iterations) with the mechanism's hash."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode("utf-8"), salt, iterations)


def stored_and_server_keys(mechanism: Mechanism, salted: bytes) -> tuple[bytes, bytes]:
    """Return (StoredKey, ServerKey) derived from a salted password."""
    client_key = hmac.new(salted, b"Client Key", mechanism.hash_name).digest()
    stored_key = hashlib.new(mechanism.hash_name, client_key).digest()
    server_key = hmac.new(salted, b"Server Key", mechanism.hash_name).digest()
    return stored_key, server_key


def to_record(arg: ScramArgument, salt_source: Callable[[], bytes] = random_salt) -> ApiMessageAndVersion:
    """Build the UserScramCredentialRecord (version 0) for one parsed argument."""
    mech = arg.mechanism
    iterations = DEFAULT_ITERATIONS if arg.iterations is None else arg.iterations
    if iterations < mech.min_iterations:
        raise ScramError(f"The 'iterations' value must be >= {mech.min_iterations} for add-scram "
                         f"using {mech.enum_name}")
    if iterations > mech.max_iterations:
        raise ScramError(f"The 'iterations' value must be <= {mech.max_iterations} for add-scram "
                         f"using {mech.enum_name}")
    salt = arg.salt if arg.salt is not None else salt_source()
    salted = arg.salted_password
    if salted is None:
        salted = salted_password(mech, arg.password, salt, iterations)
    stored_key, server_key = stored_and_server_keys(mech, salted)
    record = codec.message_class("UserScramCredentialRecord")(
        name=arg.name, mechanism=mech.type, salt=salt, stored_key=stored_key,
        server_key=server_key, iterations=iterations)
    return ApiMessageAndVersion(record, 0)
