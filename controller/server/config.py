"""The controller's settings, read from Kafka's server .properties with Kafka's names, defaults and messages.

Rules:
- Every setting keeps Kafka's property name and default; unknown properties are ignored, as Kafka warns.
- `kraftsman.raft.kafka.version=3.9` (for tests of mixed quorums) makes this voter speak only what Kafka 3.9
  speaks on the Raft wire: Vote up to v1 both ways and no pre-vote of its own; the default is 4.0.
- `kraftsman.kafka.version` (3.9, 4.0, 4.1, 4.2; kafka-controller sets it from KRAFTSMAN_KAFKA_VERSION unless the
  file does) names the Kafka release this controller speaks for: its metadata.version and feature ranges, the API
  versions it advertises, UpdateFeatures' rules, the activation records and snapshots it writes. Default 3.9.
- Only `process.roles=controller` is served (a broker or combined node is refused with a clear message).
- Errors are ConfigError with one line in Kafka's words (`Invalid value X for configuration Y: ...`).
- The metadata log lives in `<metadata.log.dir or first of log.dirs>/__cluster_metadata-0`.
- Every listener has a security protocol from `listener.security.protocol.map` (Kafka's default map; without
  an explicit map and with no SSL/SASL listener, controller listeners are PLAINTEXT, as Kafka's
  effectiveListenerSecurityProtocolMap); a listener the map leaves out is a ConfigError here. The TLS and SASL
  settings themselves are checked when the server starts (listener_security.check, from ControllerServer), so a
  bad key file is a ConfigError before any socket opens. Inter-controller Raft traffic uses the first
  controller listener; when it is not PLAINTEXT the controllers log in with the client settings of the same file
  (client_security).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kraftsman.storage.server_properties import (
    PROTOCOLS,
    ConfigError,
    Endpoint,
    csv_setting,
    log_dirs,
    metadata_log_dir,
    parse_listeners,
)

__all__ = ["ConfigError", "ControllerConfig", "Endpoint", "from_properties", "parse_listeners", "parse_voters"]

METADATA_PARTITION = "__cluster_metadata-0"


@dataclass(frozen=True)
class ControllerConfig:
    """Everything the controller process needs from its .properties file."""

    node_id: int
    process_roles: tuple[str, ...]
    listeners: tuple[Endpoint, ...]
    controller_listener_names: tuple[str, ...]
    static_voters: dict = field(default_factory=dict)       # id -> (host, port); controller.quorum.voters
    bootstrap_servers: tuple = ()                           # (host, port); controller.quorum.bootstrap.servers
    metadata_log_dir: str = "/tmp/kafka-logs"
    log_dirs: tuple[str, ...] = ("/tmp/kafka-logs",)
    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20
    append_linger_ms: int = 25
    session_timeout_ms: int = 9000
    heartbeat_interval_ms: int = 2000
    snapshot_max_bytes: int = 20 * 1024 * 1024
    snapshot_interval_ms: int = 3_600_000
    segment_bytes: int = 1024 * 1024 * 1024
    retention_max_bytes: int = 100 * 1024 * 1024     # metadata.max.retention.bytes (LONG, no validator)
    retention_millis: int = 604_800_000              # metadata.max.retention.ms (LONG, no validator)
    max_idle_interval_ms: int = 500
    socket_request_max_bytes: int = 104_857_600
    connections_max_idle_ms: int = 600_000
    max_connections: int = 2**31 - 1
    max_connections_per_ip: int = 2**31 - 1
    num_partitions: int = 1
    default_replication_factor: int = 1
    min_insync_replicas: int = 1
    unclean_leader_election: bool = False
    unclean_leader_election_interval_ms: int = 300_000
    auto_leader_rebalance: bool = True
    leader_imbalance_check_interval_s: int = 300
    delete_topic_enable: bool = True
    delegation_token_secret_key: str | None = field(default=None, repr=False)
    delegation_token_max_lifetime_ms: int = 604_800_000
    delegation_token_expiry_time_ms: int = 86_400_000
    delegation_token_expiry_check_interval_ms: int = 3_600_000
    security_protocols: dict = field(default_factory=dict)  # listener name -> PLAINTEXT/SSL/SASL_PLAINTEXT/SASL_SSL
    raft_kafka_version: str = "4.0"                        # kraftsman.raft.kafka.version: 3.9 or 4.0
    kafka_version: str = "3.9"               # kraftsman.kafka.version (KRAFTSMAN_KAFKA_VERSION): the release served
    unstable_feature_versions: bool = False  # unstable.feature.versions.enable
    props: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def partition_dir(self) -> Path:
        """Return the `__cluster_metadata-0` directory."""
        return Path(self.metadata_log_dir) / METADATA_PARTITION

    def controller_listener(self) -> Endpoint:
        """Return the first listener named in controller.listener.names."""
        for name in self.controller_listener_names:
            for ep in self.listeners:
                if ep.name == name:
                    return ep
        raise ConfigError("controller.listener.names must contain at least one value appearing in the "
                          "'listeners' configuration when running the KRaft controller role")

    def security_protocol(self, listener: str) -> str:
        """Return the security protocol of a listener (PLAINTEXT when not mapped)."""
        return self.security_protocols.get(listener) or "PLAINTEXT"

    def raft_config(self, cluster_id: str, directory_id, host: str, *, tick_ms: int, high_watermark_linger_ms: int):
        """Return the raft core's RaftConfig: this node advertised at `host` on the first controller listener."""
        from kraftsman.controller.raft.config import RaftConfig

        name, port = self.controller_listener().name, self.controller_listener().port
        return RaftConfig(
            node_id=self.node_id, voters=tuple(sorted(self.static_voters)), cluster_id=cluster_id,
            directory_id=directory_id, endpoints=((name, host, port),),
            static_endpoints=tuple((i, ((name, *hp),)) for i, hp in sorted(self.static_voters.items())),
            bootstrap_voters=tuple(-2 - i for i in range(len(self.bootstrap_servers))), tick_ms=tick_ms,
            election_timeout_ms=self.election_timeout_ms, election_backoff_max_ms=self.election_backoff_max_ms,
            retry_backoff_ms=max(self.retry_backoff_ms, tick_ms), fetch_timeout_ms=self.fetch_timeout_ms,
            request_timeout_ms=self.request_timeout_ms, high_watermark_linger_ms=high_watermark_linger_ms,
            pre_vote=self.raft_kafka_version != "3.9",
            retention_max_bytes=self.retention_max_bytes, retention_millis=self.retention_millis)

    def quorum_config(self):
        """Return the quorum controller's QuorumConfig."""
        from kraftsman.controller.quorum.context import QuorumConfig

        return QuorumConfig(session_timeout_ms=self.session_timeout_ms,
                            heartbeat_interval_ms=self.heartbeat_interval_ms,
                            default_replication_factor=self.default_replication_factor,
                            num_partitions=self.num_partitions, min_insync_replicas=self.min_insync_replicas,
                            unclean_leader_election=self.unclean_leader_election,
                            unclean_leader_election_interval_ms=self.unclean_leader_election_interval_ms,
                            auto_leader_rebalance=self.auto_leader_rebalance,
                            leader_imbalance_check_interval_ms=self.leader_imbalance_check_interval_s * 1000,
                            delete_topic_enable=self.delete_topic_enable,
                            delegation_token_secret_key=self.delegation_token_secret_key,
                            delegation_token_max_lifetime_ms=self.delegation_token_max_lifetime_ms,
                            delegation_token_expiry_time_ms=self.delegation_token_expiry_time_ms,
                            delegation_token_expiry_check_interval_ms=self.delegation_token_expiry_check_interval_ms,
                            kafka_version=self.kafka_version,
                            unstable_feature_versions=self.unstable_feature_versions,
                            server_properties=tuple(sorted(self.props.items())))


