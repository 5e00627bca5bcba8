"""kafka-configs' command line as Kafka 3.9's ConfigCommand reads it: the entity types and names a command line
names, and the checks (checkArgs, then processCommand's) with Kafka's texts, before anything is sent.

Rules:
- The parsed command line is an Occurrences: every option as given, in order (long name without "--", value or
  None). Entity types are the --entity-type values, then the entity flags (--topic, --client, --user, --broker,
  --broker-logger, --ip) and the default flags (--client-defaults, --user-defaults, --broker-defaults,
  --ip-defaults) present, in that fixed order; entity names are the --entity-name / --entity-default occurrences in
  command-line order ("" for a default), then the entity flags' values, then "" per default flag: as Kafka's
  entityTypes / entityNames.
- Kafka's three kinds of refusal: Usage (printUsageAndExit: the message, then the help, on stderr), Refusal
  (IllegalArgumentException, InvalidConfigurationException or a joptsimple OptionException: the message alone
  on stderr) and, for the rest, the caller's "Error while executing config command" text. All exit 1.
- Checks run in Kafka's order; zookeeper-only options are refused as Kafka refuses them without --zookeeper.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

TOPICS, CLIENTS, USERS, BROKERS, IPS = "topics", "clients", "users", "brokers", "ips"
CLIENT_METRICS, BROKER_LOGGERS = "client-metrics", "broker-loggers"
SUPPORTED_TYPES = (TOPICS, CLIENTS, USERS, BROKERS, IPS, BROKER_LOGGERS, CLIENT_METRICS)   # Kafka's order
ENTITY_FLAGS = (("topic", TOPICS), ("client", CLIENTS), ("user", USERS), ("broker", BROKERS),
                ("broker-logger", BROKER_LOGGERS), ("ip", IPS))
DEFAULT_FLAGS = (("client-defaults", CLIENTS), ("user-defaults", USERS), ("broker-defaults", BROKERS),
                 ("ip-defaults", IPS))
CONNECT_OPTIONS = ("bootstrap-server", "bootstrap-controller", "zookeeper")
_INT = re.compile(r"[+-]?[0-9]+")


class Usage(Exception):
    """Kafka's printUsageAndExit: the message, then the tool's help, on stderr; exit 1."""


class Refusal(Exception):
    """An IllegalArgumentException, InvalidConfigurationException or OptionException: its message on stderr, exit 1."""


@dataclass
class Occurrences:
    """The options of one command line, in order: (long name without "--", value or None)."""

    given: list[tuple[str, str | None]] = field(default_factory=list)

    def has(self, name: str) -> bool:
        """Tell whether the option was given."""
        return any(n == name for n, _ in self.given)

    def values(self, name: str) -> list[str]:
        """Return every value the option was given, in order."""
        return [v for n, v in self.given if n == name and v is not None]

    def value(self, name: str) -> str | None:
        """Return the option's one value (None when absent); given twice, joptsimple's refusal."""
        values = self.values(name)
        if len(values) > 1:
            raise Refusal(f"Found multiple arguments for option {name}, but you asked for only one")
        return values[0] if values else None


def entity_types(opts: Occurrences) -> list[str]:
    """Return the entity types in Kafka's order (see Rules)."""
    flags = [kind for flag, kind in (*ENTITY_FLAGS, *DEFAULT_FLAGS) if opts.has(flag)]
    return opts.values("entity-type") + flags


def entity_names(opts: Occurrences) -> list[str]:
    """Return the entity names in Kafka's order, "" for a default entity (see Rules)."""
    names = iter(opts.values("entity-name"))
    ordered = [next(names, "") if n == "entity-name" else "" for n, _ in opts.given
               if n in ("entity-name", "entity-default")]
    return (ordered + [opts.value(flag) for flag, _ in ENTITY_FLAGS if opts.has(flag)]
            + ["" for flag, _ in DEFAULT_FLAGS if opts.has(flag)])


