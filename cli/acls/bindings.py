"""kafka-acls' command line as Kafka 3.9's AclCommand reads it: the checks (checkArgs) and the resource filters and
access control entries a command line names, with Kafka's texts.

Rules:
- `opts` is the parsed command line: has(name), values(name) (every value, in order) and value(name), long names
  without "--". --operation defaults to All and --resource-pattern-type to LITERAL when not given.
- Kafka's refusals: Usage (printUsageAndExit: the message, then the help, on stderr, exit 1) for the checks and
  the option combinations; Failed (Kafka's catch-all: "Error while executing ACL command: <message>" and the
  stack trace on stdout, exit 1) for what fails while the action runs: a principal not in Type:name form, a
  --resource-pattern-type joptsimple cannot convert.
- Resource filters are built in Kafka's order (topics, the cluster with a LITERAL pattern type, groups,
  transactional ids, delegation tokens, user principals), names trimmed except transactional ids, each once;
  entries are every principal x operation x host, ALLOW then DENY, each once (insertion-ordered sets: Kafka's
  Scala sets print in hash order, which the fixture compares as sets).
"""
from __future__ import annotations

from kraftsman.controller.client.admin.acls import (
    ALL,
    ALLOW,
    ANY_OPERATION,
    CLUSTER,
    CLUSTER_NAME,
    DELEGATION_TOKEN,
    DENY,
    GROUP,
    LITERAL,
    PREFIXED,
    TOPIC,
    TRANSACTIONAL_ID,
    USER,
    AccessControlEntry,
    ResourcePattern,
)
from kraftsman.controller.image.acls import OPERATIONS, PATTERN_TYPES, RESOURCE_TYPES

READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION = 3, 4, 5, 6, 7, 8, 9
DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS = 10, 11, 12, 13, 14
SUPPORTED_OPERATIONS = {       # AclEntry.supportedOperations, in the order Kafka lists them
    TOPIC: (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    GROUP: (READ, DESCRIBE, DELETE),
    CLUSTER: (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE),
    TRANSACTIONAL_ID: (DESCRIBE, WRITE), DELEGATION_TOKEN: (DESCRIBE,), USER: (CREATE_TOKENS, DESCRIBE_TOKENS)}
CLUSTER_FILTER = ResourcePattern(CLUSTER, CLUSTER_NAME, LITERAL)
KAFKA_39_OPERATIONS = 15      # UNKNOWN .. DESCRIBE_TOKENS (TWO_PHASE_COMMIT is Kafka 4.0's)
PRINCIPAL_FORMAT = "expected a string in format principalType:principalName but got "


class Usage(Exception):
    """Kafka's printUsageAndExit: the message, then the help, on stderr; exit 1."""


class Failed(Exception):
    """A failure inside the action: Kafka prints "Error while executing ACL command: <message>", the stack trace."""

    def __init__(self, message: str, java_class: str = "java.lang.IllegalArgumentException"):
        super().__init__(message)
        self.message, self.java_class = message, java_class


def check_args(opts) -> None:
    """Run AclCommandOptions.checkArgs for the admin-client path: raise Usage with Kafka's text, or return."""
    if opts.has("bootstrap-server") and opts.has("authorizer"):
        raise Usage("Only one of --bootstrap-server or --authorizer must be specified")
    if not _connected(opts) and not opts.has("authorizer-properties"):
        raise Usage('Missing required argument "[authorizer-properties]"')
    if opts.has("command-config") and not _connected(opts):
        raise Usage("The --command-config option can only be used with --bootstrap-server option")
    if opts.has("authorizer-properties") and _connected(opts):
        raise Usage("The --authorizer-properties option can only be used with --authorizer option")
    if sum(opts.has(a) for a in ("add", "remove", "list")) != 1:
        raise Usage("Command must include exactly one action: --list, --add, --remove. ")
    _invalid_together(opts, "list", ("producer", "consumer", "allow-host", "allow-principal", "deny-host",
                                      "deny-principal"))
    for role in ("producer", "consumer"):
        _invalid_together(opts, role, ("operation", "deny-principal", "deny-host"))
    if opts.has("principal") and not opts.has("list"):
        raise Usage("The --principal option is only available if --list is set")
    if opts.has("producer") and not opts.has("topic"):
        raise Usage("With --producer you must specify a --topic")
    if opts.has("idempotent") and not opts.has("producer"):
        raise Usage("The --idempotent option is only available if --producer is set")
    if opts.has("consumer") and (not opts.has("topic") or not opts.has("group") or (
            not opts.has("producer") and (opts.has("cluster") or opts.has("transactional-id")))):
        raise Usage("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id "
                    "option should be specified.")


def _connected(opts) -> bool:
    return opts.has("bootstrap-server") or opts.has("bootstrap-controller")


def _invalid_together(opts, used: str, invalid: tuple[str, ...]) -> None:
    if opts.has(used):
        for other in invalid:
            if opts.has(other):
                raise Usage(f'Option "[{used}]" can\'t be used with option "[{other}]"')


def pattern_type(opts) -> int:
    """Return --resource-pattern-type (LITERAL when not given), converted as Kafka's PatternTypeConverter."""
    text = opts.value("resource-pattern-type")
    if text is None:
        return LITERAL
    code = next((i for i, name in enumerate(PATTERN_TYPES) if name.lower() == text.lower()), 0)
    if code == 0:
        raise Failed(f"Cannot parse argument '{text}' of option resource-pattern-type",
                     "joptsimple.OptionArgumentConversionException")
    return code


def operation(name: str) -> int:
    """Return the AclOperation a name gives (SecurityUtils.operation: PascalCase or upper case), 0 = UNKNOWN."""
    for code, enum_name in enumerate(OPERATIONS[:KAFKA_39_OPERATIONS]):
        pascal = pascal_case(enum_name)
        if name == pascal or name.upper() == pascal.upper():
            return code
    return 0


def pascal_case(enum_name: str) -> str:
    """Return Kafka's PascalCase of an enum name (CLUSTER_ACTION -> ClusterAction)."""
    return "".join(word.capitalize() for word in enum_name.split("_"))


def principals(opts, option: str) -> list[str]:
    """Return the principals an option names, as Kafka's KafkaPrincipal.toString(), each once."""
    found = []
    for text in opts.values(option):
        text = text.strip()
        kind, colon, name = text.partition(":")
        if not text or not colon:
            raise Failed(PRINCIPAL_FORMAT + text)
        found.append(f"{kind}:{name}")
    return list(dict.fromkeys(found))


def resource_filters(opts, die_if_none: bool = True) -> list[ResourcePattern]:
    """Return the resource filters the command line names, in Kafka's order (see Rules)."""
    kind = pattern_type(opts)
    found = [ResourcePattern(TOPIC, t.strip(), kind) for t in opts.values("topic")]
    if kind == LITERAL and (opts.has("cluster") or opts.has("idempotent")):
        found.append(CLUSTER_FILTER)
    found += [ResourcePattern(GROUP, g.strip(), kind) for g in opts.values("group")]
    found += [ResourcePattern(TRANSACTIONAL_ID, t, kind) for t in opts.values("transactional-id")]
    found += [ResourcePattern(DELEGATION_TOKEN, t.strip(), kind) for t in opts.values("delegation-token")]
    found += [ResourcePattern(USER, u.strip(), kind) for u in opts.values("user-principal")]
    if not found and die_if_none:
        raise Usage("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or "
                    "--delegation-token <Delegation Token ID>")
    return list(dict.fromkeys(found))


def entries(opts, operations: list[int]) -> list[AccessControlEntry]:
    """Return the entries for `operations`: every allowed then denied principal on every host (Kafka's getAcl)."""
    found = []
    for permission, who, where in ((ALLOW, "allow-principal", "allow-host"), (DENY, "deny-principal", "deny-host")):
        people = principals(opts, who)
        hosts = list(dict.fromkeys(h.strip() for h in opts.values(where))) if opts.has(where) else \
            (["*"] if opts.has(who) else [])
        found += [AccessControlEntry(p, h, op, permission) for p in people for op in operations for h in hosts]
    if any(a.operation == ANY_OPERATION for a in found):
        raise Failed("operation must not be ANY")
    return list(dict.fromkeys(found))


def filter_entries(opts) -> dict[ResourcePattern, list[AccessControlEntry]]:
    """Return each resource filter with its entries (Kafka's getResourceFilterToAcls), operations checked."""
    found: dict[ResourcePattern, list[AccessControlEntry]] = {}
    if not opts.has("producer") and not opts.has("consumer"):
        ops = [operation(o.strip()) for o in (opts.values("operation") or ["All"])]
        acls = entries(opts, list(dict.fromkeys(ops)))
        found.update({f: acls for f in resource_filters(opts)})
    if opts.has("producer"):
        filters = resource_filters(opts)
        found.update({f: entries(opts, [WRITE, DESCRIBE, CREATE]) for f in filters if f.resource_type == TOPIC})
        found.update({f: entries(opts, [WRITE, DESCRIBE]) for f in filters if f.resource_type == TRANSACTIONAL_ID})
        if opts.has("idempotent"):
            found[CLUSTER_FILTER] = entries(opts, [IDEMPOTENT_WRITE])
    if opts.has("consumer"):
        filters = resource_filters(opts)
        consumer = {f: entries(opts, [READ, DESCRIBE]) for f in filters if f.resource_type == TOPIC}
        consumer.update({f: entries(opts, [READ]) for f in filters if f.resource_type == GROUP})
        found.update({f: list(dict.fromkeys(acls + found.get(f, []))) for f, acls in consumer.items()})
    for f, acls in found.items():
        valid = (*SUPPORTED_OPERATIONS[f.resource_type], ALL)
        if any(a.operation not in valid for a in acls):
            names = ", ".join(pascal_case(OPERATIONS[op]) for op in valid)
            raise Usage(f"ResourceType {RESOURCE_TYPES[f.resource_type]} only supports operations {names}")
    return found


def patterns_to_add(opts) -> dict[ResourcePattern, list[AccessControlEntry]]:
    """Return the resource patterns and entries an --add creates (Kafka's getResourceToAcls)."""
    kind = pattern_type(opts)
    if kind not in (LITERAL, PREFIXED):
        raise Usage(f"A '--resource-pattern-type' value of '{PATTERN_TYPES[kind]}' is not valid when adding acls.")
    found = filter_entries(opts)
    if any(not acls for acls in found.values()):
        raise Usage("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    return found