_INTS = {
    "controller.quorum.election.timeout.ms": "election_timeout_ms",
    "controller.quorum.fetch.timeout.ms": "fetch_timeout_ms",
    "controller.quorum.election.backoff.max.ms": "election_backoff_max_ms",
    "controller.quorum.request.timeout.ms": "request_timeout_ms",
    "controller.quorum.retry.backoff.ms": "retry_backoff_ms",
    "controller.quorum.append.linger.ms": "append_linger_ms",
    "broker.session.timeout.ms": "session_timeout_ms",
    "broker.heartbeat.interval.ms": "heartbeat_interval_ms",
    "metadata.log.max.record.bytes.between.snapshots": "snapshot_max_bytes",
    "metadata.log.max.snapshot.interval.ms": "snapshot_interval_ms",
    "metadata.log.segment.bytes": "segment_bytes",
    "metadata.max.retention.bytes": "retention_max_bytes",
    "metadata.max.retention.ms": "retention_millis",
    "metadata.max.idle.interval.ms": "max_idle_interval_ms",
    "socket.request.max.bytes": "socket_request_max_bytes",
    "connections.max.idle.ms": "connections_max_idle_ms",
    "max.connections": "max_connections",
    "max.connections.per.ip": "max_connections_per_ip",
    "num.partitions": "num_partitions",
    "default.replication.factor": "default_replication_factor",
    "min.insync.replicas": "min_insync_replicas",
    "leader.imbalance.check.interval.seconds": "leader_imbalance_check_interval_s",
    "unclean.leader.election.interval.ms": "unclean_leader_election_interval_ms",
    "delegation.token.max.lifetime.ms": "delegation_token_max_lifetime_ms",
    "delegation.token.expiry.time.ms": "delegation_token_expiry_time_ms",
    "delegation.token.expiry.check.interval.ms": "delegation_token_expiry_check_interval_ms",
}
# besides *.bytes, *interval.ms, delegation.*
_LONGS = {"metadata.max.retention.bytes", "metadata.max.retention.ms", "leader.imbalance.check.interval.seconds"}
_LONG_RANGE = range(-(1 << 63), 1 << 63)
_BOOLS = {"unclean.leader.election.enable": "unclean_leader_election", "delete.topic.enable": "delete_topic_enable",
          "auto.leader.rebalance.enable": "auto_leader_rebalance",
          "unstable.feature.versions.enable": "unstable_feature_versions"}


