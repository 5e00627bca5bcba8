"""The blocking client's TLS (throwaway CA made here) and SASL PLAIN / SCRAM (RFC 5802 / RFC 7677 vectors)."""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import ipaddress
import time

import pytest

from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.wire import sasl
from kraftsman.storage import scram

from ..server.sync_fakes import FakeServer, body

# ---------------------------------------------------------------- SCRAM message vectors


@pytest.mark.parametrize("hash_name, nonce, server_first, client_final, server_final", [
    ("sha1", "fyko+d2lbbFgONRv9qkxdawL",                                  # RFC 5802, section 5
     "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
     "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
     "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="),
    ("sha256", "rOprNGfwEbeRWgbNEkqO",                                    # RFC 7677, section 3
     "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
     "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
     "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
])
def test_scram_client_messages_match_the_rfc_vectors(hash_name, nonce, server_first, client_final, server_final):
    client = sasl.ScramClient("user", "pencil", hash_name, nonce=nonce)
    assert client.first() == f"n,,n=user,r={nonce}".encode()
    assert client.respond(server_first.encode()) == client_final.encode()
    assert client.respond(server_final.encode()) is None and client.done


def test_scram_client_rejects_a_forged_server_signature_and_a_foreign_nonce():
    client = sasl.ScramClient("user", "pencil", "sha256", nonce="rOprNGfwEbeRWgbNEkqO")
    client.first()
    client.respond(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    with pytest.raises(sasl.SaslError, match="does not verify"):
        client.respond(b"v=" + base64.b64encode(b"\0" * 32))
    other = sasl.ScramClient("user", "pencil", "sha256", nonce="abc")
    other.first()
    with pytest.raises(sasl.SaslError, match="nonce"):
        other.respond(b"r=xyz,s=QSXC,i=4096")


def test_scram_user_names_are_escaped_and_plain_is_nul_separated():
    assert sasl.ScramClient("a=b,c", "p", "sha256", nonce="n").first() == b"n,,n=a=3Db=2Cc,r=n"
    assert sasl.PlainClient("alice", "secret").first() == b"\0alice\0secret"


# ---------------------------------------------------------------- SASL over the wire (in-test server)


def _scram_server(username: str, password: str, mechanism: str):
    """Return a handler that checks a SCRAM exchange with storage.scram's keys (the server's side)."""
    mech = scram.MECHANISMS[mechanism]
    salt, iterations = b"salty", 4096
    stored_key, server_key = scram.stored_and_server_keys(mech, scram.salted_password(mech, password, salt, iterations))
    state = {}

    def handler(header, request):
        if header.request_api_key == 17:
            return body("SaslHandshakeResponse", error_code=0 if request.mechanism == mechanism else 33,
                        mechanisms=[mechanism])
        message = request.auth_bytes.decode()
        if message.startswith("n,,"):
            bare = message[3:]
            assert message.startswith("n,,") and f"n={username}," in bare
            state["first"] = bare
            state["server_first"] = f"r={bare.split('r=')[1]}SERVER,s={base64.b64encode(salt).decode()},i={iterations}"
            return body("SaslAuthenticateResponse", auth_bytes=state["server_first"].encode())
        without_proof, proof = message.rsplit(",p=", 1)
        auth = f"{state['first']},{state['server_first']},{without_proof}".encode()
        signature = hmac.new(stored_key, auth, mech.hash_name).digest()
        client_key = bytes(a ^ b for a, b in zip(base64.b64decode(proof), signature))
        if hashlib.new(mech.hash_name, client_key).digest() != stored_key:
            return body("SaslAuthenticateResponse", error_code=58, error_message="Authentication failed")
        verifier = base64.b64encode(hmac.new(server_key, auth, mech.hash_name).digest()).decode()
        return body("SaslAuthenticateResponse", auth_bytes=f"v={verifier}".encode())
    return handler


def _sasl_config(mechanism: str, password: str) -> sc.ClientConfig:
    return sc.ClientConfig.from_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                                            "sasl.username": "alice", "sasl.password": password})


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_against_a_server_using_storage_scram_keys(mechanism):
    ranges = {18: (0, 4), 17: (0, 1), 36: (0, 2)}
    with FakeServer(_scram_server("alice", "alice-secret", mechanism), ranges=ranges) as server:
        conn = sc.SyncConnection.open("127.0.0.1", server.port, _sasl_config(mechanism, "alice-secret"),
                                      time.monotonic() + 5)
        conn.close()
        assert [h.request_api_key for h, _ in server.requests] == [18, 17, 36, 36]
        with pytest.raises(sc.AuthenticationFailed, match="Authentication failed"):
            sc.SyncConnection.open("127.0.0.1", server.port, _sasl_config(mechanism, "wrong"), time.monotonic() + 5)


