"""`meta.properties`: the identity of one log directory (MetaProperties, MetaPropertiesEnsemble).

v1 (KRaft): `version=1`, `cluster.id`, `node.id`, optional `directory.id`.
v0 (ZooKeeper): `version=0` or no `version`, optional `broker.id`, `cluster.id`, `directory.id`.
The file is Java properties text: a `#` line, a `#<java.util.Date.toString()>` line, then the keys.

Rules:
- Reading checks what Kafka checks, in Kafka's order, with Kafka's messages (MetaProperties.Builder).
- Files are read as ISO-8859-1, as Properties.load(InputStream) does, and written as UTF-8 with
  store(Writer) escapes, as PropertiesUtils.writePropertiesFile does.
- Keys are written in the order MetaProperties.toProperties() inserts them: version, cluster.id,
  node.id (broker.id in v0), directory.id. Kafka's own order is Hashtable order, i.e. undefined.
- Writes go to `meta.properties.tmp`, are fsynced, then renamed over `meta.properties`.
- `verify` is MetaPropertiesEnsemble.verify: directories in sorted order, Kafka's messages
  (including its `resrved` typo).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from enum import Enum, IntEnum
from pathlib import Path
from typing import Iterable, Mapping

from .. import properties
from ..errors import StorageError
from ..protocol.uuids import Uuid, UuidError, is_reserved_directory_id
from .atomic import DEFAULT_FS, FileSystem, atomic_write

META_PROPERTIES_NAME = "meta.properties"
TMP_SUFFIX = ".tmp"
VERSION_PROP = "version"
CLUSTER_ID_PROP = "cluster.id"
BROKER_ID_PROP = "broker.id"
NODE_ID_PROP = "node.id"
DIRECTORY_ID_PROP = "directory.id"


class MetaPropertiesError(StorageError, ValueError):
    """Report a meta.properties file, or a set of them, that is not valid (one-line message)."""


class MetaPropertiesVersion(IntEnum):
    """Name the two meta.properties versions (MetaPropertiesVersion)."""

    V0 = 0
    V1 = 1

    @classmethod
    def from_number_string(cls, text: str) -> "MetaPropertiesVersion":
        """Parse the `version` value, trimmed like Java's String.trim(), with Kafka's messages."""
        number = properties.parse_java_int(_java_trim(text))
        if number is None:
            raise MetaPropertiesError(f"Invalid meta.properties version string '{text}'")
        if number not in (0, 1):
            raise MetaPropertiesError(f"Unknown meta.properties version number {number}")
        return cls(number)

    @property
    def has_broker_id(self) -> bool:
        """Tell whether the node id is stored as `broker.id` (v0) rather than `node.id`."""
        return self is MetaPropertiesVersion.V0

    @property
    def always_has_node_id(self) -> bool:
        """Tell whether a node id is mandatory."""
        return self is MetaPropertiesVersion.V1

    @property
    def always_has_cluster_id(self) -> bool:
        """Tell whether a cluster id is mandatory."""
        return self is MetaPropertiesVersion.V1


@dataclass(frozen=True)
class MetaProperties:
    """Hold the contents of one meta.properties file; v1 requires cluster_id and node_id."""

    version: MetaPropertiesVersion = MetaPropertiesVersion.V1
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: Uuid | None = None

    def __post_init__(self) -> None:
        if self.version not in (0, 1):
            raise MetaPropertiesError(f"Unknown meta.properties version number {self.version}")
        object.__setattr__(self, "version", MetaPropertiesVersion(self.version))
        if self.version is not MetaPropertiesVersion.V0:
            if self.cluster_id is None:
                raise MetaPropertiesError("cluster.id was not found.")
            if self.node_id is None:
                raise MetaPropertiesError("node.id was not found.")
        if self.node_id is not None and not -2**31 <= self.node_id < 2**31:
            raise MetaPropertiesError(f"node.id {self.node_id} does not fit in a 32-bit signed integer.")
        if self.directory_id is not None and not isinstance(self.directory_id, Uuid):
            raise MetaPropertiesError(f"directory.id must be a Uuid, not {type(self.directory_id).__name__}")

    def to_properties(self) -> dict[str, str]:
        """Return the key/value pairs to store, in MetaProperties.toProperties() insertion order."""
        props = {VERSION_PROP: str(int(self.version))}
        if self.cluster_id is not None:
            props[CLUSTER_ID_PROP] = self.cluster_id
        if self.node_id is not None:
            props[BROKER_ID_PROP if self.version.has_broker_id else NODE_ID_PROP] = str(self.node_id)
        if self.directory_id is not None:
            props[DIRECTORY_ID_PROP] = str(self.directory_id)
        return props

    def __str__(self) -> str:
        parts = [f"version={int(self.version)}"]
        if self.cluster_id is not None:
            parts.append(f"clusterId={self.cluster_id}")
        if self.node_id is not None:
            parts.append(f"nodeId={self.node_id}")
        if self.directory_id is not None:
            parts.append(f"directoryId={self.directory_id}")
        return f"MetaProperties({', '.join(parts)})"


def _java_trim(text: str) -> str:
    """Strip leading and trailing characters <= U+0020, like Java's String.trim()."""
    return re.sub(r"^[\x00-\x20]+|[\x00-\x20]+$", "", text)


