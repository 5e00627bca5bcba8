import base64
import hashlib
import hmac

import pytest

from kraftsman.storage import scram


def test_rfc7677_vector():
    """RFC 7677 section 3: user 'user', password 'pencil'; check the proof and the server signature."""
    mech = scram.MECHANISMS["SCRAM-SHA-256"]
    arg = scram.parse_argument('SCRAM-SHA-256=[name=user,password=pencil,salt="W22ZaJ0SNY7soEsUEjb6gQ==",iterations=4096]')
    record = scram.to_record(arg).message
    auth = (b"n=user,r=rOprNGfwEbeRWgbNEkqO,"
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
            b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    server_sig = hmac.new(record.server_key, auth, "sha256").digest()
    assert base64.b64encode(server_sig) == b"6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    proof = base64.b64decode("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    client_sig = hmac.new(record.stored_key, auth, "sha256").digest()
    client_key = bytes(a ^ b for a, b in zip(proof, client_sig))
    assert hashlib.sha256(client_key).digest() == record.stored_key
    assert (record.name, record.mechanism, record.iterations) == ("user", 1, 4096)
    assert record.salt == base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    assert mech.type == 1


def test_salted_password_gives_same_keys():
    salt = b"salty"
    salted = scram.salted_password(scram.MECHANISMS["SCRAM-SHA-512"], "pw", salt, 8192)
    a = scram.to_record(scram.parse_argument("SCRAM-SHA-512=[name=bob,password=pw,salt=c2FsdHk=,iterations=8192]"))
    b = scram.to_record(scram.parse_argument(
        f"SCRAM-SHA-512=[name=bob,iterations=8192,salt=\"c2FsdHk=\",saltedpassword=\"{base64.b64encode(salted).decode()}\"]"))
    assert a == b and a.message.mechanism == 2


def test_default_salt_is_base36_text():
    record = scram.to_record(scram.parse_argument("SCRAM-SHA-256=[name=alice,password=alice-secret]")).message
    assert record.salt.isalnum() and record.salt == record.salt.lower() and record.iterations == 4096


@pytest.mark.parametrize("text,message", [
    ("SCRAM-SHA-256", "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'"),
    ("SCRAM-SHA-1=[name=a]", "The add-scram mechanism SCRAM-SHA-1 is not supported."),
    ("SCRAM-SHA-256=name=a]", "Expected configuration string to start with ["),
    ("SCRAM-SHA-256=[name=a", "Expected configuration string to end with ]"),
    ("SCRAM-SHA-256=[password=a]", "You must supply 'name' to add-scram"),
    ("SCRAM-SHA-256=[name=a]", "You must supply one of 'password' or 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,saltedpassword=YCE=]", "You must supply 'salt' with 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,password=b,salt=!!]", "Failed to decode given salt: !!"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=x]", "Failed to parse iterations count: x"),
    ("SCRAM-SHA-256=[name=a,salt=N3E=,saltedpassword=!]", "Failed to decode given saltedPassword: !"),
    ("SCRAM-SHA-256=[name=a,password=b,zz=1,aa=2]", "Unknown SCRAM configurations: aa, zz"),
    ("SCRAM-SHA-256=[name=a,password]", "No equals sign found in SCRAM component: password"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=100]",
     "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256"),
    ("SCRAM-SHA-512=[name=a,password=b,iterations=20000]",
     "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512"),
])
def test_errors(text, message):
    with pytest.raises(scram.ScramError) as e:
        scram.to_record(scram.parse_argument(text))
    assert str(e.value) == message
