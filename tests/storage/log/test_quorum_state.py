"""quorum-state: Kafka's exact bytes, FileQuorumStateStore's and the JSON converter's checks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftsman.storage.log import quorum_state as qs
from kraftsman.storage.log.atomic import FileSystem
from kraftsman.storage.log.quorum_state import QuorumState, QuorumStateError
from kraftsman.storage.protocol.uuids import ZERO_UUID, Uuid

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "kraft-real" / "data"
V0_TEXT = ('{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,'
           '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')
V1_TEXT = '{"leaderId":1,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}'
V0_STATE = QuorumState(leader_id=1, leader_epoch=5, current_voters=(1, 2, 3))
V1_STATE = QuorumState(leader_id=1, leader_epoch=5, current_voters=(), data_version=1)
DIR_ID = Uuid.from_string("J8aAPcfLQt2bqs1JT_rMgQ")


def _require_real_data() -> None:
    if not DATA.is_dir():
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")


def _real(name: str) -> list:
    return sorted(DATA.rglob(name)) if DATA.is_dir() else [None]


def _id(path) -> str:
    return "absent" if path is None else str(path.relative_to(DATA))


# ---------------------------------------------------------------- the reference examples

@pytest.mark.parametrize("text,state", [(V0_TEXT, V0_STATE), (V1_TEXT, V1_STATE)])
def test_reference_examples_round_trip_exactly(text, state):
    assert qs.parse(text) == state
    assert qs.parse(text.encode()) == state
    assert qs.serialize(state) == text.encode()


def test_v1_with_a_vote_and_v0_with_null_voters():
    state = QuorumState(leader_id=-1, leader_epoch=2, voted_id=1, voted_directory_id=DIR_ID, data_version=1)
    text = b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}'
    assert qs.serialize(state) == text and qs.parse(text) == state
    assert not state.has_leader and state.has_voted
    null_voters = QuorumState(cluster_id='a"b\\c\x01\t\u00e9', current_voters=None)
    text = b'{"clusterId":"a\\"b\\\\c\\u0001\\t\xc3\xa9","leaderId":-1,"leaderEpoch":-1,"votedId":-1,' \
           b'"appliedOffset":0,"currentVoters":null,"data_version":0}'
    assert qs.serialize(null_voters) == text and qs.parse(text) == null_voters


@pytest.mark.parametrize("text,state", [
    (V0_TEXT + "\ntrailing lines are never read", V0_STATE),
    (V0_TEXT + " trailing tokens are ignored, as by Jackson", V0_STATE),
    ("  " + V1_TEXT, V1_STATE),
    (V1_TEXT.replace('"data_version":1', '"data_version":1.9'), V1_STATE),
    (V1_TEXT.replace('"data_version":1', '"data_version":65537'), V1_STATE),
    (V1_TEXT.replace('"votedId":-1', '"votedId":-1,"clusterId":"x","appliedOffset":3'),
     QuorumState(leader_id=1, leader_epoch=5, applied_offset=3, cluster_id="x", data_version=1)),
    (V0_TEXT.replace('"data_version":0', '"data_version":"1"'), V0_STATE),
    (V1_TEXT.replace('"votedId":-1', '"votedId":-1,"currentVoters":[{},{"voterId":4}]'),
     QuorumState(leader_id=1, leader_epoch=5, current_voters=(0, 4), data_version=1)),
])
def test_lenient_cases_kafka_accepts(text, state):
    assert qs.parse(text) == state


# ---------------------------------------------------------------- errors

def _without(text: str, key: str) -> str:
    node = json.loads(text)
    del node[key]
    return json.dumps(node, separators=(",", ":"))


def _with(text: str, key: str, raw_value: str) -> str:
    node = json.loads(text)
    node[key] = "@@"
    return json.dumps(node, separators=(",", ":")).replace('"@@"', raw_value)


@pytest.mark.parametrize("data,message", [
    (b"", "File ended prematurely."),
    ("", "File ended prematurely."),
    ("\n" + V0_TEXT, "Deserialized node  is not an object node"),
    ("[]", "Deserialized node [] is not an object node"),
    ("[1,1.0E10,\"x\",true,null]", 'Deserialized node [1,1.0E10,"x",true,null] is not an object node'),
    ('{"leaderId":1}', 'Deserialized node {"leaderId":1} does not have data_version field'),
    ('{"a":"\\u001f\u00e9","b":1e10,"c":[true,null]}',
     'Deserialized node {"a":"\\u001F\u00e9","b":1.0E10,"c":[true,null]} does not have data_version field'),
    (_with(V0_TEXT, "data_version", "2"), "data_version (2) is not within the min (0) and max (1) supported version"),
    (_with(V0_TEXT, "data_version", "-1"), "data_version (-1) is not within the min (0) and max (1) supported version"),
    (_with(V0_TEXT, "data_version", "32768"),
     "data_version (-32768) is not within the min (0) and max (1) supported version"),
    (_with(V0_TEXT, "data_version", "1e400"),
     "data_version (-1) is not within the min (0) and max (1) supported version"),
    (_without(V0_TEXT, "leaderId"),
     "QuorumStateData: unable to locate field 'leaderId', which is mandatory in version 0"),
    (_without(V0_TEXT, "leaderEpoch"),
     "QuorumStateData: unable to locate field 'leaderEpoch', which is mandatory in version 0"),
    (_without(V1_TEXT, "votedId"),
     "QuorumStateData: unable to locate field 'votedId', which is mandatory in version 1"),
    (_without(V0_TEXT, "clusterId"),
     "QuorumStateData: unable to locate field 'clusterId', which is mandatory in version 0"),
    (_without(V0_TEXT, "appliedOffset"),
     "QuorumStateData: unable to locate field 'appliedOffset', which is mandatory in version 0"),
    (_without(V0_TEXT, "currentVoters"),
     "QuorumStateData: unable to locate field 'currentVoters', which is mandatory in version 0"),
    (_without(V1_TEXT, "votedDirectoryId"),
     "QuorumStateData: unable to locate field 'votedDirectoryId', which is mandatory in version 1"),
    (_with(V0_TEXT, "leaderId", '"1"'), "QuorumStateData: expected an integer or string type, but got STRING"),
    (_with(V0_TEXT, "leaderId", "1.0"), 'QuorumStateData: failed to parse number: For input string: "1.0"'),
    (_with(V0_TEXT, "leaderId", "2147483648"),
     'QuorumStateData: failed to parse number: For input string: "2147483648"'),
    (_with(V0_TEXT, "leaderId", "null"), 'QuorumStateData: failed to parse number: For input string: "null"'),
    (_with(V0_TEXT, "leaderId", "true"), 'QuorumStateData: failed to parse number: For input string: "true"'),
    (_with(V0_TEXT, "leaderId", "[]"), 'QuorumStateData: failed to parse number: For input string: ""'),
    (_with(V0_TEXT, "appliedOffset", "9223372036854775808"),
     'QuorumStateData: failed to parse number: For input string: "9223372036854775808"'),
    (_with(V0_TEXT, "clusterId", "5"), "QuorumStateData expected a string type, but got OBJECT"),
    (_with(V1_TEXT, "votedDirectoryId", "5"), "QuorumStateData expected a JSON string type, but got OBJECT"),
    (_with(V1_TEXT, "votedDirectoryId", '"abc"'), "Input string `abc` decoded as 2 bytes, which is not equal "
     "to the expected 16 bytes of a base64-encoded UUID"),
    (_with(V0_TEXT, "currentVoters", "{}"), "QuorumStateData expected a JSON array, but got OBJECT"),
    (_with(V0_TEXT, "currentVoters", "[{}]"),
     "Voter: unable to locate field 'voterId', which is mandatory in version 0"),
    (_with(V0_TEXT, "currentVoters", "[1]"),
     "Voter: unable to locate field 'voterId', which is mandatory in version 0"),
    (_with(V0_TEXT, "currentVoters", '[{"voterId":"1"}]'), "Voter: expected an integer or string type, but got STRING"),
])
def test_read_errors(data, message):
    with pytest.raises(QuorumStateError) as info:
        qs.parse(data)
    assert str(info.value) == message


@pytest.mark.parametrize("data,start", [
    ("{", "Unable to parse quorum-state JSON: "),
    ('{"data_version":NaN}', "Unable to parse quorum-state JSON: Non-standard token 'NaN'"),
    ("nope", "Unable to parse quorum-state JSON: "),
    (b"\xff{}", "Malformed input: quorum-state is not valid UTF-8 (byte 0)"),
    ("[" * 100000, "Unable to parse quorum-state JSON: "),
    ('{"data_version":' + "9" * 5000 + "}", "Unable to parse quorum-state JSON: "),
])
def test_unreadable_json(data, start):
    with pytest.raises(QuorumStateError) as info:
        qs.parse(data)
    assert str(info.value).startswith(start) and "\n" not in str(info.value)


@pytest.mark.parametrize("state,message", [
    (QuorumState(data_version=2), "Quorum state data version (2) is greater than the supported version (1)"),
    (QuorumState(data_version=-1), "data_version (-1) is not within the min (0) and max (1) supported version"),
    (QuorumState(voted_directory_id=DIR_ID), "Attempted to write a non-default votedDirectoryId at version 0"),
    (QuorumState(cluster_id="x", data_version=1), "Attempted to write a non-default clusterId at version 1"),
    (QuorumState(applied_offset=1, data_version=1), "Attempted to write a non-default appliedOffset at version 1"),
    (QuorumState(current_voters=(1,), data_version=1), "Attempted to write a non-default currentVoters at version 1"),
    (QuorumState(current_voters=None, data_version=1), "Attempted to write a non-default currentVoters at version 1"),
    (QuorumState(leader_id=2**31), "QuorumStateData: a value does not fit its field's integer type"),
    (QuorumState(leader_id="1"), "QuorumStateData: ids, epochs, offsets and versions must be integers"),
    (QuorumState(voted_directory_id="AAAA"), "QuorumStateData: cluster_id must be a str and voted_directory_id a Uuid"),
])
def test_write_refusals(state, message):
    with pytest.raises(QuorumStateError) as info:
        qs.serialize(state)
    assert str(info.value) == message


# ---------------------------------------------------------------- files

class RecordingFileSystem(FileSystem):
    def __init__(self):
        self.opened = []

    def open_write(self, path):
        self.opened.append(Path(path).name)
        return super().open_write(path)


def test_write_goes_through_quorum_state_tmp(tmp_path):
    fs = RecordingFileSystem()
    (tmp_path / "quorum-state.tmp").write_bytes(b"stale")
    path = qs.write(tmp_path, V1_STATE, fs=fs)
    assert fs.opened == ["quorum-state.tmp"]
    assert path == tmp_path / "quorum-state"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quorum-state"]
    assert path.read_bytes() == V1_TEXT.encode()
    assert qs.read(tmp_path) == V1_STATE == qs.read(path)
    qs.write(path, V0_STATE)
    assert path.read_bytes() == V0_TEXT.encode()


def test_read_missing_file_is_none(tmp_path):
    assert qs.read(tmp_path) is None
    assert qs.read(tmp_path / "quorum-state") is None


# ---------------------------------------------------------------- properties

int32 = st.integers(-2**31, 2**31 - 1)
v0_states = st.builds(QuorumState, leader_id=int32, leader_epoch=int32, voted_id=int32,
                      applied_offset=st.integers(-2**63, 2**63 - 1),
                      current_voters=st.none() | st.lists(int32, max_size=5).map(tuple),
                      cluster_id=st.text(max_size=20), data_version=st.just(0))
v1_states = st.builds(QuorumState, leader_id=int32, leader_epoch=int32, voted_id=int32,
                      voted_directory_id=st.binary(min_size=16, max_size=16).map(Uuid),
                      data_version=st.just(1))


@settings(max_examples=300)
@given(v0_states | v1_states)
def test_serialize_then_parse_round_trips(state):
    data = qs.serialize(state)
    assert qs.parse(data) == state
    assert b"\n" not in data and data.endswith(b',"data_version":%d}' % state.data_version)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
field_names = st.sampled_from(["clusterId", "leaderId", "leaderEpoch", "votedId", "votedDirectoryId",
                               "appliedOffset", "currentVoters", "voterId", "data_version"])


@settings(max_examples=400)
@given(st.dictionaries(field_names, json_values | st.sampled_from([0, 1, -1]), max_size=9))
def test_random_json_objects_raise_only_quorum_state_error(node):
    try:
        qs.parse(json.dumps(node))
    except QuorumStateError as e:
        assert "\n" not in str(e)


@settings(max_examples=300)
@given(st.binary(max_size=80) | st.text(max_size=80).map(str.encode))
def test_random_bytes_raise_only_quorum_state_error(data):
    try:
        qs.parse(data)
    except QuorumStateError:
        pass


# ---------------------------------------------------------------- real files written by Kafka

@pytest.mark.parametrize("path", _real("quorum-state"), ids=_id)
def test_every_real_quorum_state_reserializes_to_identical_bytes(path):
    _require_real_data()
    raw = path.read_bytes()
    state = qs.read(path)
    assert state.data_version == 0 and state.voted_directory_id == ZERO_UUID
    assert qs.serialize(state) == raw


def test_real_quorum_state_count():
    _require_real_data()
    assert len(_real("quorum-state")) >= 23
