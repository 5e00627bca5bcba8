"""meta.properties: Kafka's read checks and messages, its header, atomic writes, ensemble checks."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftsman.storage.log import meta_properties as mp
from kraftsman.storage.log.atomic import FileSystem
from kraftsman.storage.log.meta_properties import (
    DirectoryState,
    MetaProperties,
    MetaPropertiesError,
    MetaPropertiesVersion,
    VerificationFlag,
)
from kraftsman.storage.protocol.uuids import Uuid

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "kraft-real" / "data"
NOW = datetime(2024, 10, 24, 19, 33, 1, tzinfo=timezone.utc)
DIR_A = Uuid.from_string("Ba9Unil2UlGyFgj6AQ2ihw")
DIR_B = Uuid.from_string("QpBuiHDxzfpnI4B6atD5pg")
V1, V0 = MetaPropertiesVersion.V1, MetaPropertiesVersion.V0


def _require_real_data() -> None:
    if not DATA.is_dir():
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")


def _real(name: str) -> list:
    return sorted(DATA.rglob(name)) if DATA.is_dir() else [None]


def _id(path) -> str:
    return "absent" if path is None else str(path.relative_to(DATA))


# ---------------------------------------------------------------- parsing

def test_parse_v1():
    meta = mp.parse("#\n#Tue Nov 14 06:46:06 UTC 2023\nnode.id=1\nversion=1\ncluster.id=hSCzevIQRUa-ojqTd_8C5w\n"
                    "directory.id=Ba9Unil2UlGyFgj6AQ2ihw\n")
    assert meta == MetaProperties(V1, "hSCzevIQRUa-ojqTd_8C5w", 1, DIR_A)


@pytest.mark.parametrize("text,expected", [
    ("version=0\nbroker.id=3\ncluster.id=c", MetaProperties(V0, "c", 3)),
    ("broker.id=3", MetaProperties(V0, None, 3)),
    ("", MetaProperties(V0)),
    ("version=0\nnode.id=5", MetaProperties(V0)),
    ("version= 1 \nnode.id=1\ncluster.id=", MetaProperties(V1, "", 1)),
    ("version=\t0\t", MetaProperties(V0)),
])
def test_parse_other_forms(text, expected):
    assert mp.parse(text) == expected


@pytest.mark.parametrize("text,message", [
    ("version=x", "Invalid meta.properties version string 'x'"),
    ("version=", "Invalid meta.properties version string ''"),
    ("version=1.0", "Invalid meta.properties version string '1.0'"),
    ("version=2", "Unknown meta.properties version number 2"),
    ("version=-1\nnode.id=x", "Unknown meta.properties version number -1"),
    ("version=1\ncluster.id=c", "Failed to find node.id"),
    ("version=1", "Failed to find node.id"),
    ("version=1\nnode.id=abc\ncluster.id=c", "Unable to read node.id as a base-10 number."),
    ("version=1\nnode.id=1 \ncluster.id=c", "Unable to read node.id as a base-10 number."),
    ("version=1\nnode.id=2147483648\ncluster.id=c", "Unable to read node.id as a base-10 number."),
    ("version=0\nbroker.id=x", "Unable to read broker.id as a base-10 number."),
    ("version=1\nnode.id=1", "cluster.id was not found."),
    ("version=1\nnode.id=1\ndirectory.id=bad", "Unable to read directory.id as a Uuid: Input string `bad` "
     "decoded as 2 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"),
    ("version=1\nnode.id=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAAAAA", "Unable to read directory.id "
     "as a Uuid: Input string with prefix `AAAAAAAAAAAAAAAAAAAAAAAA` is too long to be decoded as a base64 UUID"),
    ("version=1\nnode.id=1\ncluster.id=\\u00zz", "Malformed \\uxxxx encoding."),
])
def test_parse_errors_use_kafkas_messages(text, message):
    with pytest.raises(MetaPropertiesError) as info:
        mp.parse(text)
    assert str(info.value) == message


@pytest.mark.parametrize("kwargs,message", [
    (dict(version=V1, node_id=1), "cluster.id was not found."),
    (dict(version=V1, cluster_id="c"), "node.id was not found."),
    (dict(version=5, cluster_id="c", node_id=1), "Unknown meta.properties version number 5"),
    (dict(version=V0, node_id=2**31), "node.id 2147483648 does not fit in a 32-bit signed integer."),
    (dict(version=V0, directory_id="AAAA"), "directory.id must be a Uuid, not str"),
])
def test_constructor_checks(kwargs, message):
    with pytest.raises(MetaPropertiesError) as info:
        MetaProperties(**kwargs)
    assert str(info.value) == message


def test_to_properties_order_and_str():
    meta = MetaProperties(V1, "abc", 7, DIR_A)
    assert list(meta.to_properties().items()) == [
        ("version", "1"), ("cluster.id", "abc"), ("node.id", "7"), ("directory.id", str(DIR_A))]
    assert str(meta) == f"MetaProperties(version=1, clusterId=abc, nodeId=7, directoryId={DIR_A})"
    assert MetaProperties(V0, None, 4).to_properties() == {"version": "0", "broker.id": "4"}
    assert str(MetaProperties(V0)) == "MetaProperties(version=0)"


# ---------------------------------------------------------------- writing

def test_serialize_has_kafkas_header():
    text = mp.serialize(MetaProperties(V1, "abc", 7, DIR_A), NOW)
    assert text == ("#\n#Thu Oct 24 19:33:01 UTC 2024\nversion=1\ncluster.id=abc\nnode.id=7\n"
                    f"directory.id={DIR_A}\n")


class RecordingFileSystem(FileSystem):
    def __init__(self):
        self.opened = []

    def open_write(self, path):
        self.opened.append(Path(path).name)
        return super().open_write(path)


def test_write_goes_through_meta_properties_tmp(tmp_path):
    fs = RecordingFileSystem()
    (tmp_path / "meta.properties.tmp").write_bytes(b"stale leftover of a crash")
    meta = MetaProperties(V1, "abc", 7, DIR_A)
    path = mp.write(tmp_path, meta, fs=fs, now=NOW)
    assert fs.opened == ["meta.properties.tmp"]
    assert path == tmp_path / "meta.properties"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.properties"]
    assert mp.read(tmp_path) == meta == mp.read(path)
    assert path.read_text().splitlines()[1] == "#Thu Oct 24 19:33:01 UTC 2024"


def test_non_ascii_written_as_utf8_and_read_as_latin1_like_kafka(tmp_path):
    mp.write(tmp_path, MetaProperties(V1, "caf\u00e9", 1), now=NOW)
    assert b"cluster.id=caf\xc3\xa9\n" in (tmp_path / "meta.properties").read_bytes()
    assert mp.read(tmp_path).cluster_id == "caf\u00c3\u00a9"


@settings(max_examples=200)
@given(st.sampled_from([V0, V1]), st.text(max_size=20).map(lambda s: s.encode("latin-1", "replace")
                                                         .decode("latin-1")),
       st.integers(-2**31, 2**31 - 1), st.none() | st.binary(min_size=16, max_size=16).map(Uuid))
def test_serialize_then_parse_round_trips(version, cluster_id, node_id, directory_id):
    meta = MetaProperties(version, cluster_id, node_id, directory_id)
    assert mp.parse(mp.serialize(meta, NOW)) == meta


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from("versionclusterbrokeid.=:\\u01 \n#-xAZ") | st.characters(),
               max_size=80))
def test_parse_raises_only_meta_properties_error(text):
    try:
        mp.parse(text)
    except MetaPropertiesError:
        pass


# ---------------------------------------------------------------- MetaPropertiesEnsemble.verify

def _v1(cluster="c1", node=1, directory=None) -> MetaProperties:
    return MetaProperties(V1, cluster, node, directory)


@pytest.mark.parametrize("props,kwargs,message", [
    ({"/a": _v1("c1"), "/b": _v1("c2")}, {},
     "Invalid cluster.id in: /b/meta.properties. Expected c1, but read c2"),
    ({"/a": _v1("c1")}, dict(expected_cluster_id="c9"),
     "Invalid cluster.id in: /a/meta.properties. Expected c9, but read c1"),
    ({"/b": _v1(node=1), "/a": _v1(node=2)}, {},
     "Stored node id 1 doesn't match previous node id 2 in /b/meta.properties. If you moved your data, make "
     "sure your configured node id matches. If you intend to create a new node, you should remove all data "
     "in your data directories."),
    ({"/a": _v1(node=1)}, dict(expected_node_id=3),
     "Stored node id 1 doesn't match previous node id 3 in /a/meta.properties. If you moved your data, make "
     "sure your configured node id matches. If you intend to create a new node, you should remove all data "
     "in your data directories."),
    ({"/a": _v1(directory=Uuid.from_longs(0, 99))}, {},
     "Invalid resrved directory ID AAAAAAAAAAAAAAAAAAAAYw found in /a"),
    ({"/a": _v1(directory=DIR_A), "/b": _v1(directory=DIR_A)}, {},
     f"Duplicate directory ID Optional[{DIR_A}] found. It was the ID of /a, but also of /b"),
    ({"/a": MetaProperties(V0), "/b": _v1()}, dict(flags=[VerificationFlag.REQUIRE_V0]),
     "Found unexpected version in /b/meta.properties. ZK-based brokers that are not migrating only support "
     "version 0 (which is implicit when the `version` field is missing)."),
    ({}, dict(flags=[VerificationFlag.REQUIRE_AT_LEAST_ONE_VALID]), "No readable meta.properties files found."),
    ({"/a": _v1()}, dict(flags=[VerificationFlag.REQUIRE_METADATA_LOG_DIR]),
     "No metadata log directory was specified."),
    ({"/a": _v1()}, dict(metadata_log_dir="/m", error_log_dirs=["/m"]),
     "Encountered I/O error in metadata log directory /m. Cannot continue."),
    ({"/x//y/": _v1("c1"), "/a": _v1("c0")}, {},
     "Invalid cluster.id in: /x/y/meta.properties. Expected c0, but read c1"),
])
def test_verify_messages(props, kwargs, message):
    with pytest.raises(MetaPropertiesError) as info:
        mp.verify(props, **kwargs)
    assert str(info.value) == message


def test_verify_unreachable_v1_branches_keep_kafkas_messages():
    no_cluster = SimpleNamespace(version=V1, cluster_id=None, node_id=1, directory_id=None)
    no_node = SimpleNamespace(version=V1, cluster_id="c", node_id=None, directory_id=None)
    with pytest.raises(MetaPropertiesError, match=r"^cluster.id was not specified in the v1 file: /a/meta.properties$"):
        mp.verify({"/a": no_cluster})
    with pytest.raises(MetaPropertiesError, match=r"^node.id was not specified in /a/meta.properties$"):
        mp.verify({"/a": no_node})


def test_verify_accepts_consistent_directories():
    mp.verify({"/a": _v1(directory=DIR_A), "/b": _v1(directory=DIR_B), "/c": MetaProperties(V0)},
              "c1", 1, [VerificationFlag.REQUIRE_AT_LEAST_ONE_VALID])
    mp.verify({"/a": MetaProperties(V0), "/b": MetaProperties(V0, "z", 4)}, flags=[VerificationFlag.REQUIRE_V0])


# ---------------------------------------------------------------- loading an ensemble

def test_load_ensemble_reports_each_directory(tmp_path):
    formatted, empty, broken, odd = (tmp_path / n for n in ("formatted", "empty", "broken", "odd"))
    for d in (formatted, empty, broken, odd):
        d.mkdir()
    mp.write(formatted, _v1(directory=DIR_A), now=NOW)
    (broken / "meta.properties").write_text("version=x\n")
    (odd / "meta.properties").mkdir()
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    ensemble = mp.load_ensemble([str(tmp_path / "missing"), empty, broken, odd, not_a_dir], formatted)
    states = {Path(d.path).name: (d.state, d.error) for d in ensemble.dirs}
    assert states == {
        "formatted": (DirectoryState.FORMATTED, None),
        "empty": (DirectoryState.EMPTY, None),
        "missing": (DirectoryState.MISSING, None),
        "broken": (DirectoryState.ERROR, "Invalid meta.properties version string 'x'"),
        "odd": (DirectoryState.ERROR, f"Is a directory: {odd / 'meta.properties'}"),
        "file": (DirectoryState.ERROR, f"Not a directory: {not_a_dir / 'meta.properties'}"),
    }
    assert [d.path for d in ensemble.dirs] == sorted(d.path for d in ensemble.dirs)
    assert ensemble.log_dir_props == {str(formatted): _v1(directory=DIR_A)}
    assert ensemble.metadata_log_dir == str(formatted)
    assert ensemble.node_id() == 1 and ensemble.cluster_id() == "c1"
    assert set(ensemble.empty_log_dirs) == {str(empty), str(tmp_path / "missing")}
    assert set(ensemble.error_log_dirs) == {str(broken), str(odd), str(not_a_dir)}
    ensemble.verify("c1", 1, [VerificationFlag.REQUIRE_METADATA_LOG_DIR])


def test_load_ensemble_metadata_dir_with_error(tmp_path):
    (tmp_path / "meta.properties").write_text("version=7\n")
    ensemble = mp.load_ensemble([], tmp_path)
    assert ensemble.error_log_dirs == [str(tmp_path)]
    with pytest.raises(MetaPropertiesError, match="Encountered I/O error in metadata log directory"):
        ensemble.verify()


def test_load_ensemble_needs_a_directory():
    with pytest.raises(MetaPropertiesError, match=r"^You must specify at least one log directory\.$"):
        mp.load_ensemble([])


# ---------------------------------------------------------------- real files written by Kafka

@pytest.mark.parametrize("path", _real("meta.properties"), ids=_id)
def test_every_real_meta_properties(path):
    _require_real_data()
    raw = path.read_bytes()
    meta = mp.read(path)
    assert meta == mp.read(path.parent)
    assert meta.version is V1 and meta.cluster_id and meta.node_id is not None
    lines = raw.decode("iso-8859-1").splitlines()
    assert lines[0] == "#" and lines[1].startswith("#")
    ours = mp.serialize(meta).splitlines()
    assert ours[0] == "#" and sorted(ours[2:]) == sorted(lines[2:])
    mp.verify({str(path.parent): meta}, meta.cluster_id, meta.node_id,
              [VerificationFlag.REQUIRE_AT_LEAST_ONE_VALID])


def test_real_ensembles():
    _require_real_data()
    assert len(_real("meta.properties")) >= 26
    nodes = DATA / "kafka-raft" / "data"
    ensemble = mp.load_ensemble([nodes / "kafka2", nodes / "kafka1"])
    assert [d.state for d in ensemble.dirs] == [DirectoryState.FORMATTED] * 2
    with pytest.raises(MetaPropertiesError) as info:
        ensemble.verify()
    assert str(info.value).startswith(
        f"Stored node id 2 doesn't match previous node id 1 in {nodes / 'kafka2' / 'meta.properties'}. ")
    brokers = DATA / "docker-compose-kafka4.10@99d1f5a" / "data"
    with pytest.raises(MetaPropertiesError, match="doesn't match previous node id"):
        mp.load_ensemble([brokers / "broker-1", brokers / "kafka-2"]).verify()
    mp.load_ensemble([brokers / "broker-1", brokers / "kafka-1"]).verify("ohEfzflmT6-TloTKzfp5YA", 1)
