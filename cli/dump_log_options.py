"""kafka-dump-log's options (DumpLogSegmentsOptions, jopt-simple) parsed with argparse.

Rules:
- Kafka's flags, help texts, defaults and implications: any decoder implies --print-data-log, which
  implies --deep-iteration. Decoder precedence: offsets > transaction log > cluster metadata >
  remote log metadata (not supported: one-line error) > classes.
- No arguments or --help: description and usage on stderr, exit 1. --version: the version, exit 0.
- Beyond Kafka (additive): --output text|jsonl.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

from .common import ExitStatus, ToolError
from .env_overrides import with_environment

DESCRIPTION = ("This tool helps to parse a log file and dump its contents to the console, useful for debugging "
               "a seemingly corrupt log segment.")
KAFKA_VERSION = "3.9.0"
STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"
INT_MAX = 2 ** 31 - 1

# (flag, argument display or None, help with jopt-simple's "(default: ..)") sorted by name, as jopt-simple
# lists them; Kafka 3.9's DumpLogSegmentsOptions plus CommandDefaultOptions' --help/--version.
_DECODER_CLASS = ("If set, used to deserialize the {}. This class should implement org.apache.kafka.tools.api.Decoder "
                  "trait. Custom jar should be available in kafka/libs directory. (default: " + STRING_DECODER + ")")
OPTIONS = (
    ("--cluster-metadata-decoder", None, "If set, log data will be parsed as cluster metadata records."),
    ("--deep-iteration", None, "If set, uses deep instead of shallow iteration. Automatically set if "
                               "print-data-log is enabled."),
    ("--files", "String: file1, file2, ...", "REQUIRED: The comma separated list of data and index log files to "
                                             "be dumped."),
    ("--help", None, "Print usage information."),
    ("--index-sanity-check", None, "If set, just checks the index sanity without printing its content. This is "
                                   "the same check that is executed on broker startup to determine if an index "
                                   "needs rebuilding or not."),
    ("--key-decoder-class", "String", _DECODER_CLASS.format("keys")),
    ("--max-bytes", "Integer: size", "Limit the amount of total batches read in bytes avoiding reading the "
                                     "whole .log file(s). (default: 2147483647)"),
    ("--max-message-size", "Integer: size", "Size of largest message. (default: 5242880)"),
    ("--offsets-decoder", None, "If set, log data will be parsed as offset data from the __consumer_offsets "
                                "topic."),
    ("--output", "String: text|jsonl", "kraftsman: output format; jsonl prints one JSON object per batch and per "
                                       "record (schema: kraftsman/cli/schemas/dump-log-jsonl.schema.json). "
                                       "(default: text)"),
    ("--print-data-log", None, "If set, printing the messages content when dumping data logs. Automatically "
                               "set if any decoder option is specified."),
    ("--remote-log-metadata-decoder", None, "If set, log data will be parsed as TopicBasedRemoteLogMetadataManager "
                                            "(RLMM) metadata records. Instead, the value-decoder-class option can "
                                            "be used if a custom RLMM implementation is configured."),
    ("--skip-record-metadata", None, "Whether to skip printing metadata for each record."),
    ("--transaction-log-decoder", None, "If set, log data will be parsed as transaction metadata from the "
                                        "__transaction_state topic."),
    ("--value-decoder-class", "String", _DECODER_CLASS.format("messages")),
    ("--verify-index-only", None, "If set, just verify the index log without printing its content."),
    ("--version", None, "Display Kafka version."),
)
OPTIONAL_ARGUMENT = frozenset({"--key-decoder-class", "--value-decoder-class"})


@dataclass
class DumpOptions:
    """What the command line asked for, with Kafka's implications applied."""

    files: list[str]
    print_data_log: bool
    deep_iteration: bool
    decoder: str                # "offsets" | "transaction-log" | "cluster-metadata" | "remote-log-metadata" | "string"
    key_decoder: str
    value_decoder: str
    skip_record_metadata: bool
    verify_index_only: bool
    index_sanity_check: bool
    max_message_size: int
    max_bytes: int
    output: str


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # jopt-simple fails with one line; keep Kafka's exit code 1
        raise ToolError(message, ExitStatus.ERROR)


def help_text() -> str:
    """Return the usage table printed on stderr (jopt-simple's BuiltinHelpFormatter layout)."""
    from .dump_log_help import option_display, render

    return render([(option_display(flag, meta, flag in OPTIONAL_ARGUMENT), text) for flag, meta, text in OPTIONS])


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kafka-dump-log", add_help=False)
    for flag, meta, _ in OPTIONS:
        if flag in OPTIONAL_ARGUMENT:  # jopt-simple's withOptionalArg: the flag alone means the default
            p.add_argument(flag, action="append", nargs="?", const=STRING_DECODER)
        elif flag in ("--files", "--output"):
            p.add_argument(flag, action="append")
        elif flag in ("--max-bytes", "--max-message-size"):
            p.add_argument(flag, action="append", type=_java_int(flag))
        else:
            p.add_argument(flag, action="store_true")
    return p


def _java_int(flag: str):
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"Cannot parse argument '{text}' of option {flag[2:]}") from None
        if not -2 ** 31 <= value < 2 ** 31:
            raise argparse.ArgumentTypeError(f"Cannot parse argument '{text}' of option {flag[2:]}")
        return value
    return convert


def _decoder(ns) -> str:
    if ns.offsets_decoder:
        return "offsets"
    if ns.transaction_log_decoder:
        return "transaction-log"
    if ns.cluster_metadata_decoder:
        return "cluster-metadata"
    if ns.remote_log_metadata_decoder:
        return "remote-log-metadata"
    return "string"


def parse(argv: list[str], environ=None) -> DumpOptions | str:
    """Parse `argv` (flags left out come from `environ`'s KRAFTSMAN_DUMP_LOG_*); return DumpOptions, or
    "help" / "version" / "missing-files" (nothing to dump)."""
    ns = with_environment(_parser(), "dump_log", argv, environ or {}).parse_args(argv)
    if not argv or ns.help:
        return "help"
    if ns.version:
        return "version"
    if not ns.files:
        return "missing-files"
    printing = (ns.print_data_log or ns.offsets_decoder or ns.transaction_log_decoder
                or ns.cluster_metadata_decoder or ns.remote_log_metadata_decoder or bool(ns.key_decoder_class)
                or bool(ns.value_decoder_class))
    output = (ns.output or ["text"])[-1]
    if output not in ("text", "jsonl"):
        raise ToolError(f"--output must be text or jsonl, not {output!r}")
    return DumpOptions(
        files=java_split(ns.files[-1]), print_data_log=printing, deep_iteration=ns.deep_iteration or printing,
        decoder=_decoder(ns), key_decoder=(ns.key_decoder_class or [STRING_DECODER])[-1],
        value_decoder=(ns.value_decoder_class or [STRING_DECODER])[-1],
        skip_record_metadata=ns.skip_record_metadata, verify_index_only=ns.verify_index_only,
        index_sanity_check=ns.index_sanity_check, max_message_size=(ns.max_message_size or [5242880])[-1],
        max_bytes=(ns.max_bytes or [INT_MAX])[-1], output=output)


def java_split(text: str) -> list[str]:
    """Split like Java's String.split(","): no trimming, trailing empty strings dropped."""
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with Kafka's help texts and metavars attached (man page, completions, help tests)."""
    parser = _parser()
    parser.description = DESCRIPTION
    texts = {flag: (meta, text) for flag, meta, text in OPTIONS}
    for action in parser._actions:
        meta, action.help = texts[action.option_strings[0]]
        action.metavar = meta
    return parser
