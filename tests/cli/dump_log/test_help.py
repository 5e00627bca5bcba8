"""kafka-dump-log --help: jopt-simple's BuiltinHelpFormatter(80, 2) layout.

Independent source: KIP-1057 (Kafka 3.9, adds --remote-log-metadata-decoder) shows the real help rows of
that option, with the description column starting at column 37 and padded to 43 columns. The other
expectations are derived by hand from jopt-simple's Rows/Columns: option column = widest option
(at most 39), description column = 80 - option column - 2, continuation pieces indented by 2, a piece
closed when the next word (with its trailing spaces) would overflow.
"""
from __future__ import annotations

import io

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.jopt_help import option_display, pieces, render, words
from kraftsman.cli.dump_log.options import help_text
from kraftsman.cli.dump_log.tool import run

KIP_1057_ROWS = [  # as printed on the KIP page (trailing spaces of the last row trimmed there)
    "--remote-log-metadata-decoder        If set, log data will be parsed as         ",
    "                                       TopicBasedRemoteLogMetadataManager       ",
    "                                       (RLMM) metadata records. Instead, the    ",
    "                                       value-decoder-class option can be used   ",
    "                                       if a custom RLMM implementation is       ",
    "                                       configured.",
]


def test_remote_log_metadata_rows_match_kip_1057():
    lines = help_text().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("--remote-log-metadata-decoder"))
    assert [line.rstrip() for line in lines[start:start + 6]] == [row.rstrip() for row in KIP_1057_ROWS]
    assert lines[start:start + 5] == KIP_1057_ROWS[:5]


def test_every_row_is_padded_to_80_columns_and_sorted():
    lines = help_text().split("\n")
    assert {len(line) for line in lines} == {80}
    assert lines[0].startswith("Option" + " " * 31 + "Description")  # option column 35 + separator 2
    assert lines[1].startswith("------" + " " * 31 + "-----------")
    flags = [line.split()[0] for line in lines[2:] if line.startswith("--")]
    assert flags == sorted(flags) and "--files" in flags and "--version" in flags


def test_option_cells():
    assert option_display("--files", "String: file1, file2, ...") == "--files <String: file1, file2, ...>"
    assert option_display("--key-decoder-class", "String", optional=True) == "--key-decoder-class [String]"
    assert option_display("--help", None) == "--help"


def test_words_break_after_spaces_and_inner_hyphens():
    assert words("set if print-data-log is") == ["set ", "if ", "print-", "data-", "log ", "is"]
    # Java's line BreakIterator also breaks after a leading "--" and after a period inside a word, as kafka-topics'
    # help shows ("... altering topic configs with a --" / "bootstrap-server option", "symbols; e." / "g. ...")
    assert words("--files <String: x>") == ["--", "files ", "<String: ", "x>"]
    assert words("with a --create e.g. x.y 1.5") == ["with ", "a ", "--", "create ", "e.", "g. ", "x.", "y ", "1.5"]
    assert words("\tfollower.replication") == ["\t", "follower.", "replication"]
    assert words("file(s). (default: 5)") == ["file(s). ", "(default: ", "5)"]


def test_pieces_wrap_with_two_space_continuations():
    # width 43: "If set, uses deep instead of shallow " (37) + "iteration. " (11) overflows; the second
    # piece "  iteration. Automatically set if " (34) takes "print-" (40) but not "data-" (45).
    text = "If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled."
    assert pieces(text, 43) == ["If set, uses deep instead of shallow", "  iteration. Automatically set if print-",
                                "  data-log is enabled."]


def test_render_narrow_table():
    assert render([("--a", "one two three")]).split("\n") == [
        "Option  Description  ", "------  -----------  ", "--a     one two three"]


def test_cli_help_is_description_then_table():
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, ["--help"], Environment(stdout=out, stderr=err), prog="kafka-dump-log")
    assert status == 1 and out.getvalue() == ""
    assert err.getvalue() == ("This tool helps to parse a log file and dump its contents to the console, useful for "
                              "debugging a seemingly corrupt log segment.\n" + help_text() + "\n")


def _dump_log(argv, release=None):
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, env={"KRAFTSMAN_KAFKA_VERSION": release} if release else {})
    return run_command(run, argv, env, prog="kafka-dump-log"), out.getvalue(), err.getvalue()


def _rows_of(table: str, flag: str) -> str:
    """Return the description of `flag` in a jopt-simple table, its continuation rows joined."""
    lines = table.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(flag + " "))
    rows = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith(" "):
            break
        rows.append(line)
    return " ".join(" ".join(row.split()) for row in rows).removeprefix(flag + " ")


def test_help_lists_what_each_release_lists():
    """Kafka 4.0's DumpLogSegmentsOptions added --share-group-state-decoder; 4.2 reworded --skip-record-metadata
    (DumpLogSegments.scala at 4.0.0 and 4.2.0)."""
    tables = {release: _dump_log(["--help"], release)[2] for release in (None, "4.0", "4.1", "4.2")}
    assert "--share-group-state-decoder" not in tables[None]
    for release in ("4.0", "4.1", "4.2"):
        assert _rows_of(tables[release], "--share-group-state-decoder") == (
            "If set, log data will be parsed as share group state data from the __share_group_state topic.")
    for release in (None, "4.0", "4.1"):
        assert _rows_of(tables[release], "--skip-record-metadata") == (
            "Whether to skip printing metadata for each record.")
    assert _rows_of(tables["4.2"], "--skip-record-metadata") == (
        "Skip metadata when printing records. This flag also skips control records.")
    flags = [line.split()[0] for line in tables["4.2"].split("\n") if line.startswith("--")]
    assert flags == sorted(flags) and {len(line) for line in tables["4.2"].split("\n")[1:-1]} == {80}


def test_the_share_group_state_decoder_is_a_4x_flag_kraftsman_refuses_to_guess(tmp_path):
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(b"")
    status, _, err = _dump_log(["--share-group-state-decoder", "--files", str(segment)])
    assert status == 1 and err == "kafka-dump-log: unrecognized arguments: --share-group-state-decoder\n"
    status, out, err = _dump_log(["--share-group-state-decoder", "--files", str(segment)], "4.2")
    assert status == 1 and err.startswith("kafka-dump-log: --share-group-state-decoder is not supported by kraftsman")
    assert err.count("\n") == 1