def test_plain_exchange_and_a_disabled_mechanism():
    seen = []

    def handler(header, request):
        if header.request_api_key == 17:
            return body("SaslHandshakeResponse", error_code=0 if request.mechanism == "PLAIN" else 33,
                        mechanisms=["PLAIN"])
        seen.append(request.auth_bytes)
        return body("SaslAuthenticateResponse")

    with FakeServer(handler, ranges={18: (0, 4), 17: (0, 1), 36: (0, 1)}) as server:
        sc.SyncConnection.open("127.0.0.1", server.port, _sasl_config("PLAIN", "pw"), time.monotonic() + 5).close()
        assert seen == [b"\0alice\0pw"]
        assert server.requests[-1][0].request_api_version == 1            # SaslAuthenticate at the server's max
        with pytest.raises(sc.AuthenticationFailed, match="does not enable SASL mechanism SCRAM-SHA-256"):
            sc.SyncConnection.open("127.0.0.1", server.port, _sasl_config("SCRAM-SHA-256", "pw"),
                                   time.monotonic() + 5)


# ---------------------------------------------------------------- TLS with a throwaway CA


def _certificate(subject: str, key, issuer_name, issuer_key, ca: bool):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(issuer_name or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                        critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    base = tmp_path_factory.mktemp("pki")
    pem = serialization.Encoding.PEM
    files = {}
    for name in ("ca", "rogue"):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(f"{name} CA", key, None, key, ca=True)
        files[name] = (key, cert)
        (base / f"{name}.pem").write_bytes(cert.public_bytes(pem))
    server_key = ec.generate_private_key(ec.SECP256R1())
    ca_key, ca_cert = files["ca"]
    server_cert = _certificate("127.0.0.1", server_key, ca_cert.subject, ca_key, ca=False)
    (base / "server.pem").write_bytes(server_cert.public_bytes(pem) + server_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    client_key = ec.generate_private_key(ec.SECP256R1())
    client_cert = _certificate("admin", client_key, ca_cert.subject, ca_key, ca=False)
    (base / "client.pem").write_bytes(client_cert.public_bytes(pem) + client_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return base


def _tls_server(pki, client_auth: bool = False):
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pki / "server.pem"))
    if client_auth:
        context.load_verify_locations(str(pki / "ca.pem"))
        context.verify_mode = ssl.CERT_REQUIRED
    return FakeServer(ranges={18: (0, 4), 64: (0, 0)}, tls_context=context)


def test_tls_connection_verifies_the_server_with_a_pem_truststore(pki):
    with _tls_server(pki) as server:
        config = sc.ClientConfig.from_properties({"security.protocol": "SSL",
                                                  "ssl.truststore.location": str(pki / "ca.pem")})
        with sc.SyncConnection.open("127.0.0.1", server.port, config, time.monotonic() + 5) as conn:
            assert conn.api_versions == {18: (0, 4), 64: (0, 0)}
        inline = sc.ClientConfig.from_properties({"security.protocol": "SSL",
                                                  "ssl.truststore.certificates": (pki / "ca.pem").read_text()})
        sc.SyncConnection.open("127.0.0.1", server.port, inline, time.monotonic() + 5).close()


def test_tls_refuses_a_server_signed_by_another_ca_and_plaintext_to_tls(pki):
    with _tls_server(pki) as server:
        rogue = sc.ClientConfig.from_properties({"security.protocol": "SSL",
                                                 "ssl.truststore.location": str(pki / "rogue.pem")})
        with pytest.raises(sc.AuthenticationFailed, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            sc.SyncConnection.open("127.0.0.1", server.port, rogue, time.monotonic() + 5)
        with pytest.raises((sc.NotKafka, sc.RequestTimeout)):
            sc.SyncConnection.open("127.0.0.1", server.port, sc.ClientConfig(), time.monotonic() + 1)


def test_mutual_tls_presents_the_pem_keystore(pki):
    with _tls_server(pki, client_auth=True) as server:
        props = {"security.protocol": "SSL", "ssl.truststore.location": str(pki / "ca.pem")}
        with_key = sc.ClientConfig.from_properties(props | {"ssl.keystore.location": str(pki / "client.pem")})
        with sc.SyncConnection.open("127.0.0.1", server.port, with_key, time.monotonic() + 5) as conn:
            assert conn.api_versions[64] == (0, 0)
        with pytest.raises((sc.AuthenticationFailed, sc.NotKafka)):       # the server drops us after the handshake
            sc.SyncConnection.open("127.0.0.1", server.port, sc.ClientConfig.from_properties(props),
                                   time.monotonic() + 5)
