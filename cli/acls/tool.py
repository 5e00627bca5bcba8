"""kafka-acls: Kafka 3.9's AclCommand (list, add and remove ACLs), its jopt-simple flags, texts and exit codes, spoken
through kraftsman's Admin client.

    kafka-acls --bootstrap-server host:9092 --add --allow-principal User:alice --operation Read --topic orders
    kafka-acls --bootstrap-server host:9092 --list --topic orders
    kafka-acls --bootstrap-server host:9092 --remove --force --allow-principal User:alice --topic orders

Exit codes (kraftsman additions marked *):
  0   done (--remove: also when a question is answered other than y)
  1   failed, as Kafka: a bad command line (Kafka's message and option table on stderr), a refused ACL or a
      server error ("Error while executing ACL command: ..." and the stack trace on stdout); --remove without
      --force when stdin ends before the answer* (one line on stderr; Kafka fails on a null answer)
  6*  --output json|yaml: --add found every ACL already there, --remove deleted nothing (nothing changed)
  64* a bad command line with --output json|yaml
  69* cannot reach the cluster (Kafka's Admin times out and exits 1)

kraftsman's additions: --bootstrap-controller (Kafka 3.9's kafka-acls does not accept it; the requests go to the
controllers, which serve the ACL APIs), --output json|yaml (cli/schemas/acls.schema.json; --remove's questions
then go to stderr), --timeout, --profile, -X; KRAFTSMAN_ACLS_<FLAG> variables. Kafka's deprecated authorizer path
(--authorizer-properties without a bootstrap flag, which writes ACLs to ZooKeeper) is refused in one line.

Rules:
- One typer command: Kafka's options (their help is Kafka's, argument displays as jopt-simple shows them) and the
  additions (help starting "kraftsman:"); the body hands them to commands.run through cli/common/jopt.py.
- A bad command line is Kafka's: AclCommandOptions parses outside main's try, so jopt-simple's exception reaches
  the JVM ("Exception in thread "main" ...", jopt.thread).
"""
from __future__ import annotations

import typer

from ..common import jopt
from ..common.environment import Environment
from ..completion import completers
from . import commands
from .commands import DEPRECATION

PROG = "kafka-acls"
TOOL = jopt.Tool(PROG, "This tool helps to manage acls on kafka.", form=commands.acl_error)
# Kafka's help lists AclEntry.ACL_OPERATIONS (a HashSet of the enum) in this order
OPERATION_NAMES = ("CreateTokens", "Create", "Describe", "DescribeTokens", "AlterConfigs", "Write", "Alter",
                   "IdempotentWrite", "Delete", "ClusterAction", "Read", "All", "DescribeConfigs")

Add = jopt.flag("--add", "Indicates you are trying to add ACLs.")
AllowHost = jopt.valued("--allow-host", "Host from which principals listed in --allow-principal will have access. If "
                        "you have specified --allow-principal then the default for this option will be set to '*' "
                        "which allows access from all hosts.", "String: allow-host", multiple=True)
AllowPrincipal = jopt.valued("--allow-principal", "principal is in principalType:name format. Note that principalType "
                             "must be supported by the Authorizer being used. For example, User:'*' is the wild card "
                             "indicating all users.", "String: allow-principal", multiple=True,
                             completer=completers.principals)
Authorizer = jopt.valued("--authorizer", "DEPRECATED: Fully qualified class name of the authorizer, which defaults "
                         "to kafka.security.authorizer.AclAuthorizer if --bootstrap-server is not provided. "
                         + DEPRECATION, "String: authorizer")
AuthorizerProperties = jopt.valued("--authorizer-properties", "DEPRECATED: The properties required to configure an "
                                   "instance of the Authorizer specified by --authorizer. These are key=val pairs. For "
                                   "the default authorizer, example values are: zookeeper.connect=localhost:2181. "
                                   + DEPRECATION, "String: authorizer-properties", multiple=True)
BootstrapServer = jopt.valued("--bootstrap-server", "A list of host/port pairs to use for establishing the connection "
                              "to the Kafka cluster. This list should be in the form host1:port1,host2:port2,... This "
                              "config is required for acl management using admin client API.",
                              "String: server to connect to")
Cluster = jopt.flag("--cluster", "Add/Remove cluster ACLs.")
CommandConfig = jopt.valued("--command-config", "A property file containing configs to be passed to Admin Client.",
                            "String: command-config", optional=True)
Consumer = jopt.flag("--consumer", "Convenience option to add/remove ACLs for consumer role. This will generate ACLs "
                                   "that allows READ,DESCRIBE on topic and READ on group.")
DelegationToken = jopt.valued("--delegation-token", "Delegation token to which ACLs should be added or removed. A "
                              "value of '*' indicates ACL should apply to all tokens.", "String: delegation-token",
                              multiple=True)
DenyHost = jopt.valued("--deny-host", "Host from which principals listed in --deny-principal will be denied access. If "
                       "you have specified --deny-principal then the default for this option will be set to '*' "
                       "which denies access from all hosts.", "String: deny-host", multiple=True)
