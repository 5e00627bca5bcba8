"""Format log directories: plan which ones, then write each crash-safely (metadata Formatter).

Rules:
- `plan` is Kafka's Formatter.run up to the writes (steps 7-11 of the reference, in order, with
  Kafka's messages); `execute` reports the unreadable directories and writes. When every directory is
  unreadable it raises NO_AVAILABLE_DIRS after those lines (Kafka prints them first). Nothing here
  prints: lines go to an `emit` callback.
- Per directory, writes happen in this order, each atomically (temp file, fsync, rename, dir fsync):
  bootstrap.checkpoint, then (dynamic quorum only) the bootstrap snapshot
  `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`, then meta.properties LAST.
  So an interrupted format leaves a directory without meta.properties: not formatted, and a
  second `format` run completes it.
- Every file operation goes through an injectable FileSystem; the clock is injectable too.
- Directories are planned and written in sorted order, and `already formatted` names the first
  sorted one (Kafka uses HashMap order there, which is arbitrary).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Callable

from .. import features as ft
from ..dynamic_voters import DynamicVoter, voters_record
from ..errors import StorageError
from ..protocol import codec
from ..protocol.uuids import Uuid, random_directory_id
from ..records.metadata import ApiMessageAndVersion
from . import meta_properties as mp
from .atomic import DEFAULT_FS, FileSystem, atomic_write
from .snapshot import BOOTSTRAP_FILE, BOOTSTRAP_SNAPSHOT_ID, snapshot_bytes

METADATA_PARTITION_DIR = "__cluster_metadata-0"


class FormatterError(StorageError):
    """A format failure Kafka reports as a FormatterException or a plain runtime error."""


NO_AVAILABLE_DIRS = "No available log directories to format."


class DirectoryType(Enum):
    """What a newly formatted directory is (Formatter.DirectoryType), with Kafka's description."""

    LOG_DIRECTORY = "data directory"
    METADATA_DIRECTORY = "metadata directory"
    DYNAMIC_METADATA_NON_VOTER_DIRECTORY = "dynamic metadata directory"
    DYNAMIC_METADATA_VOTER_DIRECTORY = "dynamic metadata voter directory"

    @property
    def is_dynamic(self) -> bool:
        """Tell whether the dynamic-quorum bootstrap snapshot goes in this directory."""
        return self in (DirectoryType.DYNAMIC_METADATA_NON_VOTER_DIRECTORY,
                        DirectoryType.DYNAMIC_METADATA_VOTER_DIRECTORY)


@dataclass
class FormatSpec:
    """Everything `format` was asked to do (Formatter's setters)."""

    cluster_id: str | None
    node_id: int
    directories: list[str]
    metadata_log_dir: str | None
    listener_name: str | None
    release_version: ft.MetadataVersion | None = None
    feature_levels: dict[str, int] = field(default_factory=dict)
    scram_arguments: list[str] = field(default_factory=list)
    initial_controllers: dict[int, DynamicVoter] | None = None
    ignore_formatted: bool = False
    unstable_enabled: bool = False

    @property
    def has_dynamic_quorum(self) -> bool:
        """Tell whether KIP-853 initial controllers were given (--standalone/--initial-controllers)."""
        return self.initial_controllers is not None


@dataclass(frozen=True)
class DirectoryPlan:
    """One directory to format: where, what kind, and the meta.properties to write last."""

    path: str
    kind: DirectoryType
    meta: mp.MetaProperties


@dataclass
class FormatPlan:
    """The outcome of planning: versions, bootstrap records and directories to write."""

    release_version: ft.MetadataVersion
    feature_levels: dict[str, int]
    bootstrap_records: list[ApiMessageAndVersion]
    directories: list[DirectoryPlan]
    error_dirs: list[str]
    already_formatted: list[str]


# ---------------------------------------------------------------- planning (no writes)

def _check_spec(spec: FormatSpec) -> list[str]:
    """Apply Formatter.run's argument checks; return the sorted distinct directories."""
    if spec.node_id < 0:
        raise FormatterError("You must specify a valid non-negative node ID.")
    if spec.cluster_id is None:
        raise FormatterError("You must specify the cluster id.")
    dirs = sorted(set(spec.directories))
    if not dirs:
        raise FormatterError("You must specify at least one directory to format")
    if spec.listener_name is None:
        raise FormatterError("You must specify the name of the initial controller listener.")
    if spec.metadata_log_dir is None:
        raise FormatterError("You must specify the metadata log directory.")
    if spec.metadata_log_dir not in dirs:
        raise FormatterError(f"The specified metadata log directory, {spec.metadata_log_dir} was not "
                             f"one of the given directories: [{', '.join(dirs)}]")
    return dirs