def check_args(opts: Occurrences) -> None:
    """Run ConfigCommandOptions.checkArgs: raise Usage or Refusal with Kafka's text, or return."""
    actions = sum(opts.has(a) for a in ("alter", "describe"))
    if actions != 1:
        raise Usage("Command must include exactly one action: --describe, --alter")
    _invalid_together(opts, "alter", ("describe",))
    _invalid_together(opts, "describe", ("alter", "add-config", "delete-config"))
    types = entity_types(opts)
    duplicates = [t for i, t in enumerate(types) if t in types[:i]]
    if duplicates:
        raise Refusal(f"Duplicate entity type(s) specified: {','.join(dict.fromkeys(duplicates))}")
    _check_types(opts, types)
    _check_connection(opts)
    names = entity_names(opts)
    has_name, has_default = any(names), any(n == "" for n in names)
    if has_name and (BROKERS in types or BROKER_LOGGERS in types):
        for flag in ("entity-name", "broker", "broker-logger"):
            if opts.has(flag) and not is_java_int(opts.value(flag)):
                raise Refusal(f"The entity name for {types[0]} must be a valid integer broker id, but it is: "
                              f"{opts.value(flag)}")
    if has_name and IPS in types:
        for flag in ("entity-name", "ip"):
            if opts.has(flag) and not valid_ip_entity(opts.value(flag)):
                raise Refusal(f"The entity name for {types[0]} must be a valid IP or resolvable host, but it is: "
                              f"{opts.value(flag)}")
    if opts.has("describe") and BROKER_LOGGERS in types and not has_name:
        raise Refusal(f"an entity name must be specified with --describe of {','.join(types)}")
    if opts.has("alter"):
        _check_alter(opts, types, has_name, has_default)


def _invalid_together(opts: Occurrences, used: str, invalid: tuple[str, ...]) -> None:
    if opts.has(used):
        for other in invalid:
            if opts.has(other):
                raise Usage(f'Option "[{used}]" can\'t be used with option "[{other}]"')


def _check_types(opts: Occurrences, types: list[str]) -> None:
    if opts.has("bootstrap-server") or opts.has("bootstrap-controller"):
        allowed, connect = SUPPORTED_TYPES, "--bootstrap-server or --bootstrap-controller"
    else:
        allowed, connect = (USERS, BROKERS), "--zookeeper"
    for kind in types:
        if kind not in allowed:
            raise Refusal(f"Invalid entity type {kind}, the entity type must be one of {', '.join(allowed)} with a "
                          f"{connect} argument")
    if not types:
        raise Refusal("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {USERS, CLIENTS}:
        raise Refusal(f"Only '{USERS}' and '{CLIENTS}' entity types may be specified together")
    generic = any(opts.has(f) for f in ("entity-name", "entity-type", "entity-default"))
    if generic and any(opts.has(flag) for flag, _ in (*ENTITY_FLAGS, *DEFAULT_FLAGS)):
        raise Refusal("--entity-{type,name,default} should not be used in conjunction with specific entity flags")


def _check_connection(opts: Occurrences) -> None:
    count = sum(opts.has(c) for c in CONNECT_OPTIONS)
    if count == 0:
        raise Refusal("One of the required --bootstrap-server, --boostrap-controller, or --zookeeper arguments must "
                      "be specified")
    if count > 1:
        raise Refusal("Only one of --bootstrap-server, --boostrap-controller, and --zookeeper can be specified")
    if opts.has("all") and opts.has("zookeeper"):
        raise Refusal("--bootstrap-server must be specified for --all")
    if opts.has("zk-tls-config-file") and not opts.has("zookeeper"):
        raise Refusal("Only the --zookeeper option can be used with the --zk-tls-config-file option.")


def _check_alter(opts: Occurrences, types: list[str], has_name: bool, has_default: bool) -> None:
    if any(t in types for t in (USERS, CLIENTS, BROKERS, IPS)):
        if not has_name and not has_default:
            raise Refusal("an entity-name or default entity must be specified with --alter of users, clients, "
                          "brokers or ips")
    elif not has_name:
        raise Refusal(f"an entity name must be specified with --alter of {','.join(types)}")
    adds, files, deletes = (opts.has(o) for o in ("add-config", "add-config-file", "delete-config"))
    if adds and files:
        raise Refusal("Only one of --add-config or --add-config-file must be specified")
    if not adds and not files and not deletes:
        raise Refusal("At least one of --add-config, --add-config-file, or --delete-config must be specified with "
                      "--alter")


def check_names_per_type(opts: Occurrences) -> None:
    """Run processCommand's check: with --alter, one entity name (or default) per entity type."""
    if opts.has("alter") and len(entity_types(opts)) != len(entity_names(opts)):
        raise Refusal("An entity name must be specified for every entity type")


def is_java_int(text: str | None) -> bool:
    """Tell whether Java's Integer.parseInt accepts `text`: an optional sign, ASCII digits, in int range."""
    return bool(text and _INT.fullmatch(text)) and -2**31 <= int(text) < 2**31


def valid_ip_entity(name: str | None) -> bool:
    """Tell whether Kafka accepts an ips entity name: the default, or an address or host name that resolves."""
    import socket

    if name in (None, "<default>"):
        return True
    try:
        socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return False
    return True


def singular(entity_type: str) -> str:
    """Return an entity type without its final letter, as Kafka's messages print it ("topic", "broker")."""
    return entity_type[:-1]
