"""kafka-dump-log's options (Kafka 3.9's DumpLogSegmentsOptions, jopt-simple): texts, implications, Java's strings.

Rules:
- Pure data and functions, no click: the typer app (tool.py) declares the flags with the help texts of
  OPTIONS, and `dump_options(values)` turns what it parsed into DumpOptions with Kafka's implications:
  any decoder implies --print-data-log, which implies --deep-iteration. Decoder precedence: offsets >
  transaction log > cluster metadata > remote log metadata > share group state (4.x) > classes; the remote log
  metadata and share group state decoders are not supported (one-line error).
- OPTIONS are Kafka 3.9's; release_options(release) gives 4.x's list (a flag added in 4.0, 4.2's words).
- `help_text()` is jopt-simple's table of OPTIONS (common/jopt_help.py renders it), printed on stderr by the app.
- Strings read as Java reads them: `java_split` (String.split(",")), `java_path` (java.io.File's path),
  `java_int` (Integer.parseInt, jopt-simple's words when it fails).
- Beyond Kafka (additive): --output text|jsonl|yaml (`json` accepted for jsonl; yaml: the same objects, one YAML
  document each).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

DESCRIPTION = ("This tool helps to parse a log file and dump its contents to the console, useful for debugging "
               "a seemingly corrupt log segment.")
MISSING_FILES = 'Missing required argument "[files]"'
STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"
INT_MAX = 2 ** 31 - 1
MAX_MESSAGE_SIZE = 5242880
OUTPUTS = ("text", "jsonl", "yaml")
OUTPUT_SYNONYMS = {"json": "jsonl"}

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
    ("--output", "String: text|jsonl|yaml", "kraftsman: output format; jsonl prints one JSON object per batch and "
                                            "per record (schema: kraftsman/cli/schemas/dump-log-jsonl.schema.json), "
                                            "yaml the same objects as YAML documents. (default: text)"),
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
# What Kafka 4.x's DumpLogSegmentsOptions changed: a flag added in 4.0, and 4.2's words for one (help_text(release)).
SHARE_GROUP_STATE_DECODER = "--share-group-state-decoder"
OPTIONS_4X = {SHARE_GROUP_STATE_DECODER: (None, "If set, log data will be parsed as share group state data from the "
                                                "__share_group_state topic.")}
HELP_4_2 = {"--skip-record-metadata": "Skip metadata when printing records. This flag also skips control records."}
# jopt-simple's withOptionalArg: the flag alone (or before another option) means STRING_DECODER.
OPTIONAL_ARGUMENT = frozenset({"--key-decoder-class", "--value-decoder-class"})
HELP = {flag: text for flag, _, text in OPTIONS}
ARGUMENT = {flag: f"[{meta}]" if flag in OPTIONAL_ARGUMENT else meta for flag, meta, _ in OPTIONS}


@dataclass
class DumpOptions:
    """What the command line asked for, with Kafka's implications applied."""

    files: list[str]
    print_data_log: bool
    deep_iteration: bool
    decoder: str                # "offsets" | "transaction-log" | "cluster-metadata" | "remote-log-metadata" |
    #                             "share-group-state" (4.x) | "string"
    key_decoder: str
    value_decoder: str
    skip_record_metadata: bool
    verify_index_only: bool
    index_sanity_check: bool
    max_message_size: int
    max_bytes: int
    output: str
    release: str = "3.9"        # the Kafka release whose texts are printed (KRAFTSMAN_KAFKA_VERSION)


def release_options(release: str = "3.9") -> list[tuple]:
    """Return OPTIONS as Kafka `release` lists them: 4.0 added --share-group-state-decoder, 4.2 reworded
    --skip-record-metadata."""
    options = list(OPTIONS)
    if release != "3.9":
        options += [(flag, meta, text) for flag, (meta, text) in OPTIONS_4X.items()]
    if release == "4.2":
        options = [(flag, meta, HELP_4_2.get(flag, text)) for flag, meta, text in options]
    return sorted(options, key=lambda option: option[0])


def help_text(release: str = "3.9") -> str:
    """Return the usage table printed on stderr (jopt-simple's BuiltinHelpFormatter layout) for `release`."""
    from ..common.jopt_help import option_display, render

    return render([(option_display(flag, meta, flag in OPTIONAL_ARGUMENT), text)
                   for flag, meta, text in release_options(release)])


def with_optional_arguments(argv: list[str]) -> list[str]:
    """Return `argv` with STRING_DECODER written after a decoder-class flag that has no argument of its own
    (jopt-simple's optional argument: the next word is taken unless it is missing or an option)."""
    out = []
    for i, word in enumerate(argv):
        out.append(word)
        following = argv[i + 1] if i + 1 < len(argv) else None
        if word in OPTIONAL_ARGUMENT and (following is None or following.startswith("-")):
            out[-1] = f"{word}={STRING_DECODER}"
    return out


def dump_options(v: dict) -> DumpOptions:
    """Return the DumpOptions of the parsed values `v` (keyed by option name without dashes, '-' as '_')."""
    printing = bool(v["print_data_log"] or v["offsets_decoder"] or v["transaction_log_decoder"]
                    or v["cluster_metadata_decoder"] or v["remote_log_metadata_decoder"]
                    or v.get("share_group_state_decoder") or v["key_decoder_class"] or v["value_decoder_class"])
    return DumpOptions(
        files=java_split(v["files"]), print_data_log=printing, deep_iteration=bool(v["deep_iteration"] or printing),
        decoder=_decoder(v), key_decoder=v["key_decoder_class"] or STRING_DECODER,
        value_decoder=v["value_decoder_class"] or STRING_DECODER,
        skip_record_metadata=bool(v["skip_record_metadata"]), verify_index_only=bool(v["verify_index_only"]),
        index_sanity_check=bool(v["index_sanity_check"]), max_message_size=v["max_message_size"],
        max_bytes=v["max_bytes"], output=OUTPUT_SYNONYMS.get(v["output"], v["output"]))


def _decoder(v: dict) -> str:
    for name in ("offsets", "transaction_log", "cluster_metadata", "remote_log_metadata", "share_group_state"):
        if v.get(f"{name}_decoder"):
            return name.replace("_", "-")
    return "string"


def java_split(text: str) -> list[str]:
    """Split like Java's String.split(","): no trimming, trailing empty strings dropped."""
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_int(text: str, flag: str) -> int:
    """Return `text` as Integer.parseInt reads it; ValueError in jopt-simple's words when it cannot."""
    if re.fullmatch(r"[-+]?\d+", text) and -2 ** 31 <= int(text) < 2 ** 31:
        return int(text)
    raise ValueError(f"Cannot parse argument '{text}' of option {flag.lstrip('-')}")
