"""kafka-metadata-export checks its inputs and outputs before it starts Spark: a mistyped PATH, a run with nothing
to decode, an unwritable --report or -o fail at once (well under a second, where Spark takes tens), with one line."""
from __future__ import annotations

import io
import os
import time

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.status import ExitStatus
from kraftsman.cli.pipeline import preflight
from kraftsman.cli.pipeline.command import run

pytest.importorskip("pyspark", reason="pyspark is not installed: the checks run once the extra is there")


def call(argv):
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = run_command(run, argv, Environment(stdout=out, stderr=err), prog="kafka-metadata-export")
    return status, out.getvalue(), err.getvalue(), time.monotonic() - started


@pytest.fixture
def logs(tmp_path):
    folder = tmp_path / "c1" / "__cluster_metadata-0"
    folder.mkdir(parents=True)
    (folder / "00000000000000000000.log").write_bytes(b"")
    return folder


@pytest.mark.parametrize("make_argv, status, message", [
    (lambda t, logs: [str(logs), str(t / "typo"), "-o", str(t / "out")], ExitStatus.USAGE,
     "{t}/typo: no such file or directory"),
    (lambda t, logs: [str(t / "c*" / "nothing-*.log"), "-o", str(t / "out")], ExitStatus.USAGE,
     "{t}/c*/nothing-*.log: matches no file"),
    (lambda t, logs: [str(t / "empty"), "-o", str(t / "out")], ExitStatus.USAGE,
     "no .log segment or .checkpoint snapshot below {t}/empty"),
    (lambda t, logs: [str(logs), "-o", str(t / "out"), "--report", str(t / "no-dir" / "r.html")], ExitStatus.ERROR,
     "cannot write the report to {t}/no-dir/r.html: No such file or directory"),
    (lambda t, logs: [str(logs), "-o", str(t / "out"), "--report", str(t)], ExitStatus.ERROR,
     "cannot write the report to {t}: Is a directory"),
    (lambda t, logs: [str(logs), "-o", str(logs / "00000000000000000000.log" / "out")], ExitStatus.ERROR,
     "cannot write the tables to {t}/c1/__cluster_metadata-0/00000000000000000000.log/out: Not a directory"),
], ids=["typo", "glob", "nothing-to-decode", "report-folder-missing", "report-is-a-folder", "output-below-a-file"])
def test_bad_paths_fail_before_spark_starts(tmp_path, logs, make_argv, status, message):
    (tmp_path / "empty").mkdir()
    got, out, err, seconds = call(make_argv(tmp_path, logs))
    assert (got, out, err) == (status, "", f"kafka-metadata-export: {message.format(t=tmp_path)}\n")
    assert seconds < 5, "Spark was started"
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere: permissions cannot be tested as root")
def test_a_read_only_folder_is_refused(tmp_path):
    (tmp_path / "ro").mkdir(mode=0o555)
    assert "Permission denied" in preflight._unwritable(str(tmp_path / "ro" / "r.html"), folder=False)


def test_a_report_inside_the_output_folder_to_be_created_passes(tmp_path):
    preflight.check_report(str(tmp_path / "out" / "report.html"), str(tmp_path / "out"))
    with pytest.raises(Exception, match="No such file or directory"):
        preflight.check_report(str(tmp_path / "out" / "deeper" / "report.html"), str(tmp_path / "out"))


def test_writable_places_pass(tmp_path):
    assert preflight._unwritable(str(tmp_path / "new" / "deeper" / "out"), folder=True) is None
    assert preflight._unwritable(str(tmp_path / "r.html"), folder=False) is None
    (tmp_path / "r.html").write_text("old")
    assert preflight._unwritable(str(tmp_path / "r.html"), folder=False) is None
    preflight.check_output_dir("hdfs://nn/tables")   # remote outputs are Spark's to check
