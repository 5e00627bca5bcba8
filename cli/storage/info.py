"""kafka-storage info: what each log directory holds, Kafka's problems, and kraftsman's check against the config.

Rules:
- Kafka's infoCommand first: the sorted directories, `<dir> does not exist`, `<dir> is not formatted.`, the
  mismatches between directories, the legacy/KRaft mismatch; its text line for line, exit 1 on any problem.
- kraftsman adds one problem per directory whose meta.properties disagrees with the config: node.id always (when
  both are known), cluster.id when the config sets one. Such a directory is "foreign": exit 3 (FOREIGN) in text
  and in --output json|yaml alike, since Kafka would have said nothing (exit 0). Other problems keep Kafka's 1.
- Pure: returns text, entries and status; the command module prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kraftsman.storage.protocol.javafmt import java_path

from ..common.status import ExitStatus


@dataclass
class Expected:
    """What the config says each directory must hold (None: not checked)."""

    cluster_id: str | None = None
    node_id: int | None = None


@dataclass
class Inspection:
    """What inspect_directories found: per-directory entries, existing dirs, the first meta, all problems."""

    entries: list[dict] = field(default_factory=list)
    found: list[str] = field(default_factory=list)
    first: object = None
    problems: list[str] = field(default_factory=list)
    foreign: bool = False

    @property
    def status(self) -> int:
        """Return the exit status: 3 for a directory of another node or cluster, else 1 on problems, else 0."""
        if self.foreign:
            return ExitStatus.FOREIGN
        return ExitStatus.ERROR if self.problems else ExitStatus.OK


def inspect_directories(directories: list[str], kraft_mode: bool, expected: Expected | None = None) -> Inspection:
    """Examine each directory as Kafka's infoCommand does, then against `expected` (see Rules)."""
    found = Inspection()
    for directory in sorted(directories):
        _inspect_one(directory, found, expected or Expected())
    if found.first is not None:
        if kraft_mode and found.first.version == 0:
            found.problems.append("The kafka configuration file appears to be for a cluster in KRaft mode, but the "
                                  "directories are formatted for legacy mode.")
        elif not kraft_mode and found.first.version == 1:
            found.problems.append("The kafka configuration file appears to be for a legacy cluster, but the "
                                  "directories are formatted for a cluster in KRaft mode.")
    return found


def _inspect_one(directory: str, found: Inspection, expected: Expected) -> None:
    from kraftsman.storage.log import meta_properties as mp

    path = Path(directory)
    entry = {"path": java_path(directory), "state": "empty", "cluster_id": None, "node_id": None,
             "directory_id": None, "problems": []}
    found.entries.append(entry)
    if not path.is_dir():
        entry["state"] = "not_a_directory" if path.exists() else "missing"
        _problem(entry, found, f"{entry['path']} {'is not a directory' if path.exists() else 'does not exist'}")
        return
    found.found.append(entry["path"])
    meta_path = path / mp.META_PROPERTIES_NAME
    if not meta_path.exists():
        _problem(entry, found, f"{entry['path']} is not formatted.")
        return
    try:
        meta = mp.parse(meta_path.read_bytes().decode("iso-8859-1"))
    except (mp.MetaPropertiesError, OSError) as e:
        entry["state"] = "error"
        _problem(entry, found, f"Error loading {entry['path']}/meta.properties: {e}")
        return
    entry.update(state="formatted", cluster_id=meta.cluster_id, node_id=meta.node_id,
                 directory_id=None if meta.directory_id is None else str(meta.directory_id))
    _compare(entry, meta, found)
    _check_config(entry, meta, found, expected)


def _compare(entry: dict, meta, found: Inspection) -> None:
    """Compare with the first loaded directory, as Kafka does."""
    if found.first is None:
        found.first = meta
    elif found.first.cluster_id != meta.cluster_id:
        _problem(entry, found, "Mismatched cluster IDs between storage directories.")
    elif found.first.node_id != meta.node_id:
        _problem(entry, found, "Mismatched node IDs between storage directories.")


def _check_config(entry: dict, meta, found: Inspection, expected: Expected) -> None:
    """Add a foreign problem when meta.properties names another node or cluster than the config (kraftsman)."""
    where = f"{entry['path']}/meta.properties"
    if expected.node_id is not None and expected.node_id >= 0 and meta.node_id is not None \
            and meta.node_id != expected.node_id:
        _problem(entry, found, f"{where} has node.id {meta.node_id}, but the configuration has node.id "
                               f"{expected.node_id}.", foreign=True)
    if expected.cluster_id is not None and meta.cluster_id is not None and meta.cluster_id != expected.cluster_id:
        _problem(entry, found, f"{where} has cluster.id {meta.cluster_id}, but the configuration has cluster.id "
                               f"{expected.cluster_id}.", foreign=True)


def _problem(entry: dict, found: Inspection, text: str, foreign: bool = False) -> None:
    entry["problems"].append(text)
    found.problems.append(text)
    found.foreign = found.foreign or foreign


def info_text(directories: list[str], kraft_mode: bool, expected: Expected | None = None) -> tuple[str, int]:
    """Render infoCommand's output and exit status."""
    if not directories:
        return "No directories specified.\n", ExitStatus.OK
    found = inspect_directories(directories, kraft_mode, expected)
    lines = []
    if found.found:
        lines.append("Found log directory:" if len(found.found) == 1 else "Found log directories:")
        lines.extend(f"  {d}" for d in found.found)
        lines.append("")
    if found.first is not None:
        props = found.first.to_properties()
        lines.append("Found metadata: {" + ", ".join(f"{k}={props[k]}" for k in sorted(props)) + "}")
        lines.append("")
    if found.problems:
        lines.append("Found problem:" if len(found.problems) == 1 else "Found problems:")
        lines.extend(f"  {p}" for p in found.problems)
        lines.append("")
    return "\n".join(lines) + "\n", found.status


def info_object(directories: list[str], kraft_mode: bool, expected: Expected | None = None) -> dict:
    """Return info's structured object ({"directories", "problems", "status"}); its status is info_text's."""
    found = inspect_directories(directories, kraft_mode, expected)
    return {"directories": found.entries, "problems": found.problems, "status": int(found.status)}