def _required_int(props: Mapping[str, str], key: str) -> int:
    """Read a mandatory int property (PropertiesUtils.loadRequiredIntProp)."""
    text = props.get(key)
    if text is None:
        raise MetaPropertiesError(f"Failed to find {key}")
    value = properties.parse_java_int(text)
    if value is None:
        raise MetaPropertiesError(f"Unable to read {key} as a base-10 number.")
    return value


def from_properties(props: Mapping[str, str]) -> MetaProperties:
    """Build MetaProperties from parsed properties, as MetaProperties.Builder(props).build() does."""
    version = MetaPropertiesVersion.from_number_string(props.get(VERSION_PROP, "0"))
    node_id = None
    if not version.has_broker_id:
        node_id = _required_int(props, NODE_ID_PROP)
    elif BROKER_ID_PROP in props:
        node_id = _required_int(props, BROKER_ID_PROP)
    directory_id = None
    if DIRECTORY_ID_PROP in props:
        try:
            directory_id = Uuid.from_string(props[DIRECTORY_ID_PROP])
        except UuidError as e:
            raise MetaPropertiesError(f"Unable to read {DIRECTORY_ID_PROP} as a Uuid: {e}") from None
    return MetaProperties(version, props.get(CLUSTER_ID_PROP), node_id, directory_id)


def parse(text: str) -> MetaProperties:
    """Parse the text of a meta.properties file."""
    try:
        props = properties.loads(text)
    except properties.PropertiesError as e:
        raise MetaPropertiesError(str(e)) from None
    return from_properties(props)


def meta_properties_path(dir_or_path) -> Path:
    """Return `<dir>/meta.properties` for a directory, or the path itself for a file."""
    path = Path(dir_or_path)
    return path / META_PROPERTIES_NAME if path.is_dir() else path


def read(dir_or_path) -> MetaProperties:
    """Read a log directory's meta.properties (or the given file); OSError passes through."""
    return _read_file(meta_properties_path(dir_or_path))


def _read_file(path: Path) -> MetaProperties:
    """Read one meta.properties file as ISO-8859-1, as Properties.load(InputStream) does."""
    return parse(path.read_bytes().decode("iso-8859-1"))


def serialize(meta: MetaProperties, now: datetime | None = None) -> str:
    """Render meta.properties text with Kafka's header (`#`, then `#<date of now in UTC>`)."""
    return properties.dumps(meta.to_properties(), comment="", date_line=properties.java_date(now))


def write(directory, meta: MetaProperties, *, fs: FileSystem = DEFAULT_FS,
          now: datetime | None = None) -> Path:
    """Write `<directory>/meta.properties` crash-safely through `meta.properties.tmp`; return its path."""
    path = Path(directory) / META_PROPERTIES_NAME
    data = serialize(meta, now).encode("utf-8", "replace")
    fs.remove(path.with_name(path.name + TMP_SUFFIX))
    atomic_write(path, data, fs=fs, tmp_suffix=TMP_SUFFIX)
    return path


