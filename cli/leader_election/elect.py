"""kafka-leader-election's run once its options are checked (Kafka 3.9's LeaderElectionCommand.electLeaders): one
ElectLeaders request, its outcome printed per partition.

Rules:
- The partitions are the JSON file's, or --topic and --partition's, or None for --all-topic-partitions (every
  partition; the controller leaves out those whose election is not needed).
- An error of the whole answer is worded as Kafka's: a timeout prints "Timeout waiting for election results" and
  fails with it; CLUSTER_AUTHORIZATION_FAILED prints "Not authorized to perform leader election" and fails with
  it; another error fails as a RuntimeException around the ExecutionException Kafka's future throws.
- Partitions that failed end the run with texts.failure (stderr, exit 1) after every line is printed.
"""
from __future__ import annotations

from kraftsman.controller.client.admin import ServerError

from ..common.jopt import KafkaError, server_error, wrapped
from . import texts

REQUEST_TIMED_OUT, CLUSTER_AUTHORIZATION_FAILED = 7, 31


def _whole_answer_failed(error: ServerError, say) -> KafkaError:
    cause = server_error(error)
    if error.code == REQUEST_TIMED_OUT:
        say("Timeout waiting for election results")
        return KafkaError("Timeout waiting for election results", texts.ADMIN_COMMAND_FAILED, cause=cause)
    if error.code == CLUSTER_AUTHORIZATION_FAILED:
        say("Not authorized to perform leader election")
        return KafkaError("Not authorized to perform leader election", texts.ADMIN_COMMAND_FAILED)
    return wrapped("java.lang.RuntimeException", wrapped("java.util.concurrent.ExecutionException", cause))


def elect(admin, election_type: int, partitions, say) -> tuple[dict, KafkaError | None]:
    """Run the election and print its outcome. Return the fields of the JSON object (the partitions elected, not
    needed and failed) and the failure Kafka ends with when some partitions failed (see Rules)."""
    try:
        results = admin.elect_leaders(election_type, partitions)
    except ServerError as e:
        raise _whole_answer_failed(e, say) from None
    result = texts.outcome(results)
    for line in texts.outcome_lines(election_type, result):
        say(line)
    fields = {"election_type": texts.ELECTION_TYPES[election_type],
              "elected": [texts.partition_text(tp) for tp in result.elected],
              "not_needed": [texts.partition_text(tp) for tp in result.not_needed],
              "failed": [{"partition": texts.partition_text(tp), "error": error.java_string()}
                         for tp, error in result.failed]}
    return fields, texts.failure(result)