def effective_release_version(spec: FormatSpec) -> ft.MetadataVersion:
    """Pick metadata.version from --feature, --release-version, or the latest (testing if unstable)."""
    if ft.METADATA_VERSION in spec.feature_levels:
        if spec.release_version is not None:
            raise FormatterError("Use --release-version instead of --feature metadata.version=X to avoid ambiguity.")
        level = spec.feature_levels[ft.METADATA_VERSION]
        try:
            return _verify_release(spec, ft.by_level(level))
        except ft.FeatureError:
            raise FormatterError(f"No MetadataVersion with feature level {level}") from None
    if spec.release_version is not None:
        return _verify_release(spec, spec.release_version)
    return ft.LATEST_TESTING if spec.unstable_enabled else ft.LATEST_PRODUCTION


def _verify_release(spec: FormatSpec, mv: ft.MetadataVersion) -> ft.MetadataVersion:
    if not mv.is_kraft_supported:
        raise FormatterError(f"metadata.version {mv} is too old to be supported.")
    if not spec.unstable_enabled and not mv.is_production:
        raise FormatterError(f"metadata.version {mv} is not yet stable.")
    return mv


def effective_feature_levels(spec: FormatSpec, mv: ft.MetadataVersion) -> dict[str, int]:
    """Resolve every feature level (given, kraft.version rule, or default) and validate them."""
    names = ft.feature_names()
    levels: dict[str, int] = {}
    for name, level in sorted(spec.feature_levels.items()):
        if name != ft.METADATA_VERSION and ft.feature(name) is None:
            raise FormatterError(f"Unsupported feature: {name}. Supported features are: {', '.join(names)}")
        levels[name] = level
    levels[ft.METADATA_VERSION] = mv.level
    for known in ft.FEATURES:
        if known.name == ft.KRAFT_VERSION:
            levels[known.name] = _kraft_version(spec, levels.get(known.name))
        elif known.name not in levels:
            levels[known.name] = known.default_level(mv)
    try:
        ft.validate_levels(levels, spec.unstable_enabled)
    except ft.FeatureError as e:
        raise FormatterError(str(e)) from None
    return dict(sorted(levels.items()))


def _kraft_version(spec: FormatSpec, given: int | None) -> int:
    """Apply the kraft.version rule: 1 with a dynamic quorum, 0 otherwise; check a given level."""
    if given is None:
        return 1 if spec.has_dynamic_quorum else 0
    if given == 0 and spec.has_dynamic_quorum:
        raise FormatterError("Cannot set kraft.version to 0 if KIP-853 configuration is present. "
                             "Try removing the --feature flag for kraft.version.")
    if given != 0 and not spec.has_dynamic_quorum:
        raise FormatterError(f"Cannot set kraft.version to {given} unless KIP-853 configuration is "
                             "present. Try removing the --feature flag for kraft.version.")
    return given


def bootstrap_records(spec: FormatSpec, mv: ft.MetadataVersion, levels: dict[str, int],
                      salt_source: Callable[[], bytes] | None = None) -> list[ApiMessageAndVersion]:
    """List bootstrap.checkpoint's records: metadata.version, other features > 0 by name, SCRAM."""
    feature_cls = codec.message_class("FeatureLevelRecord")
    records = [ApiMessageAndVersion(feature_cls(name=ft.METADATA_VERSION, feature_level=mv.level), 0)]
    for name in sorted(levels):
        if name not in (ft.METADATA_VERSION, ft.KRAFT_VERSION) and levels[name] > 0:
            records.append(ApiMessageAndVersion(feature_cls(name=name, feature_level=levels[name]), 0))
    if spec.scram_arguments:
        if mv < ft.SCRAM_MINIMUM:
            raise FormatterError(f"SCRAM is only supported in metadata.version {ft.SCRAM_MINIMUM} or later.")
        from .. import scram  # only with --add-scram: hashlib and friends stay out of a plain format's start-up

        try:
            parsed = [scram.parse_argument(a) for a in spec.scram_arguments]
            records.extend(scram.to_record(a, salt_source or scram.random_salt) for a in parsed)
        except scram.ScramError as e:
            raise FormatterError(str(e)) from None
    return records


def directory_type(path: str, spec: FormatSpec) -> DirectoryType:
    """Classify a directory to format (Formatter.DirectoryType.calculate)."""
    if path != spec.metadata_log_dir:
        return DirectoryType.LOG_DIRECTORY
    if spec.initial_controllers is None:
        return DirectoryType.METADATA_DIRECTORY
    if spec.node_id in spec.initial_controllers:
        return DirectoryType.DYNAMIC_METADATA_VOTER_DIRECTORY
    return DirectoryType.DYNAMIC_METADATA_NON_VOTER_DIRECTORY


