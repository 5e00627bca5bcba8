"""Kafka's server .properties as kafka-storage, kafka-controller and add-controller read them: listeners, log
directories, node id, roles, the security protocol map, and the checks Kafka 3.9's KafkaConfig makes first.

KafkaConfig's checks (`validate`), in the order its constructor meets them (only these; the rest of
validateValues is not repeated):
1. node.id and broker.id (each standing in for the other) are integers (ConfigDef); process.roles names only
   `broker` and `controller` (the processRoles field).
2. listeners parse as endpoints whose listener names have a security protocol in the effective
   listener.security.protocol.map (the earlyStartListeners field, initialised before validateValues runs).
3. validateValues: node.id equals broker.id; no process.roles: zookeeper.connect is required; process.roles:
   node.id must be set (>= 0); advertised.listeners (when set) parse as endpoints too.

Rules:
- Every refusal is a ConfigError whose message is one line in Kafka's words; nothing prints here.
- Only the keys Kafka reads are read; `cluster.id` is read only to compare it with meta.properties (kraftsman).
- One reader for every tool: kafka-storage (cli/storage), kafka-controller (controller/server/config.py builds
  its ControllerConfig on these) and add-controller (cli/quorum) parse listeners and directories here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
DEFAULT_LISTENERS = "PLAINTEXT://:9092"
MAP_KEY = "listener.security.protocol.map"
# SocketServerConfigs.URI_PARSE_REGEXP, matched against a whole entry
ENDPOINT = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
CSV = re.compile(r"\s*,\s*")
KAFKA_DEFAULT_LOG_DIR = "/tmp/kafka-logs"


class ConfigError(ValueError):
    """A server configuration that cannot be used: what KafkaConfig's constructor would throw, as its message
    (kafka-storage), or a setting kafka-controller cannot serve."""


def validate(props: dict[str, str]) -> None:
    """Raise ConfigError when KafkaConfig would refuse `props`."""
    node_id, broker_id = _int(props, "node.id", "broker.id"), _int(props, "broker.id", "node.id")
    roles = process_roles(props)
    protocols = security_protocol_map(props, roles)
    endpoints(props.get("listeners", DEFAULT_LISTENERS).strip(), protocols)
    if node_id != broker_id:
        raise ConfigError("You must set `node.id` to the same value as `broker.id`.")
    if not roles:
        if "zookeeper.connect" not in props:
            raise ConfigError("Missing required configuration `zookeeper.connect` which has no default value.")
    elif node_id < 0:
        raise ConfigError("Missing configuration `node.id` which is required when `process.roles` is defined "
                          "(i.e. when running in KRaft mode).")
    if props.get("advertised.listeners") is not None:
        endpoints(props["advertised.listeners"].strip(), protocols)


def process_roles(props: dict[str, str]) -> list[str]:
    """Return process.roles as ConfigDef parses a LIST, refusing unknown roles as parseProcessRoles does."""
    text = props.get("process.roles", "").strip()
    roles = CSV.split(text) if text else []
    for role in roles:
        if role not in ("broker", "controller"):
            raise ConfigError(f"Unknown process role '{role}' (only 'broker' and 'controller' are allowed roles)")
    return roles


def _int(props: dict[str, str], key: str, synonym: str) -> int:
    """Parse an INT setting as ConfigDef does (trimmed), after populateSynonyms: node.id and broker.id stand in
    for each other when only one is set; -1 when neither is."""
    text = props.get(key, props.get(synonym))
    if text is None:
        return -1
    try:
        value = int(text.strip())
    except ValueError:
        value = None
    if value is None or not -2**31 <= value < 2**31:
        raise ConfigError(f"Invalid value {text.strip()} for configuration {key}: Not a number of type INT")
    return value


def security_protocol_map(props: dict[str, str], roles: list[str]) -> dict[str, str]:
    """Return KafkaConfig.effectiveListenerSecurityProtocolMap: listener name -> protocol."""
    mapping = {}
    for name, protocol in _csv_map(props.get(MAP_KEY, DEFAULT_PROTOCOL_MAP).strip()).items():
        if protocol.upper() not in PROTOCOLS:
            raise ConfigError(f"Invalid security protocol `{protocol}` defined in {MAP_KEY}")
        mapping[name.upper()] = protocol.upper()
    if roles and MAP_KEY not in props:        # KRaft with the default map: controller listeners get PLAINTEXT
        controllers = _controller_listener_names(props)
        listeners = [_listener_name(e) for e in _csv_list(props.get("listeners", DEFAULT_LISTENERS).strip())]
        secured = ("SSL", "SASL_SSL", "SASL_PLAINTEXT")
        if not any(name in secured for name in controllers + listeners):
            mapping.update({name: "PLAINTEXT" for name in controllers if name != "PLAINTEXT"})   # not normalised
    return mapping


def _controller_listener_names(props: dict[str, str]) -> list[str]:
    """Return controller.listener.names split on commas as KafkaConfig does (no trimming of each name)."""
    text = props.get("controller.listener.names", "").strip()
    return text.split(",") if text else []


def _csv_map(text: str) -> dict[str, str]:
    """Parse `k:v,k:v` as Kafka's Csv.parseCsvMap (the last colon splits), with getMap's error text."""
    if not text:
        return {}
    result = {}
    for item in CSV.split(text):
        key, colon, value = item.rpartition(":")
        if not colon:
            raise ConfigError(f"Error parsing configuration property '{MAP_KEY}': begin 0, end -1, length "
                              f"{len(item)}")
        result[key.strip()] = value.strip()
    return result


def _csv_list(text: str) -> list[str]:
    """Split as Kafka's Csv.parseCsvList: on commas with their spaces, empty items dropped."""
    return [item for item in CSV.split(text) if item] if text else []


