"""A case of shared/fixtures/kafka-admin-3.9 (command, input files, expected stdout, stderr and exit code) and the
comparison of a run with it, masking exactly what the fixture's README names as varying from run to run.

Rules:
- load_case(name) reads a case folder; `argv` is the command after the script (kafka-topics.sh -> "kafka-topics"),
  split as the recording's shlex.join wrote it; `files` are its input files (write_inputs() puts them in a
  scratch directory, where the command ran).
- normalize(tool, argv, text) masks, on both streams: log4j timestamps ("[2026-11-27 21:37:27,551]"), and Java
  stack frames (each run of "\tat ..." / "\t... N more" lines becomes one "\tat <frames>" line: compared loosely).
  Per tool, as the README lists: kafka-topics --describe: TopicId values, the order of topics (blocks of a topic's
  lines, sorted by name) and the order inside "Isr:"; kafka-configs --describe of topics without a name: the order
  of the topic blocks; kafka-acls: the order of resources and of the entries inside each (compared as sets);
  kafka-broker-api-versions: the order of the broker blocks; kafka-reassign-partitions --generate: the proposed
  assignment's replicas; kafka-leader-election: the order of the partitions in "Successfully completed leader
  election ..."; kafka-metadata-quorum: LeaderId, LeaderEpoch, HighWatermark, LogEndOffset, lags, millisecond
  times, directory ids and the order of the observers. Nothing else is masked.
- compare(case, stdout, stderr, rc) returns the differences (empty when the run matches), as unified diffs of the
  normalized texts and a line for the exit code.
"""
from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .admin_cluster import FIXTURES

OUTPUT_FILES = {"cmd.txt", "stdout.txt", "stderr.txt", "rc.txt", "setup.txt", "elapsed_s.txt", "stdin.txt"}
_TIMESTAMP = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ", re.M)
_FRAME = re.compile(r"^\t(at |\.\.\. \d+ more)")
_TOPIC_ID = re.compile(r"(TopicId: )[A-Za-z0-9_-]{22}")
_ISR = re.compile(r"(Isr: )([\d,]*)")
_ELECTED = re.compile(r"^(Successfully completed leader election \(\w+\) for partitions )(.*)$", re.M)
_BROKER_BLOCK = re.compile(r"^\S+ \(id: -?\d+ rack: .*\) -> \($")


@dataclass
class Case:
    """One fixture case."""

    name: str
    tool: str
    argv: list[str]
    stdout: str
    stderr: str
    rc: int
    setup: str
    files: dict[str, bytes] = field(default_factory=dict)
    stdin: bytes | None = None


def case_names() -> list[str]:
    """Return every case folder's name (empty when ../shared is absent)."""
    if not FIXTURES.is_dir():
        return []
    return sorted(p.name for p in FIXTURES.iterdir() if (p / "cmd.txt").is_file())


def load_case(name: str) -> Case:
    """Read one case folder."""
    folder = FIXTURES / name
    words = shlex.split((folder / "cmd.txt").read_text())
    tool = Path(words[0]).name.removesuffix(".sh")
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.name not in OUTPUT_FILES}
    stdin = (folder / "stdin.txt").read_bytes() if (folder / "stdin.txt").exists() else None
    return Case(name, tool, words[1:], (folder / "stdout.txt").read_text(), (folder / "stderr.txt").read_text(),
                int((folder / "rc.txt").read_text().strip()), (folder / "setup.txt").read_text().strip(), files, stdin)


def write_inputs(case: Case, directory: Path) -> Path:
    """Write the case's input files into `directory` (where its command runs); return it."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in case.files.items():
        (directory / name).write_bytes(data)
    return directory


# ---------------------------------------------------------------- masking


def _frames(text: str) -> str:
    out, in_frames = [], False
    for line in text.split("\n"):
        if _FRAME.match(line):
            if not in_frames:
                out.append("\tat <frames>")
            in_frames = True
        else:
            out.append(line)
            in_frames = False
    return "\n".join(out)


def _topic_of(line: str) -> str | None:
    match = re.match(r"^\t?Topic: ([^\t]*)\t", line)
    return match.group(1) if match else None


def _sorted_topic_blocks(text: str) -> str:
    """Sort runs of lines by the topic they describe (a header and its partitions stay together, in order)."""
    blocks: list[tuple[str, list[str]]] = []
    rest = []
    for line in text.split("\n"):
        topic = _topic_of(line)
        if topic is None:
            rest.append(line)
        elif line.startswith("\t") and blocks and blocks[-1][0] == topic:
            blocks[-1][1].append(line)
        else:
            blocks.append((topic, [line]))
    ordered = [line for _, lines in sorted(blocks, key=lambda b: b[0]) for line in lines]
    return "\n".join(ordered + rest)


def _sorted_config_blocks(text: str) -> str:
    blocks, current = [], None
    for line in text.split("\n"):
        if re.match(r"^(Dynamic|All) configs for topic ", line):
            current = [line]
            blocks.append(current)
        elif current is not None and line.startswith("  "):
            current.append(line)
        else:
            blocks.append([line])
            current = None
    return "\n".join(line for block in sorted(blocks, key=lambda b: b[0]) for line in block)


def _acl_sets(text: str) -> str:
    """Compare kafka-acls' resource blocks and their entries as sets."""
    blocks = []
    for chunk in text.split("\n\n"):
        lines = chunk.split("\n")
        entries = sorted(line.strip(" \t") for line in lines[1:] if line.strip())
        blocks.append(lines[0] + "\n" + "\n".join(entries))
    return "\n\n".join(sorted(blocks))


