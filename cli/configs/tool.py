"""kafka-configs: Kafka 3.9's ConfigCommand (describe and alter the configs of topics, brokers, broker loggers, users,
clients, ips and client metrics), its jopt-simple flags, texts and exit codes, spoken through kraftsman's Admin client.

    kafka-configs --bootstrap-server host:9092 --describe --entity-type topics --entity-name orders
    kafka-configs --bootstrap-server host:9092 --alter --entity-type brokers --entity-default \\
        --add-config log.retention.ms=604800000
    kafka-configs --bootstrap-server host:9092 --alter --entity-type users --entity-name alice \\
        --add-config 'SCRAM-SHA-256=[iterations=8192,password=secret]'

Exit codes (kraftsman additions marked *):
  0   done
  1   failed, as Kafka: a bad command line (Kafka's message on stderr, with the option table for a missing or
      surplus action or option), a config it refuses ("Invalid config(s): ..."), a server error or a timeout
      ("Error while executing config command with args '...'" and the Java exception on stderr)
  6*  --output json|yaml: --alter found every value already so (nothing changed)
  64* a bad command line with --output json|yaml
  69* cannot reach the cluster (Kafka's Admin times out and exits 1)

--bootstrap-controller is Kafka 3.9's: topics, the cluster-wide broker default and a controller's own id work
through the controllers; a broker's own configs time out as in Kafka (the controllers do not list brokers); user
SCRAM credentials also work through the controllers (a kraftsman addition: the controllers serve them); client
quotas do not (Kafka's UnsupportedEndpointTypeException). kraftsman's additions: --output json|yaml
(cli/schemas/configs.schema.json), --timeout, --profile, -X; KRAFTSMAN_CONFIGS_<FLAG> variables. Kafka's
ZooKeeper path (--zookeeper) is refused in one line.

Rules:
- One typer command: Kafka's options (their help is Kafka's, argument displays as jopt-simple shows them) and the
  additions (help starting "kraftsman:"); the body hands them to commands.run through cli/common/jopt.py.
- The raw command line is kept for the run (ARGV): Kafka's failure text quotes it, and the order of
  --entity-name and --entity-default occurrences decides which entity type each names.
"""
from __future__ import annotations

import typer

from ..common import jopt
from ..common.environment import Environment
from ..completion import completers
from . import commands, completion
from .config_names import add_config_help

PROG = "kafka-configs"
TOOL = jopt.Tool(PROG, "This tool helps to manipulate and describe entity config for a topic, client, user, broker, "
                       "ip or client-metrics", form=commands.config_error, connect_form=commands.config_error)

AddConfig = jopt.valued("--add-config", add_config_help(), "String", multiple=True,
                        completer=completion.config_pairs)
AddConfigFile = jopt.valued("--add-config-file", "Path to a properties file with configs to add. See add-config for a "
                            "list of valid configurations.", "String", multiple=True)
All = jopt.flag("--all", "List all configs for the given topic, broker, or broker-logger entity (includes static "
                         "configuration when the entity type is brokers)")
Alter = jopt.flag("--alter", "Alter the configuration for the entity.")
BootstrapController = jopt.valued("--bootstrap-controller", "The Kafka controllers to connect to.",
                                  "String: controller to connect to")
BootstrapServer = jopt.valued("--bootstrap-server", "The Kafka servers to connect to.", "String: server to connect to")
Broker = jopt.valued("--broker", "The broker's ID.", "String", multiple=True, completer=completers.broker_ids)
BrokerDefaults = jopt.flag("--broker-defaults", "The config defaults for all brokers.")
BrokerLogger = jopt.valued("--broker-logger", "The broker's ID for its logger config.", "String", multiple=True,
                           completer=completers.broker_ids)
Client = jopt.valued("--client", "The client's ID.", "String", multiple=True)
ClientDefaults = jopt.flag("--client-defaults", "The config defaults for all clients.")
CommandConfig = jopt.valued("--command-config", "Property file containing configs to be passed to Admin Client. This "
                            "is used only with --bootstrap-server option for describing and altering broker configs.",
                            "String: command config property file")
DeleteConfig = jopt.valued("--delete-config", "config keys to remove 'k1,k2'", "String", multiple=True,
                           completer=completion.config_keys)
Describe = jopt.flag("--describe", "List configs for the given entity.")
EntityDefault = jopt.flag("--entity-default", "Default entity name for clients/users/brokers/ips (applies to "
                                              "corresponding entity type in command line)")
EntityName = jopt.valued("--entity-name", "Name of entity (topic name/client id/user principal name/broker "
                         "id/ip/client metrics)", "String", multiple=True, completer=completion.entity_names)
EntityType = jopt.valued("--entity-type", "Type of entity (topics/clients/users/brokers/broker-loggers/ips/client-"
                         "metrics)", "String", multiple=True, completer=completion.entity_types)
Force = jopt.flag("--force", "Suppress console prompts")
Ip = jopt.valued("--ip", "The IP address.", "String", multiple=True)
IpDefaults = jopt.flag("--ip-defaults", "The config defaults for all IPs.")
Topic = jopt.valued("--topic", "The topic's name.", "String", multiple=True, completer=completers.topic_names)
User = jopt.valued("--user", "The user's principal name.", "String", multiple=True, completer=completers.users)
UserDefaults = jopt.flag("--user-defaults", "The config defaults for all users.")
ZkTlsConfigFile = jopt.valued("--zk-tls-config-file", "Identifies the file where ZooKeeper client TLS connectivity "
                              f"properties are defined.  Any properties other than {jopt.ZK_TLS_KEYS} are ignored.",
                              "String: ZooKeeper TLS configuration")
Zookeeper = jopt.valued("--zookeeper", "DEPRECATED. The connection string for the zookeeper connection in the form "
                        "host:port. Multiple URLS can be given to allow fail-over. Required when configuring SCRAM "
                        "credentials for users or dynamic broker configs when the relevant broker(s) are down. Not "
                        "allowed otherwise.", "String: urls")

app = jopt.app(PROG)


@app.command(help=TOOL.help, context_settings=jopt.SETTINGS)
def configs(ctx: typer.Context, add_config: AddConfig = None, add_config_file: AddConfigFile = None,
            all_: All = False, alter: Alter = False, bootstrap_controller: BootstrapController = None,
            bootstrap_server: BootstrapServer = None, broker: Broker = None, broker_defaults: BrokerDefaults = False,
            broker_logger: BrokerLogger = None, client_: Client = None, client_defaults: ClientDefaults = False,
            command_config: CommandConfig = None, delete_config: DeleteConfig = None, describe: Describe = False,
            entity_default: EntityDefault = False, entity_name: EntityName = None, entity_type: EntityType = None,
            force: Force = False, show_help: jopt.HelpFlag = False, ip: Ip = None, ip_defaults: IpDefaults = False,
            topic: Topic = None, user: User = None, user_defaults: UserDefaults = False,
            show_version: jopt.VersionFlag = False, zk_tls_config_file: ZkTlsConfigFile = None,
            zookeeper: Zookeeper = None, output: jopt.Output = "text", timeout: jopt.Timeout = None,
            profile: jopt.Profile = None, client_property: jopt.ClientProperty = None) -> int:
    return jopt.run(ctx, locals(), lambda r: commands.run(r, commands.ARGV.get() or []), TOOL)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-configs with `argv`; print to env's streams; return the exit status."""
    token = commands.ARGV.set(list(argv))
    try:
        return jopt.run_tool(app, argv, env, TOOL, "configs", usage_error=commands.option_error)
    finally:
        commands.ARGV.reset(token)


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)
