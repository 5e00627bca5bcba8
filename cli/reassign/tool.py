"""kafka-reassign-partitions: Kafka 3.9's ReassignPartitionsCommand (generate, execute, verify, cancel, list), its
jopt-simple flags, texts and exit codes, spoken through kraftsman's Admin client.

    kafka-reassign-partitions --bootstrap-server host:9092 --generate --topics-to-move-json-file topics.json \\
        --broker-list 4,5
    kafka-reassign-partitions --bootstrap-server host:9092 --execute --reassignment-json-file plan.json \\
        --throttle 10000000
    kafka-reassign-partitions --bootstrap-server host:9092 --verify --reassignment-json-file plan.json

Exit codes (kraftsman additions marked *):
  0   done (in text mode --verify exits 0 whatever it finds, as Kafka)
  1   failed, as Kafka: a bad command line (Kafka's message and option table on stderr), a bad or wrong-shaped
      JSON file, an unknown broker, topic or partition, a reassignment under way without --additional, partitions
      the controller refused ("Error: ..." or Kafka's one-line text on stdout)
  1*  --output json|yaml: --verify found a partition with no reassignment under way whose replicas are not the plan's
  64* a bad command line with --output json|yaml
  69* cannot reach the cluster (Kafka's Admin times out and exits 1)
  75* --output json|yaml: --verify found reassignments still in progress (run it again later)

kraftsman's additions: --bootstrap-controller (kraftsman's controllers serve every request these actions send),
--output json|yaml (cli/schemas/reassign-partitions.schema.json), --profile, -X (Kafka's --timeout is the log
directory move timeout, so the suite's --timeout is not offered: the deadline is request.timeout.ms or the
profile's); KRAFTSMAN_REASSIGN_<FLAG> variables. Plans whose log_dirs name a directory (a move between a broker's
log directories) are refused before anything is sent.

Rules:
- One typer command: Kafka's options (Kafka's help, jopt-simple's argument displays and defaults) and the
  additions; the body hands them to commands.run through cli/common/jopt.py. Values are strings, converted where
  Kafka converts them.
"""
from __future__ import annotations

import typer

from ..common import jopt
from ..common.environment import Environment
from ..completion import completers
from . import commands

PROG = "kafka-reassign-partitions"
TOOL = jopt.Tool(PROG, "This tool helps to move topic partitions between replicas.", form=jopt.stdout_error,
                 parse_in_thread=True)
THROTTLE_NOTE = ("This option can be included with --execute when a reassignment is started, and it can be altered "
                 "by resubmitting the current reassignment along with the --additional flag. The throttle rate "
                 "should be at least 1 KB/s. (default: -1)")
PLAN_FORMAT = ("The JSON file with the partition reassignment configurationThe format to use is - \n{\"partitions\":"
               "\n\t[{\"topic\": \"foo\",\n\t  \"partition\": 1,\n\t  \"replicas\": [1,2,3],\n\t  \"log_dirs\": "
               "[\"dir1\",\"dir2\",\"dir3\"] }],\n\"version\":1\n}\nNote that \"log_dirs\" is optional. When it is "
               "specified, its length must equal the length of the replicas list. The value in this list can be "
               "either \"any\" or the absolution path of the log directory on the broker. If absolute log directory "
               "path is specified, the replica will be moved to the specified log directory on the broker.")

Additional = jopt.flag("--additional", "Execute this reassignment in addition to any other ongoing ones. This option "
                                       "can also be used to change the throttle of an ongoing reassignment.")
BootstrapServer = jopt.valued("--bootstrap-server", "REQUIRED: the server(s) to use for bootstrapping.",
                              "String: Server(s) to use for bootstrapping")
BrokerList = jopt.valued("--broker-list", "The list of brokers to which the partitions need to be reassigned in the "
                         "form \"0,1,2\". This is required if --topics-to-move-json-file is used to generate "
                         "reassignment configuration", "String: brokerlist", completer=completers.broker_ids)
Cancel = jopt.flag("--cancel", "Cancel an active reassignment.")
CommandConfig = jopt.valued("--command-config", "Property file containing configs to be passed to Admin Client.",
                            "String: Admin client property file")
DisableRackAware = jopt.flag("--disable-rack-aware", "Disable rack aware replica assignment")
Execute = jopt.flag("--execute", "Kick off the reassignment as specified by the --reassignment-json-file option.")
Generate = jopt.flag("--generate", "Generate a candidate partition reassignment configuration. Note that this only "
                                   "generates a candidate assignment, it does not execute it.")
List = jopt.flag("--list", "List all active partition reassignments.")
PreserveThrottles = jopt.flag("--preserve-throttles", "Do not modify broker or topic throttles.")
PlanFile = jopt.valued("--reassignment-json-file", PLAN_FORMAT, "String: manual assignment json file path")
LogDirsThrottle = jopt.valued("--replica-alter-log-dirs-throttle", "The movement of replicas between log directories "
                              "on the same broker will be throttled to this value (bytes/sec). " + THROTTLE_NOTE,
                              "Long: replicaAlterLogDirsThrottle")
Throttle = jopt.valued("--throttle", "The movement of partitions between brokers will be throttled to this value "
                       "(bytes/sec). " + THROTTLE_NOTE, "Long: throttle")
MoveTimeout = jopt.valued("--timeout", "The maximum time in ms to wait for log directory replica assignment to begin. "
                          "(default: 10000)", "Long: timeout")
TopicsFile = jopt.valued("--topics-to-move-json-file", "Generate a reassignment configuration to move the partitions "
                         "of the specified topics to the list of brokers specified by the --broker-list option. The "
                         "format to use is - \n{\"topics\":\n\t[{\"topic\": \"foo\"},{\"topic\": \"foo1\"}],\n"
                         "\"version\":1\n}", "String: topics to reassign json file path")
Verify = jopt.flag("--verify", "Verify if the reassignment completed as specified by the --reassignment-json-file "
                               "option. If there is a throttle engaged for the replicas specified, and the rebalance "
                               "has completed, the throttle will be removed")

app = jopt.app(PROG)


@app.command(help=TOOL.help, context_settings=jopt.SETTINGS)
def reassign(ctx: typer.Context, additional: Additional = False, bootstrap_server: BootstrapServer = None,
             broker_list: BrokerList = None, cancel: Cancel = False, command_config: CommandConfig = None,
             disable_rack_aware: DisableRackAware = False, execute: Execute = False, generate: Generate = False,
             show_help: jopt.HelpFlag = False, list_: List = False, preserve_throttles: PreserveThrottles = False,
             reassignment_json_file: PlanFile = None, replica_alter_log_dirs_throttle: LogDirsThrottle = None,
             throttle: Throttle = None, move_timeout: MoveTimeout = None, topics_to_move_json_file: TopicsFile = None,
             verify: Verify = False, show_version: jopt.VersionFlag = False,
             bootstrap_controller: jopt.AddedBootstrapController = None, output: jopt.Output = "text",
             profile: jopt.Profile = None, client_property: jopt.ClientProperty = None) -> int:
    return jopt.run(ctx, locals(), commands.run, TOOL)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-reassign-partitions with `argv`; print to env's streams; return the exit status."""
    return jopt.run_tool(app, argv, env, TOOL, "reassign")


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)