def _int(props: dict, key: str) -> int:
    text = props[key].strip()
    long = key in _LONGS or key.endswith(('.bytes', 'interval.ms')) or key.startswith('delegation.')
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or (long and value not in _LONG_RANGE):
        raise ConfigError(f"Invalid value {text} for configuration {key}: Not a number of type "
                          f"{'LONG' if long else 'INT'}")
    return value


def _bool(props: dict, key: str) -> bool:
    text = props[key].strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(f"Invalid value {props[key].strip()} for configuration {key}: Expected value to be "
                          "either true or false")
    return text == "true"


def parse_voters(text: str) -> dict[int, tuple[str, int]]:
    """Parse controller.quorum.voters `id@host:port,...` into {id: (host, port)}."""
    voters: dict[int, tuple[str, int]] = {}
    for item in (s.strip() for s in text.split(",") if s.strip()):
        node, at, address = item.partition("@")
        host, _, port = address.rpartition(":")
        if not at or not node.strip().isdigit() or not port.isdigit() or not host:
            raise ConfigError(f"Invalid value {text} for configuration controller.quorum.voters: Unable to "
                              f"parse {item}: the format is id@host:port")
        voters[int(node)] = (host.strip("[]"), int(port))
    return voters


def parse_bootstrap_servers(text: str) -> tuple[tuple[str, int], ...]:
    """Parse controller.quorum.bootstrap.servers `host:port,...`."""
    out = []
    for item in (s.strip() for s in text.split(",") if s.strip()):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"Invalid value {text} for configuration controller.quorum.bootstrap.servers: "
                              f"Unable to parse {item} as host:port")
        out.append((host.strip("[]"), int(port)))
    return tuple(out)


