"""kafka-leader-election's checks and run: LeaderElectionCommand's, in Kafka's order and words.

Rules:
- run(r) checks the command line as LeaderElectionCommandOptions.validate does (after --help and --version): the
  missing required options ("Missing required option(s): bootstrap-server, election-type"), exactly one of
  --topic, --all-topic-partitions and --path-to-json-file, --partition with --topic and only then. Each failure
  is an AdminCommandFailedException printed as Kafka's mainNoExit prints it (stderr: message, trace, blank line).
- Then, in Kafka's order: --election-type converted (jopt-simple's EnumConverter, any case), the JSON file read
  (election_file), --partition converted, and one ElectLeaders request (elect.py).
- kraftsman's --bootstrap-controller stands for --bootstrap-server in the checks; both at once is refused.
"""
from __future__ import annotations

from ..common import jopt
from ..common.status import ExitStatus
from . import texts

CHOICES = ("topic", "all_topic_partitions", "path_to_json_file")
CONVERSION = "joptsimple.OptionArgumentConversionException"


def _failed(message: str) -> jopt.KafkaError:
    return jopt.KafkaError(message, texts.ADMIN_COMMAND_FAILED)


def check(r: jopt.Run) -> None:
    """Raise Kafka's failure for a command line LeaderElectionCommandOptions.validate refuses."""
    missing = [name for name, given in (("bootstrap-server", r.has("bootstrap_server") or
                                         r.has("bootstrap_controller")), ("election-type", r.has("election_type")))
               if not given]
    if missing:
        raise _failed("Missing required option(s): " + ", ".join(missing))
    if r.has("bootstrap_server") and r.has("bootstrap_controller"):
        raise _failed("Only one of --bootstrap-server or --bootstrap-controller can be specified")
    if sum(1 for name in CHOICES if r.has(name)) != 1:
        raise _failed("One and only one of the following options is required: topic, all-topic-partitions, "
                      "path-to-json-file")
    if r.has("topic") and not r.has("partition"):
        raise _failed("Missing required option(s): partition")
    if r.has("partition") and not r.has("topic"):
        raise _failed("Option partition is only allowed if topic is used")


def election_type(text: str) -> int:
    """Return PREFERRED (0) or UNCLEAN (1) for --election-type, as jopt-simple's EnumConverter reads it."""
    for code, name in texts.ELECTION_TYPES.items():
        if name.lower() == text.lower():
            return code
    cause = jopt.KafkaError(f"Value [{text}] is not one of [[PREFERRED,UNCLEAN]]",
                            "joptsimple.ValueConversionException")
    raise jopt.KafkaError(f"Cannot parse argument '{text}' of option election-type", CONVERSION, cause=cause)


def partitions(r: jopt.Run):
    """Return the partitions to elect: the JSON file's, --topic and --partition's, or None (every partition)."""
    from .election_file import read_election_file

    chosen = read_election_file(r.args.path_to_json_file, r.env.cwd) if r.has("path_to_json_file") else None
    index = jopt.java_int(r.args.partition, "partition") if r.has("partition") else None
    if chosen is None and r.has("topic"):
        chosen = [(r.args.topic, index)]
    return chosen


def run(r: jopt.Run) -> int:
    """Check the command line, then run the election; return the exit status."""
    from .elect import elect

    check(r)
    kind = election_type(r.args.election_type)
    wanted = partitions(r)
    say = (lambda line: None) if r.structured else (lambda line: r.env.stdout.write(line + "\n"))
    fields, failure = r.call(elect, r.admin(), kind, wanted, say)
    if failure is not None:
        failure.fields = fields
        raise failure
    r.emit("", **fields)
    return ExitStatus.OK
