"""Render a command's model (docs/model.py's Node) as a roff man page, section 1.

Rules:
- Sections: NAME, SYNOPSIS, DESCRIPTION, COMMANDS (when the tool has sub-commands), OPTIONS,
  EXIT STATUS, ENVIRONMENT, EXAMPLES, SEE ALSO; no date in the header, so output is reproducible.
- Exit status meanings come from the README's "Exit codes" table, for every code in ExitStatus.
- All text is escaped for roff (backslashes, hyphens, leading dots and quotes).
"""
from __future__ import annotations

import re
from pathlib import Path

VERSION = "0.1.0"
COMMON_ENVIRONMENT = (
    ("KRAFTSMAN_KAFKA_VERSION", "The Kafka release the tool speaks for where 3.9 and 4.x differ (defaults, texts, "
                                "the controller's rules): 3.9 (the default), 4.0, 4.1 or 4.2; a connection "
                                "profile's kafka-version when unset. --version shows it."),
    ("KRAFTSMAN_DEBUG", "When set to anything but 0, errors show a Python traceback (as --debug does)."),
    ("NO_COLOR", "When set and not empty, no colour is used (as --no-color does); colour is only ever used on "
                 "a terminal."),
)
GLOBAL_OPTIONS = (
    ("--version", "Print the version and exit (first argument)."),
    ("--debug", "Show a Python traceback instead of the one-line error."),
    ("--no-color", "Use no colour (as NO_COLOR)."),
    ("--quiet", "Print nothing on standard output; the exit status tells the result."),
    ("--verbose", "Trace each request a client sends, and its answer, on standard error."),
)
SCHEMA_ENVIRONMENT = (
    ("KRAFTSMAN_CACHE_DIR", "Folder caching parsed message schemas (default $XDG_CACHE_HOME/kraftsman, "
                            "else ~/.cache/kraftsman); off disables the cache."),
)
ENVIRONMENT = {
    "kafka-storage": SCHEMA_ENVIRONMENT,
    "kafka-dump-log": SCHEMA_ENVIRONMENT,
    "kafka-metadata-shell": SCHEMA_ENVIRONMENT + (
        ("KRAFTSMAN_SHELL_HISTORY", "History file of the interactive shell "
                                    "(default ~/.kafka-metadata-shell_history)."),),
    "kafka-controller": SCHEMA_ENVIRONMENT,
}
EXAMPLES = {
    "kraftsman": (("Format storage through the umbrella command:",
                   "kraftsman storage format -c server.properties -t MkU3OEVBNTcwNTJENDM2Qg"),
                  ("Print the version:", "kraftsman --version")),
    "kafka-storage": (("Generate a cluster id:", "kafka-storage random-uuid"),
                      ("Format a controller as a single-node dynamic quorum:",
                       "kafka-storage format -c controller.properties -t MkU3OEVBNTcwNTJENDM2Qg --standalone"),
                      ("Check the directories in a script:", "kafka-storage info -c server.properties --output json")),
    "kafka-dump-log": (("Decode a metadata log segment:",
                        "kafka-dump-log --cluster-metadata-decoder --files 00000000000000000000.log"),
                       ("One JSON object per batch and record:",
                        "kafka-dump-log --cluster-metadata-decoder --output jsonl --files 00000000000000000000.log")),
    "kafka-metadata-shell": (("Browse a running quorum as a read-only observer:",
                              "kafka-metadata-shell --bootstrap-controller localhost:9093"),
                             ("Browse a snapshot interactively:",
                              "kafka-metadata-shell --snapshot 00000000000000000100-0000000001.checkpoint"),
                             ("List the topics of a log directory as of offset 200:",
                              "kafka-metadata-shell --directory /var/lib/kafka --offset 200 ls /image/topics")),
    "kafka-features": (("Show the feature levels of a cluster:", "kafka-features --bootstrap-controller localhost:9093 "
                                                                  "describe"),
                       ("Check, then make, the upgrade to a release after a rolling upgrade:",
                        "kafka-features --bootstrap-controller localhost:9093 upgrade --release-version 3.9-IV0 "
                        "--dry-run"),
                       ("List the feature levels a release sets:", "kafka-features --bootstrap-server localhost:9092 "
                                                                   "version-mapping --release-version 3.8")),
    "kafka-cluster": (("Unregister a dead broker from a playbook, safely re-runnable:",
                       "kafka-cluster unregister --bootstrap-controller localhost:9093 --id 7 --require-fenced "
                       "--missing-ok --output json"),
                      ("List every broker endpoint, fenced ones too:",
                       "kafka-cluster list-endpoints --bootstrap-server localhost:9092 --include-fenced-brokers"),
                      ("Use a connection profile (kraftsman profile create prod -C localhost:9093 --use):",
                       "kafka-cluster cluster-id --profile prod")),
    "kafka-metadata-quorum": (("Show the leader, high watermark and lag of the quorum:",
                               "kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --status"),
                              ("Show each voter's and observer's replication, with readable times:",
                               "kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --replication "
                               "--human-readable")),
    "kafka-topics": (("Create a topic, or find it already there, from a playbook:",
                      "kafka-topics --bootstrap-server localhost:9092 --create --topic orders --partitions 6 "
                      "--replication-factor 3 --if-not-exists --output json"),
                     ("Show the partitions short of replicas during a rolling restart:",
                      "kafka-topics --bootstrap-server localhost:9092 --describe --under-replicated-partitions"),
                     ("Delete the topics a regular expression matches:",
                      "kafka-topics --bootstrap-server localhost:9092 --delete --topic 'test-.*'")),
    "kafka-configs": (("Show a topic's dynamic configs with their synonyms:",
                       "kafka-configs --bootstrap-server localhost:9092 --describe --entity-type topics --entity-name "
                       "orders"),
                      ("Set a cluster-wide broker default through the controllers:",
                       "kafka-configs --bootstrap-controller localhost:9093 --alter --entity-type brokers "
                       "--entity-default --add-config log.retention.ms=604800000"),
                      ("Give a user a SCRAM credential from a playbook (exit 0 changed):",
                       "kafka-configs --bootstrap-server localhost:9092 --alter --entity-type users --entity-name "
                       "alice --add-config 'SCRAM-SHA-256=[password=secret]' --output json"),
                      ("Limit a client's produce rate, or find it already so (exit 6 with --output json):",
                       "kafka-configs --bootstrap-server localhost:9092 --alter --entity-type clients --entity-name "
                       "app --add-config producer_byte_rate=1048576 --output json")),
    "kafka-acls": (("Let a user read a topic:",
                    "kafka-acls --bootstrap-server localhost:9092 --add --allow-principal User:alice --operation Read "
                    "--topic orders"),
                   ("List the ACLs that affect every topic starting with t-:",
                    "kafka-acls --bootstrap-server localhost:9092 --list --topic t- --resource-pattern-type match"),
                   ("Remove a producer's ACLs without a question, from a playbook (exit 6: none were there):",
                    "kafka-acls --bootstrap-server localhost:9092 --remove --force --allow-principal User:app "
                    "--producer --topic orders --output json")),
    "kafka-broker-api-versions": (("Show the API versions each broker speaks, and which Kafka 3.9's client uses:",
                                   "kafka-broker-api-versions --bootstrap-server localhost:9092"),
                                  ("The controllers' own API lists, for a script:",
                                   "kafka-broker-api-versions --bootstrap-controller localhost:9093 --output json")),
    "kafka-leader-election": (("Move every partition's leadership back to its preferred replica after a rolling "
                               "restart:", "kafka-leader-election --bootstrap-server localhost:9092 --election-type "
                                           "preferred --all-topic-partitions"),
                              ("Elect a leader for a partition whose in-sync replicas are all gone (may lose data):",
                               "kafka-leader-election --bootstrap-server localhost:9092 --election-type unclean "
                               "--topic orders --partition 3")),
    "kafka-reassign-partitions": (("Propose moving two topics onto brokers 4, 5 and 6:",
                                   "kafka-reassign-partitions --bootstrap-server localhost:9092 --generate "
                                   "--topics-to-move-json-file topics.json --broker-list 4,5,6"),
                                  ("Start a plan with its moves throttled to 10 MB/s:",
                                   "kafka-reassign-partitions --bootstrap-server localhost:9092 --execute "
                                   "--reassignment-json-file plan.json --throttle 10000000"),
                                  ("Check it from a playbook (exit 75 while in progress, 0 once done and the "
                                   "throttles cleared):", "kafka-reassign-partitions --bootstrap-server "
                                   "localhost:9092 --verify --reassignment-json-file plan.json --output json")),
    "kafka-metadata-export": (("Decode a fleet of metadata logs into Parquet tables with local Spark:",
                               "kafka-metadata-export -o tables /var/lib/kafka/meta"),),
    "kafka-controller": (("Run a controller in the foreground:", "kafka-controller -c controller.properties"),),
    "kraftsman-demo": (("Run the demo and keep its files:", "kraftsman-demo --directory /tmp/kraftsman-demo"),),
}