def from_properties(props: dict) -> ControllerConfig:
    """Build and check a ControllerConfig from the server properties."""
    node_text = props.get("node.id", props.get("broker.id"))
    if node_text is None:
        raise ConfigError('Missing required configuration "node.id" which has no default value.')
    roles = csv_setting(props, "process.roles")
    if roles != ("controller",):
        raise ConfigError(f"process.roles must be 'controller' for kafka-controller (got "
                          f"'{','.join(roles)}'); brokers are not served by kraftsman")
    values = dict(
        node_id=_int(props | {"node.id": node_text}, "node.id"), process_roles=roles,
        listeners=parse_listeners(props.get("listeners", "")),
        controller_listener_names=tuple(n.upper() for n in csv_setting(props, "controller.listener.names")),
        static_voters=parse_voters(props.get("controller.quorum.voters", "")),
        bootstrap_servers=parse_bootstrap_servers(props.get("controller.quorum.bootstrap.servers", "")),
        metadata_log_dir=metadata_log_dir(props), log_dirs=log_dirs(props), props=props,
        delegation_token_secret_key=(props.get("delegation.token.secret.key")  # or its deprecated alias
                                     or props.get("delegation.token.master.key") or None))
    values["raft_kafka_version"] = _raft_kafka_version(props)
    values["kafka_version"] = _kafka_version(props)
    values["security_protocols"] = listener_protocols(props, values["listeners"],
                                                         values["controller_listener_names"])
    values.update({attr: _int(props, key) for key, attr in _INTS.items() if key in props})
    values.update({attr: _bool(props, key) for key, attr in _BOOLS.items() if key in props})
    config = ControllerConfig(**values)
    _check(config)
    return config


def _raft_kafka_version(props: dict) -> str:
    key = "kraftsman.raft.kafka.version"
    text = props.get(key, "4.0").strip()
    if text not in ("3.9", "4.0"):
        raise ConfigError(f"Invalid value {text} for configuration {key}: String must be one of: 3.9, 4.0")
    return text


def _kafka_version(props: dict) -> str:
    """Return the Kafka release this controller speaks for (kraftsman.kafka.version, default 3.9)."""
    from kraftsman.storage.releases import DEFAULT_RELEASE, RELEASES

    key = "kraftsman.kafka.version"
    text = props.get(key, DEFAULT_RELEASE).strip()
    if text not in RELEASES:
        raise ConfigError(f"Invalid value {text} for configuration {key}: String must be one of: "
                          f"{', '.join(RELEASES)}")
    return text


def _check(config: ControllerConfig) -> None:
    if not config.controller_listener_names:
        raise ConfigError("controller.listener.names must not be empty when running in KRaft mode")
    config.controller_listener()
    if not config.static_voters and not config.bootstrap_servers:
        raise ConfigError("If using process.roles, either controller.quorum.bootstrap.servers must contain the "
                          "set of bootstrap controllers or controller.quorum.voters must contain a parseable set "
                          "of controllers.")
    if config.static_voters and config.node_id not in config.static_voters:
        raise ConfigError(f"If process.roles contains just the 'controller' role, the node id {config.node_id} "
                          "must be included in the set of voters controller.quorum.voters="
                          f"{set(config.static_voters)}")
    _check_security(config)
    for key in ("election_timeout_ms", "fetch_timeout_ms", "session_timeout_ms", "heartbeat_interval_ms"):
        if getattr(config, key) <= 0:
            raise ConfigError(f"Invalid value {getattr(config, key)} for configuration {key}: must be positive")


def listener_protocols(props: dict, listeners, controller_names) -> dict[str, str | None]:
    """Return each listener's security protocol (None when the map has none), from the effective map
    (names normalised upper-case; server_properties.security_protocol_map keeps KafkaConfig's texts)."""
    key = "listener.security.protocol.map"
    mapping = {p: p for p in PROTOCOLS}
    if key in props:
        mapping = {}
        for item in (s.strip() for s in props[key].split(",") if s.strip()):
            name, sep, protocol = item.partition(":")
            if not sep or protocol.strip().upper() not in PROTOCOLS:
                raise ConfigError(f"Invalid value {props[key]} for configuration {key}: Map entry '{item}' is "
                                  f"not a valid listener:protocol pair (protocols: {', '.join(PROTOCOLS)})")
            mapping[name.strip().upper()] = protocol.strip().upper()
    elif not any(n in PROTOCOLS[1:] for n in (*controller_names, *(ep.name for ep in listeners))):
        mapping.update({n: "PLAINTEXT" for n in controller_names})
    return {ep.name: mapping.get(ep.name) for ep in listeners}   # None: checked by _check_security


def _check_security(config: ControllerConfig) -> None:
    for name, protocol in config.security_protocols.items():
        if protocol is None:
            raise ConfigError(f"No security protocol defined for listener {name}")
