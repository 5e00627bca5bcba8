"""kraftsman-demo, the first thing a new user runs: `--directory` on a folder whose quorum is running is refused before
anything is touched (a real controller holds it), and the dump-log lines it shows are whole records."""
from __future__ import annotations

import io

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.demo.local_quorum import LocalQuorum
from kraftsman.cli.demo.tool import record_line, run


def demo(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, list(argv), Environment(stdout=out, stderr=err), prog="kraftsman-demo")
    return status, out.getvalue(), err.getvalue()


def test_a_directory_whose_quorum_runs_is_refused_before_anything_is_written(tmp_path):
    quorum = LocalQuorum(tmp_path, 1)
    quorum.format()
    properties = quorum.config_path(1).read_bytes()
    quorum.start()
    try:
        quorum.wait_listening()
        status, out, err = demo(["--directory", str(tmp_path), "--voters", "1"])
        assert (status, out) == (1, "")
        assert err == (f"kraftsman-demo: {tmp_path} is in use: a quorum is running there (node-1 locked by a running "
                       "controller); stop it first, or give another --directory\n")
        assert quorum.config_path(1).read_bytes() == properties      # the running node's ports are untouched
        assert quorum.procs[1].poll() is None                        # and it still runs
    finally:
        quorum.stop()
    assert LocalQuorum(tmp_path, 1).running_nodes() == []            # stopped: the folder is free again


def test_a_record_line_is_shown_whole_without_its_batch_fields():
    payload = '{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{"partitionId":2,"topicId":"3UjEyqpjSPqa_VyZ' \
              'UBA3Jg","isr":[1001,1002],"leader":1001}}'
    line = (f"| offset: 29 CreateTime: 1795819309983 keySize: -1 valueSize: 59 sequence: -1 headerKeys: [] "
            f"payload: {payload}")
    assert record_line(line) == f"offset 29: {payload}"
    assert record_line("| offset: 3 CreateTime: 1 keySize: -1 valueSize: 0 sequence: -1 headerKeys: []") == (
        "| offset: 3 CreateTime: 1 keySize: -1 valueSize: 0 sequence: -1 headerKeys: []")   # no payload: as it is