def _flag_environment(name: str) -> tuple[tuple[str, str], ...]:
    """Describe the KRAFTSMAN_<TOOL>_<FLAG> variables (and KAFKA_* where server properties are read)."""
    from ..common.env_overrides import SERVER_PROPERTIES_TOOLS, TOOLS

    if name not in TOOLS:
        return ()
    prefix = f"KRAFTSMAN_{TOOLS[name].upper()}_"
    found = ((f"{prefix}<FLAG>", f"Any long option --some-flag not given on the command line is read from "
                                 f"{prefix}SOME_FLAG (flag > environment > config file). Flags without a value "
                                 "take 1/true/yes/on or 0/false/no/off; repeatable flags one value per line."),)
    if name in SERVER_PROPERTIES_TOOLS:
        found += (("KRAFTSMAN_KAFKA_ENV", "Set to apache (or 1) to let the apache/kafka image's variables "
                                          "override the server properties file: KAFKA_NODE_ID sets node.id (___ is "
                                          "-, __ is _, _ is .); confluent for Confluent's images (___ is _, __ is "
                                          "-). Kafka's own script variables (KAFKA_HEAP_OPTS, KAFKA_OPTS, ...) are "
                                          "never read as properties."),)
    return found


def exit_codes(readme: Path) -> list[tuple[int, str]]:
    """Return (code, meaning) for every ExitStatus, meanings read from the README's exit code table."""
    from ..common.status import ExitStatus

    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    section = text.partition("## Exit codes")[2].split("\n## ")[0]
    meanings = {int(m[1]): m[2].strip() for m in re.finditer(r"^\|\s*(\d+)\s*\|(.*)\|\s*$", section, re.M)}
    missing = [s.name for s in ExitStatus if s.value not in meanings]
    if missing:
        raise ValueError(f"README.md's 'Exit codes' table lacks {', '.join(missing)}")
    return [(s.value, meanings[s.value]) for s in ExitStatus]