# ---------------------------------------------------------------- ensembles of log directories

class DirectoryState(Enum):
    """Say what a log directory holds, as far as meta.properties goes."""

    MISSING = "missing"            # the directory does not exist
    EMPTY = "empty"                # the directory exists, without meta.properties
    FORMATTED = "formatted"        # meta.properties was read
    ERROR = "error"                # meta.properties (or the directory) could not be read


@dataclass(frozen=True)
class LogDirectory:
    """Report on one log directory: its state and its meta.properties or error text."""

    path: str
    state: DirectoryState
    meta: MetaProperties | None = None
    error: str | None = None


class VerificationFlag(Enum):
    """Name the optional checks of `verify` (MetaPropertiesEnsemble.VerificationFlag)."""

    REQUIRE_V0 = "REQUIRE_V0"
    REQUIRE_METADATA_LOG_DIR = "REQUIRE_METADATA_LOG_DIR"
    REQUIRE_AT_LEAST_ONE_VALID = "REQUIRE_AT_LEAST_ONE_VALID"


@dataclass(frozen=True)
class MetaPropertiesEnsemble:
    """Hold the meta.properties state of every log directory of one node, sorted by path."""

    dirs: tuple[LogDirectory, ...] = ()
    metadata_log_dir: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dirs", tuple(sorted(self.dirs, key=lambda d: d.path)))

    @property
    def log_dir_props(self) -> dict[str, MetaProperties]:
        """Map each directory whose meta.properties was read to its contents."""
        return {d.path: d.meta for d in self.dirs if d.state is DirectoryState.FORMATTED}

    @property
    def empty_log_dirs(self) -> list[str]:
        """List the directories without meta.properties (missing ones included, as in Kafka)."""
        return [d.path for d in self.dirs if d.state in (DirectoryState.EMPTY, DirectoryState.MISSING)]

    @property
    def error_log_dirs(self) -> list[str]:
        """List the directories whose meta.properties could not be read."""
        return [d.path for d in self.dirs if d.state is DirectoryState.ERROR]

    def node_id(self) -> int | None:
        """Return the first node id found, or None."""
        return next((m.node_id for m in self.log_dir_props.values() if m.node_id is not None), None)

    def cluster_id(self) -> str | None:
        """Return the first cluster id found, or None."""
        return next((m.cluster_id for m in self.log_dir_props.values() if m.cluster_id is not None), None)

    def verify(self, expected_cluster_id: str | None = None, expected_node_id: int | None = None,
               flags: Iterable[VerificationFlag] = ()) -> None:
        """Check the directories agree with each other (MetaPropertiesEnsemble.verify)."""
        verify(self.log_dir_props, expected_cluster_id, expected_node_id, flags,
               metadata_log_dir=self.metadata_log_dir, error_log_dirs=self.error_log_dirs)


def inspect_directory(log_dir) -> LogDirectory:
    """Report whether `log_dir` is missing, empty, formatted or unreadable."""
    path = str(log_dir)
    if not os.path.lexists(path):
        return LogDirectory(path, DirectoryState.MISSING)
    try:
        return LogDirectory(path, DirectoryState.FORMATTED, meta=_read_file(Path(path) / META_PROPERTIES_NAME))
    except FileNotFoundError:
        return LogDirectory(path, DirectoryState.EMPTY)
    except MetaPropertiesError as e:
        return LogDirectory(path, DirectoryState.ERROR, error=str(e))
    except OSError as e:
        return LogDirectory(path, DirectoryState.ERROR, error=_os_error_text(e))


def _os_error_text(e: OSError) -> str:
    """Render an OSError on one line: `<reason>: <file>`."""
    reason = e.strerror or type(e).__name__
    return f"{reason}: {e.filename}" if e.filename else reason


def load_ensemble(log_dirs: Iterable, metadata_log_dir=None) -> MetaPropertiesEnsemble:
    """Inspect every distinct log directory (the metadata one included), like the ensemble Loader."""
    paths = {str(d) for d in log_dirs}
    if metadata_log_dir is not None:
        paths.add(str(metadata_log_dir))
    if not paths:
        raise MetaPropertiesError("You must specify at least one log directory.")
    meta_dir = None if metadata_log_dir is None else str(metadata_log_dir)
    return MetaPropertiesEnsemble(tuple(inspect_directory(p) for p in paths), meta_dir)


