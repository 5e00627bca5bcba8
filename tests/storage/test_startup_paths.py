"""Start-up shortcuts: the schema cache never serves a stale schema, the small-input CRC-32C is exact."""
import os
import subprocess
import sys

import pytest
import yaml

from kraftsman.storage.protocol import schema, schema_cache
from kraftsman.storage.records import crc

SPEC = "name: DemoRecord\ntype: metadata\napiKey: 99\nvalidVersions: 0-1\nflexibleVersions: 0+\nfields:\n" \
       "  - name: Id\n    type: int32\n    versions: 0+\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KRAFTSMAN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "schemas"


def test_cache_written_then_used_without_yaml(cache, monkeypatch):
    assert schema.parse_text("DemoRecord", SPEC) == yaml.safe_load(SPEC)
    assert len(list(cache.iterdir())) == 1
    monkeypatch.setitem(sys.modules, "yaml", None)  # importing yaml now fails: the entry must be used
    assert schema.parse_text("DemoRecord", SPEC) == yaml.safe_load(SPEC)


def test_edited_schema_is_never_served_stale(cache):
    schema.parse_text("DemoRecord", SPEC)
    edited = SPEC.replace("validVersions: 0-1", "validVersions: 0-2")
    assert schema.parse_text("DemoRecord", edited)["validVersions"] == "0-2"
    assert len(list(cache.iterdir())) == 2


def test_corrupt_entry_falls_back_to_yaml(cache):
    schema.parse_text("DemoRecord", SPEC)
    entry = next(cache.iterdir())
    entry.write_text("{not json")
    assert schema.parse_text("DemoRecord", SPEC) == yaml.safe_load(SPEC)


def test_cache_off_and_unwritable(tmp_path, monkeypatch):
    monkeypatch.setenv("KRAFTSMAN_CACHE_DIR", "off")
    assert schema_cache.entry_path("DemoRecord", SPEC) is None
    assert schema.parse_text("DemoRecord", SPEC) == yaml.safe_load(SPEC)
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("KRAFTSMAN_CACHE_DIR", str(blocker))  # a file where the folder should be
    assert schema.parse_text("DemoRecord", SPEC) == yaml.safe_load(SPEC)


def test_every_packaged_schema_reads_the_same_through_the_cache(cache):
    for name in schema.names():
        text = open(os.path.join(schema.SCHEMA_DIR, f"{name}.yaml"), encoding="utf-8").read()
        expected = yaml.load(text, Loader=yaml.SafeLoader)
        assert schema.parse_text(name, text) == expected   # parsed, written
        assert schema.parse_text(name, text) == expected   # read back from the cache


def test_crc32c_check_value_and_agreement_with_the_c_library():
    from crc32c import crc32c as c_crc32c

    assert crc._crc32c_py(b"123456789") == 0xE3069283   # the CRC-32C check value (RFC 3720, B.4)
    data = bytes(range(256)) * 5
    for n in (0, 1, 7, 100, 1280):
        assert crc._crc32c_py(data[:n]) == c_crc32c(data[:n])
        assert crc._crc32c_py(memoryview(data)[:n], 0x1234) == c_crc32c(data[:n], 0x1234)


def test_small_inputs_skip_the_c_library_then_it_takes_over():
    code = ("import sys; from kraftsman.storage.records import crc\n"
            "crc.crc32c(b'x' * 100); print('crc32c' in sys.modules)\n"
            "crc.crc32c(b'x' * (crc.SMALL_BUDGET + 1)); print('crc32c' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30).stdout
    assert out.split() == ["False", "True"]


def test_format_imports_neither_yaml_nor_the_crc_library_once_cached(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(f"process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
                      f"controller.listener.names=CONTROLLER\nlog.dirs={tmp_path / 'data'}\n")
    code = ("import sys; from kraftsman.cli.storage.tool import run; from kraftsman.cli.common.environment import Environment\n"
            f"status = run(['format', '-c', {str(config)!r}, '-t', 'MkU3OEVBNTcwNTJENDM2Qg', '-g'], Environment())\n"
            "print(status, 'yaml' in sys.modules, 'crc32c' in sys.modules)\n")
    env = dict(os.environ, KRAFTSMAN_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30)
            for _ in range(2)]
    assert runs[0].stdout.split()[-3:] == ["0", "True", "False"]   # first run parses the YAML
    assert runs[1].stdout.split()[-3:] == ["0", "False", "False"]


def test_a_plain_format_imports_no_scram_and_no_asyncio(tmp_path):
    """kafka-storage format without --add-scram leaves the SCRAM module (hashlib, hmac) and asyncio unloaded."""
    config = tmp_path / "server.properties"
    config.write_text(f"process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:9093\n"
                      f"listeners=CONTROLLER://127.0.0.1:9093\ncontroller.listener.names=CONTROLLER\n"
                      f"log.dirs={tmp_path / 'meta'}\n")
    code = ("import sys\nfrom kraftsman.cli.storage.tool import run\nfrom kraftsman.cli.common.environment import Environment\n"
            f"status = run(['format', '-t', 'MkU3OEVBNTcwNTJENDM2Qg', '-c', {str(config)!r}], Environment())\n"
            "print(status, 'kraftsman.storage.scram' in sys.modules, 'asyncio' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "0 False False", done.stdout + done.stderr
