"""kafka-dump-log's command line and the general record path (any batch shape, Kafka's string decoder)."""
from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from kraftsman.cli import main as umbrella
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run
from kraftsman.storage.records import control
from kraftsman.storage.records.batch import build_batch

NAME = "00000000000000000007.log"


def dump(argv, cwd=".", fn=run) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(fn, argv, Environment(stdout=out, stderr=err, cwd=str(cwd)), prog="kafka-dump-log")
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [[], ["--help"]])
def test_help_goes_to_stderr_with_exit_1(argv):
    status, out, err = dump(argv)
    assert (status, out) == (1, "")
    assert err.startswith("This tool helps to parse a log file and dump its contents to the console, useful for "
                          "debugging a seemingly corrupt log segment.\nOption ")
    assert "--cluster-metadata-decoder" in err and "--skip-record-metadata" in err


def test_version_and_missing_files():
    from kraftsman.cli.common.boundary import package_version

    assert dump(["--version"]) == (0, f"kafka-dump-log (kraftsman) {package_version()}\n", "")
    status, out, err = dump(["--print-data-log"])
    assert (status, out) == (1, "") and err.startswith('Missing required argument "[files]"\nOption ')


def test_bad_flags_are_one_line_errors():
    status, out, err = dump(["--files", "x.log", "--max-bytes", "lots"])
    assert status == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_unknown_files_are_ignored_on_stderr(tmp_path):
    (tmp_path / "quorum-state").write_text("{}")
    # Kafka's lines; then, as nothing at all was dumped, kraftsman says so and exits 1 (issue 31; Kafka: 0)
    assert dump(["--files", "quorum-state,a//b/leader-epoch-checkpoint.txt/"], tmp_path) == (
        1, "Dumping quorum-state\nDumping a/b/leader-epoch-checkpoint.txt\n",
        "Ignoring unknown file quorum-state\nIgnoring unknown file a/b/leader-epoch-checkpoint.txt\n"
        "kafka-dump-log: no file was dumped: --files takes .log, .checkpoint, .index, .timeindex, .snapshot and "
        ".txnindex files (kafka-storage info reads meta.properties)\n")


def _topic_segment(tmp_path: Path) -> None:
    data = build_batch([(b"k1", b"hello", [("h1", b"x"), ("h2", None)]), (None, "h\u00e9".encode()), (b"k3", None)],
                       7, timestamp=100, producer_id=42, producer_epoch=3, base_sequence=10, transactional=True,
                       partition_leader_epoch=5)
    data += build_batch([(control.control_key(control.COMMIT), b"\x00\x00\x00\x00\x00\x09")], 10, timestamp=200,
                        producer_id=42, producer_epoch=3, transactional=True, control=True)
    data += build_batch([(None, b"late")], 11, timestamp=300, log_append_time=True, max_timestamp=999,
                        compression=1)
    (tmp_path / NAME).write_bytes(data)


def test_print_data_log_uses_the_string_decoder_and_prints_every_field(tmp_path):
    _topic_segment(tmp_path)
    status, out, err = dump(["--print-data-log", "--files", NAME], tmp_path)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == [f"Dumping {NAME}", "Log starting offset: 7"]
    assert lines[2].startswith("baseOffset: 7 lastOffset: 9 count: 3 baseSequence: 10 lastSequence: 12 producerId: 42 "
                               "producerEpoch: 3 partitionLeaderEpoch: 5 isTransactional: true isControl: false "
                               "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 100 size: ")
    assert lines[3:6] == [
        "| offset: 7 CreateTime: 100 keySize: 2 valueSize: 5 sequence: 10 headerKeys: [h1,h2] key: k1 payload: hello",
        "| offset: 8 CreateTime: 100 keySize: -1 valueSize: 3 sequence: 11 headerKeys: [] payload: h\u00e9",
        "| offset: 9 CreateTime: 100 keySize: 2 valueSize: -1 sequence: 12 headerKeys: [] key: k3"]
    assert " isControl: true " in lines[6]
    assert lines[7] == ("| offset: 10 CreateTime: 200 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
                        "endTxnMarker: COMMIT coordinatorEpoch: 9")
    assert " LogAppendTime: 999 " in lines[8] and " compresscodec: gzip " in lines[8]
    assert lines[9] == "| offset: 11 LogAppendTime: 999 keySize: -1 valueSize: 4 sequence: -1 headerKeys: [] payload: late"
    assert len(lines) == 10