def _api_version_blocks(text: str) -> str:
    blocks, current = [], None
    for line in text.split("\n"):
        if _BROKER_BLOCK.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None:
            current.append(line)
            if line == ")":
                current = None
        else:
            blocks.append([line])
    return "\n".join(line for block in sorted(blocks) for line in block)


def _proposed_assignment(text: str) -> str:
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if line == "Proposed partition reassignment configuration":
            lines[i + 1] = re.sub(r'"replicas":\[[\d,]*\]', '"replicas":[<proposed>]', lines[i + 1])
    return "\n".join(lines)


def _quorum(text: str) -> str:
    text = re.sub(r"^(LeaderId|LeaderEpoch|HighWatermark|MaxFollowerLag|MaxFollowerLagTimeMs):(\s+)\S+",
                  r"\1:\2<varies>", text, flags=re.M)
    text = re.sub(r'"directoryId": "[A-Za-z0-9_-]{22}"', '"directoryId": "<id>"', text)

    def observers(match: re.Match) -> str:
        items = json.loads(match.group(2))
        return match.group(1) + json.dumps(sorted(items, key=lambda o: o.get("id", 0)))
    text = re.sub(r"^(CurrentObservers:\s+)(\[.*\])$", observers, text, flags=re.M)
    return _quorum_table(text)


def _quorum_table(text: str) -> str:
    """describe --replication: mask the varying columns and sort the observer rows."""
    lines = text.split("\n")
    if not lines or not lines[0].startswith("NodeId"):
        return text
    rows = [re.split(r"\s+", line.strip()) for line in lines[1:] if line.strip()]
    masked = [f"{r[0]} <dir> <offset> <lag> <time> <time> {' '.join(r[6:])}" for r in rows]
    voters = [m for m in masked if "Observer" not in m]
    observers = sorted(m for m in masked if "Observer" in m)
    return "\n".join([lines[0], *voters, *observers]) + ("\n" if text.endswith("\n") else "")


def normalize(tool: str, argv: list[str], text: str) -> str:
    """Return `text` (one stream of one run of `tool argv`) with the varying fields masked."""
    text = _frames(_TIMESTAMP.sub("[<time>] ", text))
    if tool == "kafka-topics" and "--describe" in argv:
        text = _sorted_topic_blocks(_ISR.sub(lambda m: m.group(1) + ",".join(sorted(m.group(2).split(","))),
                                             _TOPIC_ID.sub(r"\1<id>", text)))
    elif tool == "kafka-configs" and "--describe" in argv and "--entity-name" not in argv:
        text = _sorted_config_blocks(text)
    elif tool == "kafka-acls":
        text = _acl_sets(text)
    elif tool == "kafka-broker-api-versions":
        text = _api_version_blocks(text)
    elif tool == "kafka-reassign-partitions" and "--generate" in argv:
        text = _proposed_assignment(text)
    elif tool == "kafka-leader-election":
        text = _ELECTED.sub(lambda m: m.group(1) + ", ".join(sorted(m.group(2).split(", "))), text)
    elif tool == "kafka-metadata-quorum":
        text = _quorum(text)
    return text


def compare(case: Case, stdout: str, stderr: str, rc: int) -> list[str]:
    """Return the differences between a run and `case` (empty: it matches)."""
    problems = []
    for stream, expected, got in (("stdout", case.stdout, stdout), ("stderr", case.stderr, stderr)):
        want, have = (normalize(case.tool, case.argv, t) for t in (expected, got))
        if want != have:
            diff = difflib.unified_diff(want.splitlines(True), have.splitlines(True), f"{case.name}/{stream}.txt",
                                        f"run {stream}")
            problems.append("".join(diff))
    if rc != case.rc:
        problems.append(f"exit code {rc}, expected {case.rc}")
    return problems
