"""`quorum-state` (FileQuorumStateStore): a node's last known leader, epoch and vote.

The file is one line of compact JSON made by the generated QuorumStateData converter, with
`"data_version"` appended last and no trailing newline:
  v0: {"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,
       "currentVoters":[{"voterId":1}],"data_version":0}
  v1: {"leaderId":1,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}

Rules:
- Reading follows FileQuorumStateStore and QuorumStateDataJsonConverter: first line only, first JSON
  value only (Jackson ignores trailing tokens), data_version as Jackson's shortValue(), then each
  field with the converter's checks and messages. Every failure is a QuorumStateError.
- Writing emits exactly the bytes Kafka writes (Jackson escapes, key order above) and refuses
  values the version cannot hold, as the generated converter does.
- Writes go to `quorum-state.tmp`, are fsynced, then renamed over `quorum-state`.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import StorageError
from ..protocol.javafmt import java_double
from ..protocol.uuids import ZERO_UUID, Uuid, UuidError
from .atomic import DEFAULT_FS, FileSystem, atomic_write

QUORUM_STATE_NAME = "quorum-state"
TMP_SUFFIX = ".tmp"
DATA_VERSION = "data_version"
LOWEST_SUPPORTED_VERSION = 0
HIGHEST_SUPPORTED_VERSION = 1
_ABOUT = "QuorumStateData"
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_MISSING = object()  # Jackson's MissingNode: what readTree returns for a blank line


def _reject_constant(name: str):
    """Refuse NaN and Infinity, which Jackson does not accept by default."""
    raise ValueError(f"Non-standard token '{name}' (NaN and Infinity are not JSON)")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


class QuorumStateError(StorageError, ValueError):
    """Report a quorum-state file that cannot be read or written (one-line message)."""


@dataclass(frozen=True)
class QuorumState:
    """Hold QuorumStateData plus its data_version; -1 ids mean unknown leader / no vote."""

    leader_id: int = -1
    leader_epoch: int = -1
    voted_id: int = -1
    voted_directory_id: Uuid = ZERO_UUID
    applied_offset: int = 0
    current_voters: tuple[int, ...] | None = ()
    cluster_id: str = ""
    data_version: int = 0

    def __post_init__(self) -> None:
        if self.current_voters is not None and not isinstance(self.current_voters, tuple):
            object.__setattr__(self, "current_voters", tuple(self.current_voters))

    @property
    def has_leader(self) -> bool:
        """Tell whether a leader is known."""
        return self.leader_id != -1

    @property
    def has_voted(self) -> bool:
        """Tell whether this node voted in the current epoch."""
        return self.voted_id != -1


# ---------------------------------------------------------------- JSON text (Jackson's rendering)

def _json_string(text: str) -> str:
    """Quote a string like Jackson: short escapes where JSON has them, else \\u00XX (uppercase)."""
    def escape(match: re.Match) -> str:
        c = match.group()
        return _JSON_ESCAPES.get(c) or f"\\u{ord(c):04X}"
    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def _to_json(node) -> str:
    """Render a decoded JSON value compactly, as Jackson's JsonNode.toString() does."""
    if isinstance(node, dict):
        return "{" + ",".join(f"{_json_string(k)}:{_to_json(v)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ",".join(_to_json(v) for v in node) + "]"
    return _scalar_text(node, quoted=True)


def _scalar_text(node, quoted: bool) -> str:
    """Render a scalar as JSON (quoted=True) or as Jackson's asText() (quoted=False)."""
    if isinstance(node, str):
        return _json_string(node) if quoted else node
    if node is None:
        return "null"
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, float):
        return java_double(node)
    if isinstance(node, int):
        return str(node)
    return "" if not quoted else _to_json(node)


def _node_type(node) -> str:
    """Return Jackson's JsonNodeType name for a decoded value."""
    for kind, name in ((dict, "OBJECT"), (list, "ARRAY"), (str, "STRING"), (bool, "BOOLEAN")):
        if isinstance(node, kind):
            return name
    return "NULL" if node is None else "NUMBER"


# ---------------------------------------------------------------- reading

