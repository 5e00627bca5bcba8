"""Broker config definitions of Kafka 3.9 (KafkaConfig's non-internal keys): type, update mode, default.

Rules:
- One row per key a Kafka 3.9 controller lists for its own BROKER resource (314 keys): the name, the ConfigDef
  type, the update mode (r = read-only, b = per-broker, c = cluster-wide; b and c are DynamicBrokerConfig's
  dynamic configs) and the default as ConfigDef.convertToString renders it (`null`: no default; `""`: empty).
- Defaults are those of a JVM 11+ (ssl.protocol TLSv1.3, ssl.enabled.protocols TLSv1.2,TLSv1.3).
- A PASSWORD key, or a key whose type is unknown, is sensitive: its values are never shown (KafkaConfig.maybeSensitive).
- Node-dependent values (node.id, process.roles, listeners, ...) are not here: they come from the server properties.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

READ_ONLY, PER_BROKER, CLUSTER_WIDE = "r", "b", "c"
_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)")
_SUBSTITUTIONS = {
    "$ASSIGNORS": "org.apache.kafka.coordinator.group.assignor.UniformAssignor,"
                  "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
    "$RLMM": "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager",
    "$PRINCIPAL_BUILDER": "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
    "$PROTOCOL_MAP": "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
}


@dataclass(frozen=True)
class BrokerConfigDef:
    """One broker config: name, ConfigDef type, update mode and default text (None: no default)."""

    name: str
    type: str
    mode: str
    default: str | None

    @property
    def dynamic(self) -> bool:
        """Tell whether the key can be altered at run time (DynamicBrokerConfig.AllDynamicConfigs)."""
        return self.mode != READ_ONLY


# name                                                       type     mode default
_TABLE = """
advertised.listeners                                         STRING   b   null
alter.config.policy.class.name                               CLASS    r   null
alter.log.dirs.replication.quota.window.num                  INT      r   11
alter.log.dirs.replication.quota.window.size.seconds         INT      r   1
authorizer.class.name                                        STRING   r   ""
auto.create.topics.enable                                    BOOLEAN  r   true
auto.include.jmx.reporter                                    BOOLEAN  r   true
auto.leader.rebalance.enable                                 BOOLEAN  r   true
background.threads                                           INT      c   10
broker.heartbeat.interval.ms                                 INT      r   2000
broker.id                                                    INT      r   -1
broker.id.generation.enable                                  BOOLEAN  r   true
broker.rack                                                  STRING   r   null
broker.session.timeout.ms                                    INT      r   9000
client.quota.callback.class                                  CLASS    r   null
compression.gzip.level                                       INT      c   -1
compression.lz4.level                                        INT      c   9
compression.type                                             STRING   c   producer
compression.zstd.level                                       INT      c   3
connection.failed.authentication.delay.ms                    INT      r   100
connections.max.idle.ms                                      LONG     r   600000
connections.max.reauth.ms                                    LONG     r   0
control.plane.listener.name                                  STRING   r   null
controlled.shutdown.enable                                   BOOLEAN  r   true
controlled.shutdown.max.retries                              INT      r   3
controlled.shutdown.retry.backoff.ms                         LONG     r   5000
controller.listener.names                                    STRING   r   null
controller.quorum.append.linger.ms                           INT      r   25
controller.quorum.bootstrap.servers                          LIST     r   ""
controller.quorum.election.backoff.max.ms                    INT      r   1000
controller.quorum.election.timeout.ms                        INT      r   1000
controller.quorum.fetch.timeout.ms                           INT      r   2000
controller.quorum.request.timeout.ms                         INT      r   2000
controller.quorum.retry.backoff.ms                           INT      r   20
controller.quorum.voters                                     LIST     r   ""
controller.quota.window.num                                  INT      r   11
controller.quota.window.size.seconds                         INT      r   1
controller.socket.timeout.ms                                 INT      r   30000
create.topic.policy.class.name                               CLASS    r   null
default.replication.factor                                   INT      r   1
delegation.token.expiry.check.interval.ms                    LONG     r   3600000
delegation.token.expiry.time.ms                              LONG     r   86400000
delegation.token.master.key                                  PASSWORD r   null
delegation.token.max.lifetime.ms                             LONG     r   604800000
delegation.token.secret.key                                  PASSWORD r   null
delete.records.purgatory.purge.interval.requests             INT      r   1
delete.topic.enable                                          BOOLEAN  r   true
early.start.listeners                                        STRING   r   null
eligible.leader.replicas.enable                              BOOLEAN  r   false
fetch.max.bytes                                              INT      r   57671680
fetch.purgatory.purge.interval.requests                      INT      r   1000
group.consumer.assignors                                     LIST     r   $ASSIGNORS
group.consumer.heartbeat.interval.ms                         INT      r   5000
group.consumer.max.heartbeat.interval.ms                     INT      r   15000
group.consumer.max.session.timeout.ms                        INT      r   60000
group.consumer.max.size                                      INT      r   2147483647
group.consumer.min.heartbeat.interval.ms                     INT      r   5000
group.consumer.min.session.timeout.ms                        INT      r   45000
group.consumer.session.timeout.ms                            INT      r   45000
group.coordinator.append.linger.ms                           INT      r   10
group.coordinator.rebalance.protocols                        LIST     r   classic
group.coordinator.threads                                    INT      r   1
group.initial.rebalance.delay.ms                             INT      r   3000
group.max.session.timeout.ms                                 INT      r   1800000
group.max.size                                               INT      r   2147483647
group.min.session.timeout.ms                                 INT      r   6000
group.share.delivery.count.limit                             INT      r   5
group.share.heartbeat.interval.ms                            INT      r   5000
group.share.max.groups                                       SHORT    r   10
group.share.max.heartbeat.interval.ms                        INT      r   15000
group.share.max.record.lock.duration.ms                      INT      r   60000
group.share.max.session.timeout.ms                           INT      r   60000
group.share.max.size                                         SHORT    r   200
group.share.min.heartbeat.interval.ms                        INT      r   5000
group.share.min.record.lock.duration.ms                      INT      r   15000
group.share.min.session.timeout.ms                           INT      r   45000
group.share.partition.max.record.locks                       INT      r   200
group.share.record.lock.duration.ms                          INT      r   30000
group.share.session.timeout.ms                               INT      r   45000
initial.broker.registration.timeout.ms                       INT      r   60000
inter.broker.listener.name                                   STRING   r   null
inter.broker.protocol.version                                STRING   r   3.9-IV0
kafka.metrics.polling.interval.secs                          INT      r   10
kafka.metrics.reporters                                      LIST     r   ""
leader.imbalance.check.interval.seconds                      LONG     r   300
leader.imbalance.per.broker.percentage                       INT      r   10
listener.security.protocol.map                               STRING   b   $PROTOCOL_MAP
listeners                                                    STRING   b   PLAINTEXT://:9092
log.cleaner.backoff.ms                                       LONG     c   15000
log.cleaner.dedupe.buffer.size                               LONG     c   134217728
log.cleaner.delete.retention.ms                              LONG     c   86400000
log.cleaner.enable                                           BOOLEAN  r   true
log.cleaner.io.buffer.load.factor                            DOUBLE   c   0.9
log.cleaner.io.buffer.size                                   INT      c   524288
log.cleaner.io.max.bytes.per.second                          DOUBLE   c   1.7976931348623157E308
log.cleaner.max.compaction.lag.ms                            LONG     c   9223372036854775807
log.cleaner.min.cleanable.ratio                              DOUBLE   c   0.5
log.cleaner.min.compaction.lag.ms                            LONG     c   0
log.cleaner.threads                                          INT      c   1
log.cleanup.policy                                           LIST     c   delete
log.dir                                                      STRING   r   /tmp/kafka-logs
log.dir.failure.timeout.ms                                   LONG     r   30000
log.dirs                                                     STRING   r   null
log.flush.interval.messages                                  LONG     c   9223372036854775807
log.flush.interval.ms                                        LONG     c   null
log.flush.offset.checkpoint.interval.ms                      INT      r   60000
log.flush.scheduler.interval.ms                              LONG     r   9223372036854775807
log.flush.start.offset.checkpoint.interval.ms                INT      r   60000
log.index.interval.bytes                                     INT      c   4096
log.index.size.max.bytes                                     INT      c   10485760
log.local.retention.bytes                                    LONG     c   -2
log.local.retention.ms                                       LONG     c   -2
log.message.downconversion.enable                            BOOLEAN  c   true
log.message.format.version                                   STRING   r   3.0-IV1
log.message.timestamp.after.max.ms                           LONG     c   9223372036854775807
log.message.timestamp.before.max.ms                          LONG     c   9223372036854775807
log.message.timestamp.difference.max.ms                      LONG     c   9223372036854775807
log.message.timestamp.type                                   STRING   c   CreateTime
log.preallocate                                              BOOLEAN  c   false
log.retention.bytes                                          LONG     c   -1
log.retention.check.interval.ms                              LONG     r   300000
log.retention.hours                                          INT      r   168
log.retention.minutes                                        INT      r   null
log.retention.ms                                             LONG     c   null
log.roll.hours                                               INT      r   168
log.roll.jitter.hours                                        INT      r   0
log.roll.jitter.ms                                           LONG     c   null
log.roll.ms                                                  LONG     c   null
log.segment.bytes                                            INT      c   1073741824
log.segment.delete.delay.ms                                  LONG     c   60000
max.connection.creation.rate                                 INT      c   2147483647
max.connections                                              INT      c   2147483647
max.connections.per.ip                                       INT      c   2147483647
max.connections.per.ip.overrides                             STRING   c   ""
max.incremental.fetch.session.cache.slots                    INT      r   1000
max.request.partition.size.limit                             INT      r   2000
message.max.bytes                                            INT      c   1048588
metadata.log.dir                                             STRING   r   null
metadata.log.max.record.bytes.between.snapshots              LONG     r   20971520
metadata.log.max.snapshot.interval.ms                        LONG     r   3600000
metadata.log.segment.bytes                                   INT      r   1073741824
metadata.log.segment.ms                                      LONG     r   604800000
metadata.max.idle.interval.ms                                INT      r   500
metadata.max.retention.bytes                                 LONG     r   104857600
metadata.max.retention.ms                                    LONG     r   604800000
metric.reporters                                             LIST     c   ""
metrics.num.samples                                          INT      r   2
metrics.recording.level                                      STRING   r   INFO
metrics.sample.window.ms                                     LONG     r   30000
min.insync.replicas                                          INT      c   1
node.id                                                      INT      r   -1
num.io.threads                                               INT      c   8
num.network.threads                                          INT      c   3
num.partitions                                               INT      r   1
num.recovery.threads.per.data.dir                            INT      c   1
num.replica.alter.log.dirs.threads                           INT      r   null
num.replica.fetchers                                         INT      c   1
offset.metadata.max.bytes                                    INT      r   4096
offsets.commit.required.acks                                 SHORT    r   -1
offsets.commit.timeout.ms                                    INT      r   5000
offsets.load.buffer.size                                     INT      r   5242880
offsets.retention.check.interval.ms                          LONG     r   600000
offsets.retention.minutes                                    INT      r   10080
offsets.topic.compression.codec                              INT      r   0
offsets.topic.num.partitions                                 INT      r   50
offsets.topic.replication.factor                             SHORT    r   3
offsets.topic.segment.bytes                                  INT      r   104857600
password.encoder.cipher.algorithm                            STRING   r   AES/CBC/PKCS5Padding
password.encoder.iterations                                  INT      r   4096
password.encoder.key.length                                  INT      r   128
password.encoder.keyfactory.algorithm                        STRING   r   null
password.encoder.old.secret                                  PASSWORD r   null
password.encoder.secret                                      PASSWORD r   null
principal.builder.class                                      CLASS    b   $PRINCIPAL_BUILDER
process.roles                                                LIST     r   ""
producer.id.expiration.ms                                    INT      c   86400000
producer.purgatory.purge.interval.requests                   INT      r   1000
queued.max.request.bytes                                     LONG     r   -1
queued.max.requests                                          INT      r   500
quota.window.num                                             INT      r   11
quota.window.size.seconds                                    INT      r   1
remote.fetch.max.wait.ms                                     INT      c   500
remote.log.index.file.cache.total.size.bytes                 LONG     c   1073741824
remote.log.manager.copier.thread.pool.size                   INT      r   -1
remote.log.manager.copy.max.bytes.per.second                 LONG     c   9223372036854775807
remote.log.manager.copy.quota.window.num                     INT      r   11
remote.log.manager.copy.quota.window.size.seconds            INT      r   1
remote.log.manager.expiration.thread.pool.size               INT      r   -1
remote.log.manager.fetch.max.bytes.per.second                LONG     c   9223372036854775807
remote.log.manager.fetch.quota.window.num                    INT      r   11
remote.log.manager.fetch.quota.window.size.seconds           INT      r   1
remote.log.manager.task.interval.ms                          LONG     r   30000
remote.log.manager.thread.pool.size                          INT      r   10
remote.log.metadata.custom.metadata.max.bytes                INT      r   128
remote.log.metadata.manager.class.name                       STRING   r   $RLMM
remote.log.metadata.manager.class.path                       STRING   r   null
remote.log.metadata.manager.impl.prefix                      STRING   r   rlmm.config.
remote.log.metadata.manager.listener.name                    STRING   r   null
remote.log.reader.max.pending.tasks                          INT      r   100
remote.log.reader.threads                                    INT      r   10
remote.log.storage.manager.class.name                        STRING   r   null
remote.log.storage.manager.class.path                        STRING   r   null
remote.log.storage.manager.impl.prefix                       STRING   r   rsm.config.
remote.log.storage.system.enable                             BOOLEAN  r   false
replica.fetch.backoff.ms                                     INT      r   1000
replica.fetch.max.bytes                                      INT      r   1048576
replica.fetch.min.bytes                                      INT      r   1
replica.fetch.response.max.bytes                             INT      r   10485760
replica.fetch.wait.max.ms                                    INT      r   500
replica.high.watermark.checkpoint.interval.ms                LONG     r   5000
replica.lag.time.max.ms                                      LONG     r   30000
replica.selector.class                                       STRING   r   null
replica.socket.receive.buffer.bytes                          INT      r   65536
replica.socket.timeout.ms                                    INT      r   30000
replication.quota.window.num                                 INT      r   11
replication.quota.window.size.seconds                        INT      r   1
request.timeout.ms                                           INT      r   30000
reserved.broker.max.id                                       INT      r   1000
sasl.client.callback.handler.class                           CLASS    r   null
sasl.enabled.mechanisms                                      LIST     b   GSSAPI
sasl.jaas.config                                             PASSWORD b   null
sasl.kerberos.kinit.cmd                                      STRING   b   /usr/bin/kinit
sasl.kerberos.min.time.before.relogin                        LONG     b   60000
sasl.kerberos.principal.to.local.rules                       LIST     b   DEFAULT
sasl.kerberos.service.name                                   STRING   b   null
sasl.kerberos.ticket.renew.jitter                            DOUBLE   b   0.05
sasl.kerberos.ticket.renew.window.factor                     DOUBLE   b   0.8
sasl.login.callback.handler.class                            CLASS    r   null
sasl.login.class                                             CLASS    r   null
sasl.login.connect.timeout.ms                                INT      r   null
sasl.login.read.timeout.ms                                   INT      r   null
sasl.login.refresh.buffer.seconds                            SHORT    b   300
sasl.login.refresh.min.period.seconds                        SHORT    b   60
sasl.login.refresh.window.factor                             DOUBLE   b   0.8
sasl.login.refresh.window.jitter                             DOUBLE   b   0.05
sasl.login.retry.backoff.max.ms                              LONG     r   10000
sasl.login.retry.backoff.ms                                  LONG     r   100
sasl.mechanism.controller.protocol                           STRING   r   GSSAPI
sasl.mechanism.inter.broker.protocol                         STRING   b   GSSAPI
sasl.oauthbearer.clock.skew.seconds                          INT      r   30
sasl.oauthbearer.expected.audience                           LIST     r   null
sasl.oauthbearer.expected.issuer                             STRING   r   null
sasl.oauthbearer.jwks.endpoint.refresh.ms                    LONG     r   3600000
sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms          LONG     r   10000
sasl.oauthbearer.jwks.endpoint.retry.backoff.ms              LONG     r   100
sasl.oauthbearer.jwks.endpoint.url                           STRING   r   null
sasl.oauthbearer.scope.claim.name                            STRING   r   scope
sasl.oauthbearer.sub.claim.name                              STRING   r   sub
sasl.oauthbearer.token.endpoint.url                          STRING   r   null
sasl.server.callback.handler.class                           CLASS    r   null
sasl.server.max.receive.size                                 INT      r   524288
security.inter.broker.protocol                               STRING   r   PLAINTEXT
security.providers                                           STRING   r   null
socket.connection.setup.timeout.max.ms                       LONG     r   30000
socket.connection.setup.timeout.ms                           LONG     r   10000
socket.listen.backlog.size                                   INT      r   50
socket.receive.buffer.bytes                                  INT      r   102400
socket.request.max.bytes                                     INT      r   104857600
socket.send.buffer.bytes                                     INT      r   102400
ssl.allow.dn.changes                                         BOOLEAN  r   false
ssl.allow.san.changes                                        BOOLEAN  r   false
ssl.cipher.suites                                            LIST     b   ""
ssl.client.auth                                              STRING   b   none
ssl.enabled.protocols                                        LIST     b   TLSv1.2,TLSv1.3
ssl.endpoint.identification.algorithm                        STRING   b   https
ssl.engine.factory.class                                     CLASS    b   null
ssl.key.password                                             PASSWORD b   null
ssl.keymanager.algorithm                                     STRING   b   SunX509
ssl.keystore.certificate.chain                               PASSWORD b   null
ssl.keystore.key                                             PASSWORD b   null
ssl.keystore.location                                        STRING   b   null
ssl.keystore.password                                        PASSWORD b   null
ssl.keystore.type                                            STRING   b   JKS
ssl.principal.mapping.rules                                  STRING   r   DEFAULT
ssl.protocol                                                 STRING   b   TLSv1.3
ssl.provider                                                 STRING   b   null
ssl.secure.random.implementation                             STRING   b   null
ssl.trustmanager.algorithm                                   STRING   b   PKIX
ssl.truststore.certificates                                  PASSWORD b   null
ssl.truststore.location                                      STRING   b   null
ssl.truststore.password                                      PASSWORD b   null
ssl.truststore.type                                          STRING   b   JKS
telemetry.max.bytes                                          INT      r   1048576
transaction.abort.timed.out.transaction.cleanup.interval.ms  INT      r   10000
transaction.max.timeout.ms                                   INT      r   900000
transaction.partition.verification.enable                    BOOLEAN  c   true
transaction.remove.expired.transaction.cleanup.interval.ms   INT      r   3600000
transaction.state.log.load.buffer.size                       INT      r   5242880
transaction.state.log.min.isr                                INT      r   2
transaction.state.log.num.partitions                         INT      r   50
transaction.state.log.replication.factor                     SHORT    r   3
transaction.state.log.segment.bytes                          INT      r   104857600
transactional.id.expiration.ms                               INT      r   604800000
unclean.leader.election.enable                               BOOLEAN  c   false
zookeeper.clientCnxnSocket                                   STRING   r   null
zookeeper.connect                                            STRING   r   null
zookeeper.connection.timeout.ms                              INT      r   null
zookeeper.max.in.flight.requests                             INT      r   10
zookeeper.metadata.migration.enable                          BOOLEAN  r   false
zookeeper.session.timeout.ms                                 INT      r   18000
zookeeper.set.acl                                            BOOLEAN  r   false
zookeeper.ssl.cipher.suites                                  LIST     r   null
zookeeper.ssl.client.enable                                  BOOLEAN  r   false
zookeeper.ssl.crl.enable                                     BOOLEAN  r   false
zookeeper.ssl.enabled.protocols                              LIST     r   null
zookeeper.ssl.endpoint.identification.algorithm              STRING   r   HTTPS
zookeeper.ssl.keystore.location                              STRING   r   null
zookeeper.ssl.keystore.password                              PASSWORD r   null
zookeeper.ssl.keystore.type                                  STRING   r   null
zookeeper.ssl.ocsp.enable                                    BOOLEAN  r   false
zookeeper.ssl.protocol                                       STRING   r   TLSv1.2
zookeeper.ssl.truststore.location                            STRING   r   null
zookeeper.ssl.truststore.password                            PASSWORD r   null
zookeeper.ssl.truststore.type                                STRING   r   null
"""


def _parse(row: str) -> BrokerConfigDef:
    name, kind, mode, default = row.split(None, 3)
    default = _SUBSTITUTIONS.get(default, default)
    return BrokerConfigDef(name, kind, mode, None if default == "null" else "" if default == '""' else default)


BROKER_CONFIGS = {d.name: d for d in map(_parse, _TABLE.strip().splitlines())}
STATIC_DEFAULTS = {name: d.default for name, d in BROKER_CONFIGS.items() if d.default is not None}
# SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only under a listener prefix (DynamicSecurityConfigs)
SECURITY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain", "ssl.keystore.key",
    "ssl.truststore.certificates"})
# listener-prefixed configs that stay cluster-wide (DynamicListenerConfig's ClusterLevelListenerConfigs)
CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset({"max.connections", "max.connection.creation.rate", "num.network.threads"})


def listener_base_name(name: str) -> str | None:
    """Return the config a `listener.name.<listener>.<config>` key overrides, or None for other keys."""
    match = _LISTENER_CONFIG.fullmatch(name)
    return match.group(1) if match else None


def broker_synonyms(name: str) -> list[str]:
    """Return a broker config's synonyms, most specific first (DynamicBrokerConfig.brokerConfigSynonyms)."""
    for group in _SYNONYM_GROUPS:
        if name in group:
            return list(group)
    if name == "log.flush.interval.ms":
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    base = listener_base_name(name)
    if base is not None:
        return [name, base, base[base.find(".") + 1:]]
    return [name]


_SYNONYM_GROUPS = (("log.roll.ms", "log.roll.hours"), ("log.roll.jitter.ms", "log.roll.jitter.hours"),
                   ("log.retention.ms", "log.retention.minutes", "log.retention.hours"))


def config_type(name: str) -> str | None:
    """Return a key's ConfigDef type, looking through listener prefixes; None when unknown (KafkaConfig.configType)."""
    for candidate in [name] + broker_synonyms(name):
        d = BROKER_CONFIGS.get(candidate)
        if d is not None:
            return d.type
    return None


def is_sensitive(kind: str | None) -> bool:
    """Tell whether values of this type are hidden (unknown type or PASSWORD)."""
    return kind is None or kind == "PASSWORD"
