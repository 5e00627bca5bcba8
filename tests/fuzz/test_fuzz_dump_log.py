"""Fuzz kafka-dump-log end to end, in process, on mutated segments, snapshots and segment side files.

Oracle: the exit status is 0 (all decoded) or 2 (something was corrupt, the rest printed), stderr
holds no traceback and no "unexpected" error from the cli's error boundary, and nothing escapes it.
"""
from __future__ import annotations

import io

import pytest
from fuzzkit import check, corpus, fuzz_inputs, fuzz_settings, real_files, regressions
from hypothesis import given
from hypothesis import strategies as st

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run

FILES = {
    "00000000000000000000.log": corpus("segment") + real_files("*.log", limit=8, max_size=1 << 14),
    "00000000000000000004-0000000001.checkpoint": corpus("snapshot") + real_files("*.checkpoint", limit=4),
    "00000000000000000000.index": corpus("index"),
    "00000000000000000000.timeindex": corpus("index"),
    "00000000000000000000.snapshot": corpus("index"),
    "00000000000000000000.txnindex": corpus("index"),
}
SIDE_FILES = (".index", ".timeindex", ".snapshot", ".txnindex")
FLAGS = [["--cluster-metadata-decoder"], ["--deep-iteration"], ["--print-data-log"],
         ["--cluster-metadata-decoder", "--output", "jsonl"], ["--index-sanity-check"], ["--verify-index-only"],
         ["--cluster-metadata-decoder", "--skip-record-metadata"], ["--max-bytes", "150", "--deep-iteration"],
         ["--max-message-size", "40", "--print-data-log"], ["--offsets-decoder"], ["--transaction-log-decoder"]]
NOT_YET = "is not implemented yet"  # the offsets and transaction-log decoders before they land: a clean error


def dump(folder, name: str, data: bytes, flags: list[str]) -> tuple[int, str]:
    """Run kafka-dump-log on `data` saved as `name`; check the status and stderr; return both."""
    if name.endswith(SIDE_FILES):  # Kafka's tool reads the segment (and offset index) next to a side file
        (folder / "00000000000000000000.log").write_bytes(corpus("segment")[0])
        (folder / "00000000000000000000.index").write_bytes(corpus("index")[0])
    (folder / name).write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, [*flags, "--files", name], Environment(stdout=out, stderr=err, cwd=str(folder)),
                         prog="kafka-dump-log")
    assert "Traceback" not in err.getvalue() and "kafka-dump-log: unexpected " not in err.getvalue(), err.getvalue()
    assert status in (0, 2) or (status == 1 and NOT_YET in err.getvalue()), (status, err.getvalue())
    return status, out.getvalue()


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_seed_dumps_cleanly(tmp_path, name):
    for data in FILES[name]:
        assert dump(tmp_path, name, data, FLAGS[0])[0] in (0, 2)


@fuzz_settings(150)
@given(data=st.data())
def test_dump_log_on_mutated_files(tmp_path_factory, data):
    name = data.draw(st.sampled_from(sorted(FILES)))
    raw = data.draw(fuzz_inputs(FILES[name], max_size=200))
    flags = data.draw(st.sampled_from(FLAGS))
    check(lambda d: dump(tmp_path_factory.getbasetemp(), name, d, flags), raw, ())


@pytest.mark.parametrize("name,data", [pytest.param(n, d, id=n) for n, d in regressions("dump_log")])
def test_dump_log_regressions(tmp_path, name, data):
    suffix = name.split(".", 1)[1].removesuffix(".bin")
    for flags in FLAGS:
        dump(tmp_path, f"00000000000000000000.{suffix}", data, flags)