def java_file_path(log_dir: str, name: str = META_PROPERTIES_NAME) -> str:
    """Join like `new File(logDir, name).toString()`: repeated and trailing slashes collapse."""
    parent = re.sub(r"/+", "/", log_dir).rstrip("/")
    return f"{parent}/{name}"


def verify(log_dir_props: Mapping[str, MetaProperties], expected_cluster_id: str | None = None,
           expected_node_id: int | None = None, flags: Iterable[VerificationFlag] = (), *,
           metadata_log_dir: str | None = None, error_log_dirs: Iterable[str] = ()) -> None:
    """Check that the directories agree (cluster.id, node.id, unique safe directory.id) or raise."""
    flags = frozenset(flags)
    if VerificationFlag.REQUIRE_AT_LEAST_ONE_VALID in flags and not log_dir_props:
        raise MetaPropertiesError("No readable meta.properties files found.")
    seen: dict[Uuid, str] = {}
    for log_dir in sorted(log_dir_props):
        meta, path = log_dir_props[log_dir], java_file_path(log_dir)
        if VerificationFlag.REQUIRE_V0 in flags and meta.version is not MetaPropertiesVersion.V0:
            raise MetaPropertiesError(
                f"Found unexpected version in {path}. ZK-based brokers that are not migrating only "
                "support version 0 (which is implicit when the `version` field is missing).")
        expected_cluster_id = _check_cluster_id(meta, path, expected_cluster_id)
        expected_node_id = _check_node_id(meta, path, expected_node_id)
        _check_directory_id(meta, log_dir, seen)
    if VerificationFlag.REQUIRE_METADATA_LOG_DIR in flags and metadata_log_dir is None:
        raise MetaPropertiesError("No metadata log directory was specified.")
    if metadata_log_dir is not None and metadata_log_dir in set(error_log_dirs):
        raise MetaPropertiesError(
            f"Encountered I/O error in metadata log directory {metadata_log_dir}. Cannot continue.")


def _check_cluster_id(meta: MetaProperties, path: str, expected: str | None) -> str | None:
    """Check one directory's cluster.id; return the cluster id expected from now on."""
    if meta.cluster_id is None:
        if meta.version.always_has_cluster_id:
            raise MetaPropertiesError(f"cluster.id was not specified in the v1 file: {path}")
        return expected
    if expected is None:
        return meta.cluster_id
    if meta.cluster_id != expected:
        raise MetaPropertiesError(
            f"Invalid cluster.id in: {path}. Expected {expected}, but read {meta.cluster_id}")
    return expected


def _check_node_id(meta: MetaProperties, path: str, expected: int | None) -> int | None:
    """Check one directory's node id; return the node id expected from now on."""
    if meta.node_id is None:
        if meta.version.always_has_node_id:
            raise MetaPropertiesError(f"node.id was not specified in {path}")
        return expected
    if expected is None:
        return meta.node_id
    if meta.node_id != expected:
        raise MetaPropertiesError(
            f"Stored node id {meta.node_id} doesn't match previous node id {expected} in {path}. "
            "If you moved your data, make sure your configured node id matches. If you intend to "
            "create a new node, you should remove all data in your data directories.")
    return expected


def _check_directory_id(meta: MetaProperties, log_dir: str, seen: dict[Uuid, str]) -> None:
    """Check one directory's directory.id is safe and not already used by another directory."""
    if meta.directory_id is None:
        return
    if is_reserved_directory_id(meta.directory_id):
        raise MetaPropertiesError(f"Invalid resrved directory ID {meta.directory_id} found in {log_dir}")
    previous = seen.setdefault(meta.directory_id, log_dir)
    if previous != log_dir:
        raise MetaPropertiesError(f"Duplicate directory ID Optional[{meta.directory_id}] found. "
                                  f"It was the ID of {previous}, but also of {log_dir}")
