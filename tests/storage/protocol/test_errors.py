"""Kafka's error table: its rows against the reference, lookups of unknown codes, and one home for the table."""
from __future__ import annotations

import ast
import re
import struct
from pathlib import Path

import pytest

from kraftsman.storage.protocol.errors import Errors, default_message, error_name

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO.parent / "shared" / "reference" / "kafka-reference.md"


def reference_rows() -> list[tuple[int, str, str | None]]:
    """Return (code, name, message) of the reference's Appendix C, or skip when ../shared is absent."""
    if not REFERENCE.exists():
        pytest.skip(f"the Kafka reference is not at {REFERENCE} (../shared is absent)")
    text = REFERENCE.read_text()
    appendix = text[text.index("## Appendix C"):]
    rows = re.findall(r"^\| (-?\d+) \| ([A-Z_]+) \| (.*) \|$", appendix.split("\n## ")[0], re.M)
    return [(int(code), name, None if message == "(none)" else message) for code, name, message in rows]


def test_every_row_is_the_reference_row():
    rows = reference_rows()
    assert [(e.value, e.name, e.message) for e in Errors] == rows


def test_retriable_errors_are_kafkas():
    assert Errors.NOT_CONTROLLER.retriable and Errors.NOT_LEADER_OR_FOLLOWER.retriable
    assert Errors.UNKNOWN_TOPIC_OR_PARTITION.retriable and Errors.FENCED_LEADER_EPOCH.retriable
    assert not Errors.INVALID_REQUEST.retriable and not Errors.UNKNOWN_SERVER_ERROR.retriable
    assert not Errors.NONE.retriable and not Errors.INCONSISTENT_VOTER_SET.retriable


def test_a_member_is_the_plain_number_on_the_wire():
    assert Errors.NOT_CONTROLLER == 41 and f"{Errors.NOT_CONTROLLER}" == "41"
    assert struct.pack(">h", Errors.UNKNOWN_SERVER_ERROR) == b"\xff\xff"
    assert Errors(41) is Errors.NOT_CONTROLLER


def test_unknown_codes_have_a_name_and_no_message():
    assert error_name(6) == "NOT_LEADER_OR_FOLLOWER" and error_name(999) == "error code 999"
    assert error_name(999, "error {code}") == "error 999"
    assert default_message(41) == "This is not the correct controller for this cluster."
    assert default_message(0) is None and default_message(999) is None


def _error_constants(path: Path) -> list[str]:
    """Return the module-level names of `path` bound to a number that name a Kafka error."""
    found = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                found += [n.id for n in names if isinstance(n, ast.Name) and n.id in Errors.__members__]
    return found


@pytest.mark.parametrize("folder", ["controller", "storage", "shell"])
def test_error_codes_have_one_home(folder):
    """Kafka's error codes are written once, in storage/protocol/errors.py: no module keeps its own."""
    found = {str(p.relative_to(REPO)): names for p in sorted((REPO / folder).rglob("*.py"))
             if p.name != "errors.py" and (names := _error_constants(p))}
    assert not found