def test_skip_record_metadata_keeps_key_and_payload_only(tmp_path):
    _topic_segment(tmp_path)
    status, out, err = dump(["--print-data-log", "--skip-record-metadata", "--files", NAME], tmp_path)
    records = [line for line in out.splitlines() if not line.startswith(("Dumping", "Log ", "baseOffset"))]
    assert records == ["| key: k1 payload: hello", " payload: h\u00e9", "| key: k3", "", " payload: late"]


def test_decoder_classes(tmp_path):
    (tmp_path / NAME).write_bytes(build_batch([(b"\x00\x00\x00\x05", b"\x00\x00\x00\x00\x00\x00\x01\x00")], 0))
    status, out, _ = dump(["--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder", "--value-decoder-class",
                           "org.apache.kafka.tools.api.LongDecoder", "--files", NAME], tmp_path)
    assert status == 0 and out.splitlines()[-1].endswith(" key: 5 payload: 256")
    status, _, err = dump(["--value-decoder-class", "com.example.Nope", "--files", NAME], tmp_path)
    assert status == 1 and "com.example.Nope" in err


def test_missing_log_file_fails_in_one_line(tmp_path):
    status, out, err = dump(["--files", NAME], tmp_path)
    assert status == 1 and out == f"Dumping {NAME}\nLog starting offset: 7\n"
    assert err == f"kafka-dump-log: {tmp_path / NAME} (No such file or directory)\n"


def test_umbrella_command_runs_the_same_tool(tmp_path):
    _topic_segment(tmp_path)
    assert dump(["dump-log", "--deep-iteration", "--files", NAME], tmp_path, umbrella.run) == \
        dump(["--deep-iteration", "--files", NAME], tmp_path)


def test_console_script_in_a_pipe_prints_no_progress(tmp_path):
    _topic_segment(tmp_path)
    script = Path(sys.executable).with_name("kafka-dump-log")
    if not script.exists():
        pytest.skip("kafka-dump-log console script not installed next to the interpreter")
    done = subprocess.run([str(script), "--deep-iteration", "--files", NAME], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == dump(["--deep-iteration", "--files", NAME], tmp_path)[1]


def test_output_json_is_a_synonym_of_jsonl_on_the_command_line_and_in_the_environment(tmp_path):
    _topic_segment(tmp_path)
    jsonl = dump(["--output", "jsonl", "--files", NAME], tmp_path)
    assert jsonl[0] == 0 and jsonl[1].startswith('{"kind":"file"')
    assert dump(["--output", "json", "--files", NAME], tmp_path) == jsonl
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, cwd=str(tmp_path), env={"KRAFTSMAN_DUMP_LOG_OUTPUT": "json"})
    assert run_command(run, ["--files", NAME], env, prog="kafka-dump-log") == 0
    assert out.getvalue() == jsonl[1]


@pytest.mark.parametrize("argv,error", [
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["-h"], "unrecognized arguments: -h"),                      # jopt-simple knows --help only
    (["--print"], "unrecognized arguments: --print"),             # Kafka's tools allow no abbreviations
    (["--files"], "argument --files: expected one argument"),
    (["--files", NAME, "extra"], "unrecognized arguments: extra"),
    (["--files", NAME, "--output", "xml"],
     "argument --output: invalid choice: 'xml' (choose from 'text', 'jsonl', 'yaml')"),
    (["--files", NAME, "--max-message-size", "99999999999"],
     "argument --max-message-size: Cannot parse argument '99999999999' of option max-message-size"),
])
def test_a_bad_command_line_is_one_line_and_exit_1(argv, error):
    assert dump(argv) == (1, "", f"kafka-dump-log: {error}\n")


def test_decoder_classes_take_an_optional_argument_as_jopt_simple_does(tmp_path):
    (tmp_path / NAME).write_bytes(build_batch([(b"\x00\x00\x00\x05", b"v")], 0))
    alone = dump(["--files", NAME, "--key-decoder-class"], tmp_path)         # the flag alone: StringDecoder
    assert alone[0] == 0 and alone[1].splitlines()[-1].endswith(" key: \x00\x00\x00\x05 payload: v")
    assert dump(["--key-decoder-class", "--files", NAME], tmp_path) == alone
    integer = dump(["--key-decoder-class=org.apache.kafka.tools.api.IntegerDecoder", "--files", NAME], tmp_path)
    assert integer[1].splitlines()[-1].endswith(" key: 5 payload: v")


def test_the_last_files_flag_wins_and_help_wins_over_everything(tmp_path):
    _topic_segment(tmp_path)
    assert dump(["--files", "nope.log", "--files", NAME], tmp_path) == dump(["--files", NAME], tmp_path)
    status, out, err = dump(["--files", NAME, "--version", "--help"], tmp_path)
    assert (status, out) == (1, "") and err.startswith("This tool helps to parse")