def plan(spec: FormatSpec, salt_source: Callable[[], bytes] | None = None) -> FormatPlan:
    """Run every check of Formatter.run and decide what to write, without writing anything."""
    dirs = _check_spec(spec)
    mv = effective_release_version(spec)
    levels = effective_feature_levels(spec, mv)
    records = bootstrap_records(spec, mv, levels, salt_source)
    ensemble = mp.load_ensemble(dirs)
    try:
        ensemble.verify(spec.cluster_id, spec.node_id)
    except mp.MetaPropertiesError as e:
        raise FormatterError(str(e)) from None
    formatted = sorted(ensemble.log_dir_props)
    if formatted and not spec.ignore_formatted:
        raise FormatterError(f"Log directory {formatted[0]} is already formatted. Use --ignore-formatted "
                             "to ignore this directory and format the others.")
    empty, errors = ensemble.empty_log_dirs, ensemble.error_log_dirs
    used = {m.directory_id for m in ensemble.log_dir_props.values() if m.directory_id is not None}
    return FormatPlan(mv, levels, records, [_plan_dir(p, spec, used) for p in sorted(empty)], errors, formatted)


def _plan_dir(path: str, spec: FormatSpec, used: set[Uuid]) -> DirectoryPlan:
    kind = directory_type(path, spec)
    if kind is DirectoryType.DYNAMIC_METADATA_VOTER_DIRECTORY:
        directory_id = spec.initial_controllers[spec.node_id].directory_id
    else:
        directory_id = random_directory_id()
        while directory_id in used:
            directory_id = random_directory_id()
    used.add(directory_id)
    meta = mp.MetaProperties(mp.MetaPropertiesVersion.V1, spec.cluster_id, spec.node_id, directory_id)
    return DirectoryPlan(path, kind, meta)


# ---------------------------------------------------------------- writing

def _write(path: Path, data: bytes, fs: FileSystem, tmp_suffix: str) -> None:
    """Write atomically, first clearing a temp file an earlier crash may have left."""
    fs.remove(path.with_name(path.name + tmp_suffix))
    atomic_write(path, data, fs=fs, tmp_suffix=tmp_suffix)


def write_directory(d: DirectoryPlan, fplan: FormatPlan, spec: FormatSpec, *,
                    fs: FileSystem = DEFAULT_FS, now_ms: int = 0) -> None:
    """Create one directory and write its files, meta.properties last."""
    root = Path(d.path)
    os.makedirs(root, exist_ok=True)
    _write(root / BOOTSTRAP_FILE, snapshot_bytes(fplan.bootstrap_records, append_time=now_ms), fs, ".tmp")
    if d.kind.is_dynamic:
        partition = root / METADATA_PARTITION_DIR
        os.makedirs(partition, exist_ok=True)
        voters = voters_record(spec.initial_controllers, spec.listener_name)
        data = snapshot_bytes([], append_time=now_ms, last_contained_log_timestamp=now_ms,
                              kraft_version=fplan.feature_levels[ft.KRAFT_VERSION], voters=voters)
        _write(partition / BOOTSTRAP_SNAPSHOT_ID.file_name, data, fs, ".part")
    mp.write(root, d.meta, fs=fs)


def execute(fplan: FormatPlan, spec: FormatSpec, emit: Callable[[str], None], *,
            fs: FileSystem = DEFAULT_FS, clock: Callable[[], float] = time.time) -> None:
    """Report unreadable dirs, then format each planned directory (or say all are formatted)."""
    for path in fplan.error_dirs:
        emit(f"I/O error trying to read log directory {path}. Ignoring...")
    if fplan.error_dirs and not fplan.directories and not fplan.already_formatted:
        raise FormatterError(NO_AVAILABLE_DIRS)   # after the I/O error lines, as Kafka prints them
    if not fplan.directories:
        emit("All of the log directories are already formatted.")
        return
    for d in fplan.directories:
        emit(f"Formatting {d.kind.value} {d.path} with metadata.version {fplan.release_version}.")
        try:
            write_directory(d, fplan, spec, fs=fs, now_ms=int(clock() * 1000))
        except OSError as e:
            raise FormatterError(f"Error while writing meta.properties file {d.path}: {_os_text(e)}") from None


def _os_text(e: OSError) -> str:
    reason = e.strerror or str(e) or type(e).__name__
    return f"{reason}: {e.filename}" if e.filename else reason


def format_directories(spec: FormatSpec, emit: Callable[[str], None], *, fs: FileSystem = DEFAULT_FS,
                       clock: Callable[[], float] = time.time,
                       salt_source: Callable[[], bytes] | None = None) -> FormatPlan:
    """Plan, then write: the whole of Kafka's Formatter.run."""
    fplan = plan(spec, salt_source)
    execute(fplan, spec, emit, fs=fs, clock=clock)
    return fplan
