"""kafka-dump-log where a new user met a dead end: a segment not named by its offset keeps Kafka's text and gets a
hint, a directory or only unknown files (meta.properties) are not a silent success, --version names kraftsman,
and the progress bar never lands on the screen an output pipe (| head) writes to."""
from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

import pytest

from kraftsman.cli.common.boundary import package_version, run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log import session
from kraftsman.cli.dump_log.tool import run
from kraftsman.storage.records.batch import build_batch

SEGMENT = "00000000000000000000.log"


def dump(argv, cwd) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, argv, Environment(stdout=out, stderr=err, cwd=str(cwd)), prog="kafka-dump-log")
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def segment(tmp_path):
    path = tmp_path / SEGMENT
    path.write_bytes(build_batch([(None, b"hello")], 0, timestamp=1))
    return path


def test_a_segment_not_named_by_its_offset_keeps_kafkas_text_and_gets_a_hint(tmp_path, segment):
    (tmp_path / "flip.log").write_bytes(segment.read_bytes())
    status, out, err = dump(["--files", "flip.log"], tmp_path)
    assert (status, out) == (1, "Dumping flip.log\n")
    kafka, hint = err.splitlines()
    assert kafka == 'kafka-dump-log: For input string: "flip"'
    assert hint.startswith("kafka-dump-log: hint: a .log segment is named by the offset of its first batch")


def test_a_directory_is_an_error_with_what_to_give_instead(tmp_path, segment):
    status, out, err = dump(["--files", "."], tmp_path)
    assert (status, out) == (1, "")
    assert err.splitlines() == ["kafka-dump-log: . is a directory",
                                f"kafka-dump-log: hint: --files takes files ({session.FILE_KINDS}), comma-separated: "
                                "e.g. --files DIR/00000000000000000000.log"]


def test_only_meta_properties_is_not_a_silent_success(tmp_path, segment):
    (tmp_path / "meta.properties").write_text("version=1\n")
    status, out, err = dump(["--files", "meta.properties"], tmp_path)
    assert (status, out) == (1, "Dumping meta.properties\n")
    assert err == f"Ignoring unknown file meta.properties\nkafka-dump-log: {session.NOTHING_DUMPED}\n"
    status, out, err = dump(["--files", f"meta.properties,{SEGMENT}"], tmp_path)   # something dumped: Kafka's 0
    assert status == 0 and err == "Ignoring unknown file meta.properties\n" and "baseOffset: 0" in out


@pytest.mark.parametrize("argv", [["--version"], ["--files", "x.log", "--version"]])
def test_version_names_kraftsman_as_every_tool(tmp_path, argv):
    assert dump(argv, tmp_path) == (0, f"kafka-dump-log (kraftsman) {package_version()}\n", "")


def test_shares_the_screen_tells_pipes_and_terminals_from_files(tmp_path):
    read, write = os.pipe()
    master, slave = pty.openpty()
    try:
        with os.fdopen(write, "w", closefd=False) as pipe, os.fdopen(slave, "w", closefd=False) as tty, \
                open(tmp_path / "out.txt", "w") as regular:
            assert session._shares_the_screen(pipe) and session._shares_the_screen(tty)
            assert not session._shares_the_screen(regular) and not session._shares_the_screen(io.StringIO())
    finally:
        for fd in (read, write, master, slave):
            os.close(fd)


def _with_bar(stdout, segment):
    """Run kafka-dump-log with stderr on a terminal and the bar threshold at 0; return what stderr showed."""
    master, slave = pty.openpty()
    code = ("import kraftsman.cli.dump_log.session as s; s._PROGRESS_BYTES = 0\n"
            "from kraftsman.cli.dump_log.tool import main; main()")
    process = subprocess.Popen([sys.executable, "-c", code, "--files", str(segment)], stdout=stdout, stderr=slave,
                               stdin=subprocess.DEVNULL, env=dict(os.environ, COLUMNS="100"))
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert process.wait(timeout=60) == 0
    return shown.decode("utf-8", "replace")


def test_the_bar_is_drawn_for_a_file_and_not_under_a_pipe(tmp_path, segment):
    with open(tmp_path / "out.txt", "w") as regular:
        assert SEGMENT in _with_bar(regular, segment)          # the bar names the file it reads
    assert _with_bar(subprocess.PIPE, segment) == ""            # | head: the screen is the reader's