def parse(data: bytes | str) -> QuorumState:
    """Parse the contents of a quorum-state file."""
    node = _read_tree(_first_line(data))
    if not isinstance(node, dict):
        raise QuorumStateError(f"Deserialized node {_render(node)} is not an object node")
    if DATA_VERSION not in node:
        raise QuorumStateError(f"Deserialized node {_render(node)} does not have {DATA_VERSION} field")
    version = _short_value(node[DATA_VERSION])
    if not LOWEST_SUPPORTED_VERSION <= version <= HIGHEST_SUPPORTED_VERSION:
        raise QuorumStateError(
            f"{DATA_VERSION} ({version}) is not within the min ({LOWEST_SUPPORTED_VERSION}) "
            f"and max ({HIGHEST_SUPPORTED_VERSION}) supported version")
    return _read_data(node, version)


def _first_line(data: bytes | str) -> str:
    """Return the first line as BufferedReader.readLine() would, decoding strict UTF-8."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise QuorumStateError(f"Malformed input: quorum-state is not valid UTF-8 (byte {e.start})") from None
    if not data:
        raise QuorumStateError("File ended prematurely.")
    return re.split(r"\r\n|\r|\n", data, maxsplit=1)[0]


def _read_tree(line: str):
    """Decode the first JSON value of `line` (Jackson readTree); a blank line is a MissingNode."""
    start = len(line) - len(line.lstrip(" \t"))
    if start == len(line):
        return _MISSING
    try:
        return _DECODER.raw_decode(line, start)[0]
    except json.JSONDecodeError as e:
        raise QuorumStateError(f"Unable to parse quorum-state JSON: {e.msg} at column {e.colno}") from None
    except ValueError as e:  # e.g. an integer longer than Python's digit limit
        raise QuorumStateError(f"Unable to parse quorum-state JSON: {' '.join(str(e).split())}") from None
    except RecursionError:
        raise QuorumStateError("Unable to parse quorum-state JSON: nesting too deep") from None


def _render(node) -> str:
    """Render a node for an error message (a MissingNode renders as nothing)."""
    if node is _MISSING:
        return ""
    try:
        return _to_json(node)
    except (RecursionError, ValueError):
        return "[nested too deep to show]"


def _short_value(node) -> int:
    """Return Jackson's JsonNode.shortValue(): numbers narrowed like Java casts, others 0."""
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    if isinstance(node, float):
        node = 0 if math.isnan(node) else int(max(-2.0**31, min(2.0**31 - 1, node)))
    return ((node + 2**15) % 2**16) - 2**15


def _read_data(node: dict, version: int) -> QuorumState:
    """Read QuorumStateData fields the way QuorumStateDataJsonConverter.read does."""
    cluster_id = _field(node, "clusterId", version, version <= 0, "", _string)
    leader_id = _field(node, "leaderId", version, True, -1, _int32)
    leader_epoch = _field(node, "leaderEpoch", version, True, -1, _int32)
    voted_id = _field(node, "votedId", version, True, -1, _int32)
    voted_directory_id = _field(node, "votedDirectoryId", version, version >= 1, ZERO_UUID, _uuid)
    applied_offset = _field(node, "appliedOffset", version, version <= 0, 0, _int64)
    voters = _field(node, "currentVoters", version, version <= 0, (), lambda v: _voters(v, version))
    return QuorumState(leader_id, leader_epoch, voted_id, voted_directory_id, applied_offset,
                       voters, cluster_id, version)


def _field(node: dict, name: str, version: int, mandatory: bool, default, convert, about: str = _ABOUT):
    """Read one field, or its default when absent and not mandatory in this version."""
    if name not in node:
        if mandatory:
            raise QuorumStateError(
                f"{about}: unable to locate field '{name}', which is mandatory in version {version}")
        return default
    return convert(node[name])


def _string(value) -> str:
    """Read a string field (the converter names the parent's type, OBJECT, in its message)."""
    if not isinstance(value, str):
        raise QuorumStateError(f"{_ABOUT} expected a string type, but got OBJECT")
    return value


def _uuid(value) -> Uuid:
    """Read a uuid field from its base64url text."""
    if not isinstance(value, str):
        raise QuorumStateError(f"{_ABOUT} expected a JSON string type, but got OBJECT")
    try:
        return Uuid.from_string(value)
    except UuidError as e:
        raise QuorumStateError(str(e)) from None


def _json_int(value, bits: int, about: str) -> int:
    """Read an integer the way MessageUtil.jsonNodeToInt / jsonNodeToLong do."""
    limit = 1 << (bits - 1)
    if isinstance(value, int) and not isinstance(value, bool) and -limit <= value < limit:
        return value
    if isinstance(value, str):
        raise QuorumStateError(f"{about}: expected an integer or string type, but got STRING")
    raise QuorumStateError(f'{about}: failed to parse number: For input string: "{_scalar_text(value, False)}"')