def esc(text: str) -> str:
    """Escape `text` for roff body text."""
    text = text.replace("\\", "\\e").replace("-", "\\-").replace("`", "\\(ga")
    text = re.sub(r"\S{40,}", lambda m: m[0].replace(",", ",\\:"), text)  # break points in long words
    return "\n".join(("\\&" + line) if line[:1] in (".", "'") else line for line in text.split("\n"))


def _paragraphs(text: str) -> list[str]:
    lines = [esc(line.strip()) for line in text.strip().split("\n")]
    return ["\n.br\n".join(line for line in lines if line)] if any(lines) else []


def _option_lines(option) -> list[str]:
    flags = ", ".join(f"\\fB{esc(f)}\\fR" for f in option.flags) or f"\\fI{esc(option.dest)}\\fR"
    if option.flags and option.metavar:
        flags += f" \\fI{esc(option.metavar)}\\fR"
    body = _paragraphs(option.help) or ["(no description)"]
    if option.required:
        body[-1] += " (required)"
    return [".TP", flags, *body]


def _synopsis(node) -> list[str]:
    leaves = [n for n in node.walk() if n is not node and not n.subcommands and (n.options or n.positionals)]
    lines = []
    for n in [node] + leaves:
        rest = n.usage[len(n.prog):] if n.usage.startswith(n.prog) else n.usage
        lines += [".br"] * bool(lines) + [f"\\fB{esc(n.prog)}\\fR {esc(rest.strip())}".rstrip()]
    return lines