def _listener_name(entry: str) -> str:
    """Return EndPoint.parseListenerName of one listener entry (upper-cased)."""
    match = ENDPOINT.fullmatch(entry)
    if match is None:
        raise ConfigError(f"Unable to parse a listener name from {entry}")
    return match.group(1).upper()


def endpoints(text: str, protocols: dict[str, str]) -> list[tuple[str, str, int]]:
    """Return (name, host, port) of each listener in `text`, or fail as CoreUtils.listenerListToEndPoints."""
    result = []
    for entry in _csv_list(text):
        match = ENDPOINT.fullmatch(entry)
        if match is None:
            problem = f"Unable to parse {entry} to a broker endpoint"
        elif match.group(1).upper() not in protocols:
            problem = f"No security protocol defined for listener {match.group(1).upper()}"
        else:
            result.append((match.group(1).upper(), match.group(2), int(match.group(3))))
            continue
        raise ConfigError(f"Error creating broker listeners from '{text}': {problem}")
    return result


# ---------------------------------------------------------------- listeners and directories


@dataclass(frozen=True)
class Endpoint:
    """One listener endpoint `NAME://host:port` (the name upper-cased, as Kafka's ListenerName)."""

    name: str
    host: str
    port: int


def parse_listeners(text: str) -> tuple[Endpoint, ...]:
    """Parse `NAME://host:port,...` (IPv6 hosts in brackets; an empty host means all interfaces)."""
    out = []
    for item in (s.strip() for s in text.split(",") if s.strip()):
        name, sep, rest = item.partition("://")
        host, _, port = rest.rpartition(":")
        if not sep or not port.isdigit():
            raise ConfigError(f"Unable to parse {item} to a broker endpoint")
        out.append(Endpoint(name.strip().upper(), host.strip("[]"), int(port)))
    return tuple(out)


def csv_setting(props: dict[str, str], key: str) -> tuple[str, ...]:
    """Return a comma-separated setting's items, trimmed, empty ones dropped."""
    return tuple(_csv_list(props.get(key, "").strip()))


def log_dirs(props: dict[str, str]) -> tuple[str, ...]:
    """Return log.dirs, else log.dir, else Kafka's default /tmp/kafka-logs."""
    return csv_setting(props, "log.dirs") or csv_setting(props, "log.dir") or (KAFKA_DEFAULT_LOG_DIR,)


def metadata_log_dir(props: dict[str, str]) -> str:
    """Return metadata.log.dir, defaulting to the first log dir."""
    return props.get("metadata.log.dir", "").strip() or log_dirs(props)[0]


class ServerProperties:
    """A view of server properties: the settings kafka-storage reads, and the log directories every tool reads."""

    def __init__(self, props: dict[str, str]):
        self.props = props

    @property
    def process_roles(self) -> list[str]:
        """Return process.roles."""
        return list(csv_setting(self.props, "process.roles"))

    @property
    def node_id(self) -> int:
        """Return node.id (or broker.id; -1 if neither), already checked by validate()."""
        text = self.props.get("node.id", self.props.get("broker.id"))
        return -1 if text is None else int(text.strip())

    @property
    def cluster_id(self) -> str | None:
        """Return cluster.id when the file sets one (Kafka's server config has no such key; some set it anyway)."""
        return self.props.get("cluster.id", "").strip() or None

    @property
    def uses_default_log_dir(self) -> bool:
        """Tell whether neither log.dirs nor log.dir is set, so Kafka's default /tmp/kafka-logs is used."""
        return not (list(csv_setting(self.props, "log.dirs")) or list(csv_setting(self.props, "log.dir")))

    @property
    def log_dirs(self) -> list[str]:
        """Return log.dirs, else log.dir, else Kafka's default /tmp/kafka-logs."""
        return list(log_dirs(self.props))

    @property
    def metadata_log_dir(self) -> str:
        """Return metadata.log.dir, defaulting to the first log dir."""
        return metadata_log_dir(self.props)

    def directories(self) -> list[str]:
        """Return the sorted set of log dirs plus metadata.log.dir if set (configToLogDirectories)."""
        dirs = set(self.log_dirs)
        if self.props.get("metadata.log.dir", "").strip():
            dirs.add(self.props["metadata.log.dir"].strip())
        return sorted(dirs)

    @property
    def listener_name(self) -> str | None:
        """Return the first name in controller.listener.names."""
        names = list(csv_setting(self.props, "controller.listener.names"))
        return names[0] if names else None

    @property
    def unstable_enabled(self) -> bool:
        """Return unstable.feature.versions.enable (also accepts the older unstable.metadata.versions.enable)."""
        return any(self.props.get(k, "false").strip().lower() == "true"
                   for k in ("unstable.feature.versions.enable", "unstable.metadata.versions.enable"))

    def controller_endpoint(self) -> tuple[str, int]:
        """Return host and port of the first advertised controller listener (host 'localhost' if empty)."""
        names = list(csv_setting(self.props, "controller.listener.names"))
        wanted = {n.upper() for n in names}
        controllers = [e for e in parse_listeners(self.props.get("listeners", "")) if e.name in wanted]
        if not controllers:
            raise ConfigError("No controller listeners found.")
        advertised = {e.name: e for e in parse_listeners(self.props.get("advertised.listeners", ""))}
        chosen = advertised.get(controllers[0].name, controllers[0])
        return chosen.host or "localhost", chosen.port