DenyPrincipal = jopt.valued("--deny-principal", "principal is in principalType:name format. By default anyone not "
                            "added through --allow-principal is denied access. You only need to use this option as "
                            "negation to already allowed set. Note that principalType must be supported by the "
                            "Authorizer being used. For example if you wanted to allow access to all users in the "
                            "system but not test-user you can define an ACL that allows access to User:'*' and "
                            "specify --deny-principal=User:test@EXAMPLE.COM. AND PLEASE REMEMBER DENY RULES TAKES "
                            "PRECEDENCE OVER ALLOW RULES.", "String: deny-principal", multiple=True,
                            completer=completers.principals)
Force = jopt.flag("--force", "Assume Yes to all queries and do not prompt.")
Group = jopt.valued("--group", "Consumer Group to which the ACLs should be added or removed. A value of '*' indicates "
                    "the ACLs should apply to all groups.", "String: group", multiple=True)
Idempotent = jopt.flag("--idempotent", "Enable idempotence for the producer. This should be used in combination with "
                                       "the --producer option. Note that idempotence is enabled automatically if the "
                                       "producer is authorized to a particular transactional-id.")
List = jopt.flag("--list", "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster "
                           "to specify a resource.")
Operation = jopt.valued("--operation", "Operation that is being allowed or denied. Valid operation names are: \n"
                        + "".join(f"\t{name}\n" for name in OPERATION_NAMES) + " (default: All)", "String",
                        multiple=True)
Principal = jopt.valued("--principal", "List ACLs for the specified principal. principal is in principalType:name "
                        "format. Note that principalType must be supported by the Authorizer being used. Multiple "
                        "--principal option can be passed.", "String: principal", multiple=True, optional=True,
                        completer=completers.principals)
Producer = jopt.flag("--producer", "Convenience option to add/remove ACLs for producer role. This will generate ACLs "
                                   "that allows WRITE,DESCRIBE and CREATE on topic.")
Remove = jopt.flag("--remove", "Indicates you are trying to remove ACLs.")
PatternType = jopt.valued("--resource-pattern-type", "The type of the resource pattern or pattern filter. When adding "
                          "acls, this should be a specific pattern type, e.g. 'literal' or 'prefixed'. When listing or "
                          "removing acls, a specific pattern type can be used to list or remove acls from specific "
                          "resource patterns, or use the filter values of 'any' or 'match', where 'any' will match any "
                          "pattern type, but will match the resource name exactly, where as 'match' will perform "
                          "pattern matching to list or remove all acls that affect the supplied resource(s). WARNING: "
                          "'match', when used in combination with the '--remove' switch, should be used with care. "
                          "(default: LITERAL)", "ANY|MATCH|LITERAL|PREFIXED")
Topic = jopt.valued("--topic", "topic to which ACLs should be added or removed. A value of '*' indicates ACL should "
                    "apply to all topics.", "String: topic", multiple=True, completer=completers.topic_names)
TransactionalId = jopt.valued("--transactional-id", "The transactionalId to which ACLs should be added or removed. A "
                              "value of '*' indicates the ACLs should apply to all transactionalIds.",
                              "String: transactional-id", multiple=True)
UserPrincipal = jopt.valued("--user-principal", "Specifies a user principal as a resource in relation with the "
                            "operation. For instance one could grant CreateTokens or DescribeTokens permission on a "
                            "given user principal.", "String: user-principal", multiple=True)
ZK_TLS_HELP = ("DEPRECATED: Identifies the file where ZooKeeper client TLS connectivity properties are defined for "
               "the default authorizer kafka.security.authorizer.AclAuthorizer. Any properties other than the "
               f"following (with or without an \"authorizer.\" prefix) are ignored: {jopt.ZK_TLS_KEYS}. Note that if "
               "SASL is not configured and zookeeper.set.acl is supposed to be true due to mutual certificate "
               "authentication being used then it is necessary to explicitly specify --authorizer-properties "
               "zookeeper.set.acl=true. " + DEPRECATION)
ZkTlsConfigFile = jopt.valued("--zk-tls-config-file", ZK_TLS_HELP, "String: Authorizer ZooKeeper TLS configuration")

app = jopt.app(PROG)


@app.command(help=TOOL.help, context_settings=jopt.SETTINGS)
def acls(ctx: typer.Context, add: Add = False, allow_host: AllowHost = None, allow_principal: AllowPrincipal = None,
         authorizer: Authorizer = None, authorizer_properties: AuthorizerProperties = None,
         bootstrap_server: BootstrapServer = None, cluster: Cluster = False, command_config: CommandConfig = None,
         consumer: Consumer = False, delegation_token: DelegationToken = None, deny_host: DenyHost = None,
         deny_principal: DenyPrincipal = None, force: Force = False, group: Group = None,
         show_help: jopt.HelpFlag = False, idempotent: Idempotent = False, list_: List = False,
         operation: Operation = None, principal: Principal = None, producer: Producer = False,
         remove: Remove = False, resource_pattern_type: PatternType = None, topic: Topic = None,
         transactional_id: TransactionalId = None, user_principal: UserPrincipal = None,
         show_version: jopt.VersionFlag = False, zk_tls_config_file: ZkTlsConfigFile = None,
         bootstrap_controller: jopt.AddedBootstrapController = None, output: jopt.Output = "text",
         timeout: jopt.Timeout = None, profile: jopt.Profile = None,
         client_property: jopt.ClientProperty = None) -> int:
    return jopt.run(ctx, locals(), commands.run, TOOL)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-acls with `argv`; print to env's streams; return the exit status."""
    return jopt.run_tool(app, argv, env, TOOL, "acls", usage_error=commands.option_error)


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)