def _options(node) -> list[str]:
    lines = [".SH OPTIONS"]
    for option in node.options + node.positionals:
        lines += _option_lines(option)
    for name, (help_, child) in node.subcommands.items():
        if not (child.options or child.positionals or child.subcommands):
            continue
        lines += [f".SS {esc(name)}", *(_paragraphs(help_) or [""])]
        for option in child.options + child.positionals:
            lines += _option_lines(option)
        if child.subcommands:
            lines += [f"Sub\\-commands: {esc(', '.join(child.subcommands))}."]
    return lines


def render(command, node, codes: list[tuple[int, str]]) -> str:
    """Return the man page of `command` (docs/model.py's Command) described by `node`."""
    from ..app import TOOLS, UMBRELLA

    title = command.name.upper()
    lines = [f'.TH "{esc(title)}" "1" "" "kraftsman {VERSION}" "kraftsman manual"', ".ad l", ".nh", ".SH NAME",
             f"{esc(command.name)} \\- {esc(command.summary.rstrip('.'))}", ".SH SYNOPSIS", *_synopsis(node),
             ".SH DESCRIPTION", *(_paragraphs(node.description or command.summary))]
    if command.subcommand is not None:
        lines += [".PP", f"Also run as \\fBkraftsman {esc(command.subcommand)}\\fR."]
    if node.subcommands:
        lines.append(".SH COMMANDS")
        progs = {t.command: t.script for t in TOOLS} if command.subcommand is None else {}
        for name, (help_, _) in node.subcommands.items():
            lines += [".TP", f"\\fB{esc(name)}\\fR", *(_paragraphs(help_) or [""])]
            if name in progs:
                lines += [".br", f"See \\fB{esc(progs[name])}\\fR(1)."]
    lines += _options(node)
    lines.append(".SH GLOBAL OPTIONS")
    lines.append("Accepted by every command, anywhere on the command line.")
    for flag, meaning in GLOBAL_OPTIONS:
        lines += [".TP", f"\\fB{esc(flag)}\\fR", esc(meaning)]
    lines.append(".SH EXIT STATUS")
    for code, meaning in codes:
        lines += [".TP", f"\\fB{code}\\fR", esc(meaning.replace("`", ""))]
    lines.append(".SH ENVIRONMENT")
    for name, meaning in COMMON_ENVIRONMENT + _flag_environment(command.name) + ENVIRONMENT.get(command.name, ()):
        lines += [".TP", f"\\fB{name}\\fR", esc(meaning)]
    lines.append(".SH EXAMPLES")
    for caption, example in EXAMPLES.get(command.name, ()):
        lines += [".PP", esc(caption), ".PP", ".nf", ".RS 4", esc(example), ".RE", ".fi"]
    others = [name for name in (UMBRELLA, *(t.script for t in TOOLS)) if name != command.name]
    lines += [".SH SEE ALSO", ",\n".join(f"\\fB{esc(n)}\\fR(1)" for n in others)]
    return "\n".join(lines) + "\n"
