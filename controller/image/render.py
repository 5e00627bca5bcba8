"""Java toString() forms Kafka's image nodes print (Arrays.toString, Optional, VersionRange, Endpoint).

Rules:
- Pure functions from values to text; no image knowledge beyond the record field names.
- Uuids print in Kafka's base64url form; uuid fields may arrive as plain 16-byte `bytes`.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from kraftsman.storage.protocol.uuids import uuid_str

SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
SHORT_MAX = 32767
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def int_list(values) -> str:
    """Render ints like Arrays.toString: '[1, 2, 3]'."""
    return "[" + ", ".join(map(str, values)) + "]"


def uuid_list(values) -> str:
    """Render Uuids like Arrays.toString / List.toString."""
    return "[" + ", ".join(map(uuid_str, values)) + "]"


def java_bool(value) -> str:
    """Render a bool as Java does."""
    return "true" if value else "false"


def optional(value) -> str:
    """Render a nullable value as java.util.Optional.toString."""
    return "Optional.empty" if value is None else f"Optional[{value}]"


def version_range(low: int, high: int) -> str:
    """Render a VersionRange: 'N' when equal, 'N+' up to Short.MAX_VALUE, else 'min-max'."""
    if low == high:
        return str(low)
    if high == SHORT_MAX:
        return f"{low}+"
    return f"{low}-{high}"


def endpoint(listener) -> str:
    """Render an Endpoint from a BrokerEndpoint/ControllerEndpoint record struct."""
    protocol = SECURITY_PROTOCOLS.get(listener.security_protocol, "null")
    return (f"Endpoint(listenerName='{listener.name}', securityProtocol={protocol}, "
            f"host='{listener.host}', port={listener.port})")


def endpoints(listeners) -> str:
    """Render listeners sorted by name, comma separated (BrokerRegistration.toString)."""
    return ", ".join(endpoint(e) for e in sorted(listeners, key=lambda e: e.name))


def features(supported) -> str:
    """Render supported features sorted by name: 'a: 0-1, b: 1-21'."""
    return ", ".join(f"{f.name}: {version_range(f.min_supported_version, f.max_supported_version)}"
                     for f in sorted(supported, key=lambda f: f.name))


def iso_zoned_utc(ms: int) -> str:
    """Render epoch milliseconds like ISO_ZONED_DATE_TIME in UTC: '2024-10-24T19:33:01.123Z[UTC]'."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    millis = ms % 1000
    if millis:
        text += ("." + f"{millis:03d}").rstrip("0")
    return text + "Z[UTC]"


def hex_bytes(raw: bytes) -> str:
    """Render bytes as lower-case hex (the shell's arrayToHex)."""
    return raw.hex()