def _int32(value) -> int:
    """Read an int32 field."""
    return _json_int(value, 32, _ABOUT)


def _int64(value) -> int:
    """Read an int64 field."""
    return _json_int(value, 64, _ABOUT)


def _voters(value, version: int) -> tuple[int, ...] | None:
    """Read currentVoters: null, or an array of {"voterId": n} (VoterJsonConverter)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise QuorumStateError(f"{_ABOUT} expected a JSON array, but got OBJECT")
    voters = []
    for element in value:
        voter = element if isinstance(element, dict) else {}
        voters.append(_field(voter, "voterId", version, version <= 0, 0,
                             lambda v: _json_int(v, 32, "Voter"), about="Voter"))
    return tuple(voters)


def quorum_state_path(dir_or_path) -> Path:
    """Return `<dir>/quorum-state` for a directory, or the path itself for a file."""
    path = Path(dir_or_path)
    return path / QUORUM_STATE_NAME if path.is_dir() else path


def read(dir_or_path) -> QuorumState | None:
    """Read a quorum-state file (or `<dir>/quorum-state`); None when it does not exist, like Kafka."""
    path = quorum_state_path(dir_or_path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return parse(data)


# ---------------------------------------------------------------- writing

def serialize(state: QuorumState) -> bytes:
    """Return the exact bytes Kafka writes for `state` at its data_version."""
    _check_writable(state)
    fields: dict = {}
    if state.data_version == 0:
        fields["clusterId"] = state.cluster_id
    fields.update(leaderId=state.leader_id, leaderEpoch=state.leader_epoch, votedId=state.voted_id)
    if state.data_version >= 1:
        fields["votedDirectoryId"] = str(state.voted_directory_id)
    else:
        fields["appliedOffset"] = state.applied_offset
        voters = state.current_voters
        fields["currentVoters"] = None if voters is None else [{"voterId": v} for v in voters]
    fields[DATA_VERSION] = state.data_version
    return _to_json(fields).encode("utf-8", "replace")


def _check_types(state: QuorumState) -> None:
    """Refuse field values of the wrong Python type."""
    ints = [state.leader_id, state.leader_epoch, state.voted_id, state.applied_offset,
            state.data_version, *(state.current_voters or ())]
    if any(isinstance(v, bool) or not isinstance(v, int) for v in ints):
        raise QuorumStateError(f"{_ABOUT}: ids, epochs, offsets and versions must be integers")
    if not isinstance(state.cluster_id, str) or not isinstance(state.voted_directory_id, Uuid):
        raise QuorumStateError(f"{_ABOUT}: cluster_id must be a str and voted_directory_id a Uuid")


def _check_writable(state: QuorumState) -> None:
    """Refuse what the version cannot hold, like the generated converter's write()."""
    _check_types(state)
    version = state.data_version
    if version > HIGHEST_SUPPORTED_VERSION:
        raise QuorumStateError(f"Quorum state data version ({version}) is greater than the "
                               f"supported version ({HIGHEST_SUPPORTED_VERSION})")
    if version < LOWEST_SUPPORTED_VERSION:
        raise QuorumStateError(f"{DATA_VERSION} ({version}) is not within the min ({LOWEST_SUPPORTED_VERSION}) "
                               f"and max ({HIGHEST_SUPPORTED_VERSION}) supported version")
    absent = {"votedDirectoryId": state.voted_directory_id != ZERO_UUID} if version == 0 else {
        "clusterId": state.cluster_id != "", "appliedOffset": state.applied_offset != 0,
        "currentVoters": state.current_voters != ()}
    for name, non_default in absent.items():
        if non_default:
            raise QuorumStateError(f"Attempted to write a non-default {name} at version {version}")
    ints = [state.leader_id, state.leader_epoch, state.voted_id, *(state.current_voters or ())]
    if any(not -2**31 <= v < 2**31 for v in ints) or not -2**63 <= state.applied_offset < 2**63:
        raise QuorumStateError(f"{_ABOUT}: a value does not fit its field's integer type")


def write(dir_or_path, state: QuorumState, *, fs: FileSystem = DEFAULT_FS) -> Path:
    """Write quorum-state crash-safely through `quorum-state.tmp`; return the file's path."""
    path = quorum_state_path(dir_or_path)
    data = serialize(state)
    fs.remove(path.with_name(path.name + TMP_SUFFIX))
    atomic_write(path, data, fs=fs, tmp_suffix=TMP_SUFFIX)
    return path
