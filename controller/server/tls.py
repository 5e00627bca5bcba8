"""Server-side TLS for SSL and SASL_SSL listeners: an ssl.SSLContext from Kafka's `ssl.*` settings (PEM only).

Rules:
- Every setting is read as Kafka does: `listener.name.<listener, lower case>.<key>` first, then `<key>`.
- Keystore: `ssl.keystore.type=PEM` (the default here) with `ssl.keystore.location` (one PEM file holding the
  certificate chain and the private key), or the inline `ssl.keystore.certificate.chain` + `ssl.keystore.key`;
  `ssl.key.password` decrypts an encrypted key. JKS/PKCS12 stores are refused with a one-line TlsConfigError.
- Truststore: `ssl.truststore.location` (PEM file of CA certificates) or inline `ssl.truststore.certificates`.
- `ssl.client.auth`: required -> the client must present a certificate the truststore verifies (expired or
  foreign-CA certificates fail the handshake), requested -> verified when presented, none (default) -> not asked.
  On SASL_SSL listeners only the listener-prefixed setting counts (KIP-684), as in Kafka.
- Inline PEM values may come in the one-line form a .properties continuation gives (whitespace inside the
  base64); they are re-wrapped before the ssl module reads them.
- `ssl.enabled.protocols` (default TLSv1.2,TLSv1.3) bounds the TLS versions offered.
- The SSL principal is Kafka's default: `User:<subject DN, RFC 2253>` for a verified client certificate,
  else `User:ANONYMOUS`.
"""
from __future__ import annotations

import os
import re
import ssl
import tempfile

ANONYMOUS = "User:ANONYMOUS"
CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


class TlsConfigError(ValueError):
    """Signal an ssl.* setting that is missing, unsupported or unreadable (one-line message)."""


def setting(props: dict, listener: str, key: str, default: str | None = None) -> str | None:
    """Return `listener.name.<listener>.<key>` if set, else `<key>`, else `default`."""
    value = props.get(f"listener.name.{listener.lower()}.{key}")
    if value is None:
        value = props.get(key, default)
    return value.strip() if isinstance(value, str) else value


def server_context(props: dict, listener: str, protocol: str = "SSL") -> ssl.SSLContext:
    """Build the server SSLContext of `listener` (security protocol SSL or SASL_SSL) from the properties."""
    get = lambda key, default=None: setting(props, listener, key, default)  # noqa: E731
    for key in ("ssl.keystore.type", "ssl.truststore.type"):
        if (get(key, "PEM") or "PEM").upper() != "PEM":
            raise TlsConfigError(f"{key}={get(key)} is not supported on listener {listener}: kraftsman reads PEM only")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    set_protocols(context, get("ssl.enabled.protocols", "TLSv1.2,TLSv1.3"))
    try:
        load_keystore(context, get("ssl.keystore.location"), get("ssl.keystore.certificate.chain"),
                       get("ssl.keystore.key"), get("ssl.key.password"), listener)
        auth = get("ssl.client.auth", "none") if protocol == "SSL" else \
            props.get(f"listener.name.{listener.lower()}.ssl.client.auth", "none")
        auth = (auth or "none").strip().lower()
        if auth not in CLIENT_AUTH:
            raise TlsConfigError(f"Invalid value {auth} for configuration ssl.client.auth: String must be one of: "
                                 "required, requested, none")
        cafile, cadata = get("ssl.truststore.location"), get("ssl.truststore.certificates")
        if cafile or cadata:
            context.load_verify_locations(cafile=cafile or None, cadata=normalize_pem(cadata) if cadata else None)
        elif auth != "none":
            raise TlsConfigError(f"ssl.client.auth={auth} on listener {listener} needs ssl.truststore.location")
        context.verify_mode = CLIENT_AUTH[auth]
    except (OSError, ssl.SSLError) as e:
        raise TlsConfigError(f"cannot load the TLS key material of listener {listener}: "
                             f"{getattr(e, 'strerror', None) or e}") from None
    return context


_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def set_protocols(context: ssl.SSLContext, text: str) -> None:
    """Bound the context's TLS versions by `ssl.enabled.protocols` (TLSv1.2 and/or TLSv1.3)."""
    names = [p.strip() for p in (text or "").split(",") if p.strip()]
    unknown = [n for n in names if n not in _VERSIONS]
    if not names or unknown:
        raise TlsConfigError(f"Invalid value {text} for configuration ssl.enabled.protocols: kraftsman supports "
                             "TLSv1.2 and TLSv1.3")
    versions = sorted(_VERSIONS[n] for n in names)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]


def load_keystore(context: ssl.SSLContext, location, chain, key, password, listener: str) -> None:
    """Load the PEM keystore: a file with chain and key, or the inline chain and key values."""
    if location:
        context.load_cert_chain(location, password=password or None)
        return
    if not (chain and key):
        raise TlsConfigError(f"listener {listener} needs ssl.keystore.location or ssl.keystore.certificate.chain "
                             "and ssl.keystore.key")
    # The ssl module loads keys from files only: write the inline PEM to a private temporary file.
    fd, path = tempfile.mkstemp(prefix="kraftsman-keystore-", suffix=".pem")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(normalize_pem(chain) + normalize_pem(key))
        context.load_cert_chain(path, password=password or None)
    finally:
        os.unlink(path)


_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)


def normalize_pem(text: str) -> str:
    """Rewrite PEM blocks with 64-column base64 lines (a joined .properties value has them on one line)."""
    blocks = []
    for label, data in _PEM_BLOCK.findall(text.replace("\\n", "\n")):
        data = re.sub(r"\s+", "", data)
        lines = [data[i:i + 64] for i in range(0, len(data), 64)]
        blocks.append("\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"]))
    if not blocks:
        raise TlsConfigError("an inline PEM value holds no -----BEGIN ...----- block")
    return "\n".join(blocks) + "\n"


def principal(ssl_object) -> str:
    """Return Kafka's default SSL principal for a connection: `User:CN=...` or `User:ANONYMOUS`."""
    cert = ssl_object.getpeercert() if ssl_object is not None else None
    if not cert or not cert.get("subject"):
        return ANONYMOUS
    names = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU", "countryName": "C",
             "localityName": "L", "stateOrProvinceName": "ST", "domainComponent": "DC", "userId": "UID"}
    parts = [f"{names.get(k, k)}={v}" for rdn in reversed(cert["subject"]) for k, v in rdn]
    return "User:" + ",".join(parts)
