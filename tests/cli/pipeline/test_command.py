"""The pipeline command without Spark (usage, the install hint with exit 69) and its pure helpers:
argument expansion, batch-aligned byte ranges, task balancing and the union row layout."""
from __future__ import annotations

import io
import sys

import pytest

from kraftsman.cli import main as umbrella
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.status import ExitStatus
from kraftsman.cli.pipeline import inputs, tables
from kraftsman.cli.pipeline.command import run
from kraftsman.storage.records.batch import build_batch


def call(argv, **env_kw):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, argv, Environment(stdout=out, stderr=err, **env_kw), prog="kafka-metadata-export")
    return status, out.getvalue(), err.getvalue()


def test_help_lists_the_flags():
    status, out, _ = call(["--help"])
    assert status == 0
    for flag in ("--output-dir", "--format", "--master", "--conf", "--mode", "--report", "--split-bytes", "--verbose"):
        assert flag in out


def test_the_umbrella_dispatches_pipeline():
    out = io.StringIO()
    assert umbrella.run(["pipeline", "--help"], Environment(stdout=out, stderr=io.StringIO())) == 0
    assert "kafka-metadata-export" in out.getvalue()


@pytest.mark.parametrize("argv", [[], ["x.log"], ["-o", "out"], ["x.log", "-o", "out", "--conf", "novalue"],
                                  ["x.log", "-o", "out", "--format", "csv"], ["x.log", "-o", "out", "--mode", "merge"]])
def test_usage_errors_are_one_line_with_64(argv):
    """One error line (after the usage line the suite prints for a bad flag or value), exit 64."""
    status, out, err = call(argv)
    assert (status, out) == (ExitStatus.USAGE, "")
    lines = [line for line in err.splitlines() if not line.startswith("usage: ")]
    assert len(lines) == 1 and lines[0].startswith("kafka-metadata-export"), err


def test_without_pyspark_the_command_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark now raises ImportError
    status, out, err = call([str(tmp_path), "-o", str(tmp_path / "out")])
    assert status == ExitStatus.UNAVAILABLE == 69
    assert "pip install 'kraftsman[spark]'" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_expand_takes_files_directories_globs_and_uris(tmp_path):
    log_dir = tmp_path / "c1" / "__cluster_metadata-0"
    log_dir.mkdir(parents=True)
    for name in ("00000000000000000000.log", "00000000000000000000.index", "00000000000000000005-0000000001.checkpoint"):
        (log_dir / name).write_bytes(b"")
    (tmp_path / "c1" / "bootstrap.checkpoint").write_bytes(b"")
    files, remote = inputs.expand([str(tmp_path), str(log_dir / "*.log"), "hdfs://nn/logs", "file://" + str(log_dir)])
    assert remote == ["hdfs://nn/logs", "file://" + str(log_dir)]
    assert sorted(p.rsplit("/", 1)[1] for p in files) == [
        "00000000000000000000.log", "00000000000000000005-0000000001.checkpoint", "bootstrap.checkpoint"]
    assert inputs.expand([str(tmp_path / "missing.log")])[0] == [str(tmp_path / "missing.log")]


def test_batch_ranges_cut_between_batches(tmp_path):
    batches = [build_batch([(None, bytes(100))] * 10, 10 * i) for i in range(10)]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    size = len(batches[0])
    ranges = inputs.batch_ranges(str(path), 3 * size)
    assert ranges == [(0, 3 * size), (3 * size, 6 * size), (6 * size, 9 * size), (9 * size, None)]
    path.write_bytes(b"".join(batches[:4]) + b"\x00" * 8 + b"\xff\xff\xff\xff" + b"".join(batches[4:]))
    assert inputs.batch_ranges(str(path), size) == [(0, size), (size, 2 * size), (2 * size, 3 * size),
                                                    (3 * size, 4 * size), (4 * size, None)]


def test_balance_spreads_bytes_evenly():
    tasks = [inputs.Task(f"f{i}", f"f{i}", size=s) for i, s in enumerate([90, 50, 40, 30, 30, 20, 20, 10])]
    groups = inputs.balance(tasks, 3)
    assert sorted(sum(t.size for t in g) for g in groups) == [90, 100, 100]
    assert sorted(t.source for g in groups for t in g) == sorted(t.source for t in tasks)
    assert len(inputs.balance(tasks[:2], 8)) == 2


def test_union_rows_put_each_value_under_its_column():
    union = tables.names(tables.union_columns())
    convert = tables.union_converters()
    for table, columns in tables.BASE_TABLES.items():
        row = tuple(f"{table}.{name}" for name in tables.names(columns))
        full = dict(zip(union, convert[table](row)))
        assert full.pop("table") == table
        assert {k: v for k, v in full.items() if v is not None} == dict(zip(tables.names(columns), row))


def test_failure_line_names_the_python_workers_exception():
    from kraftsman.cli.pipeline.command import failure_line

    text = ("\n  An exception was thrown from the Python worker. Please see the stack trace below.\n"
            "Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n"
            "    raise ValueError('boom')\nValueError: boom\n\tat org.apache.spark.Foo(Foo.java:1)\n")
    assert failure_line(text, "PythonException") == "ValueError: boom"
    assert failure_line("Java gateway process exited\nmore", "X") == "Java gateway process exited"
    assert failure_line("", "PythonException") == "PythonException"
