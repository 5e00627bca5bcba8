"""Broker and controller registrations, heartbeats, fencing and DescribeCluster (Kafka's ClusterControlManager).

Rules:
- BrokerRegistration (Kafka 3.9 registerBroker): cluster id must match (INCONSISTENT_CLUSTER_ID); a live
  registration (unfenced, session not expired) of another incarnation -> DUPLICATE_BROKER_REGISTRATION;
  ZK brokers are refused (BROKER_ID_NOT_REGISTERED); from 3.7-IV2 log dirs are required, unreserved,
  distinct and not another broker's (INVALID_REGISTRATION); every feature range must hold the finalized
  level (UNSUPPORTED_VERSION). Otherwise a new fenced RegisterBrokerRecord whose broker epoch is its own
  offset, even for the same incarnation (a real 3.7 log re-registers one incarnation at offsets 8 and 11).
  Kafka 4.x: a new incarnation's RegisterBrokerRecord follows the partition changes of its predecessor's
  shutdown (partition_elections.on_broker_shutdown; unclean unless a v3+ PreviousBrokerEpoch names the
  registered epoch), and the broker epoch stays the offset of the first record.
- BrokerHeartbeat: unknown broker or another epoch -> STALE_BROKER_EPOCH; the state machine is in
  heartbeats.py; records come from broker_fencing.py; IsCaughtUp = CurrentMetadataOffset >= epoch. From
  3.7-IV2, the heartbeat's OfflineLogDirs (v1, KIP-858) are handled after the state change, on an image that
  holds it (Kafka computes both from the image before the heartbeat, which can repeat an ISR removal the
  fencing already wrote).
- Leases are touched when a heartbeat is handled, before its records commit (as Kafka does). A broker
  found in controlled shutdown with no known shutdown offset (after a failover) gets the log end.
- Start time (kraftsman, controller/image/start_time.py): the RegisterBrokerRecord written carries the request's
  StartTimeMs when it has one, else the start time already recorded for the same incarnation (a re-registration
  of a broker that did not restart), else the registration time (ctx.now_ms). It is in the metadata, so every
  voter, snapshot and failover reports the same value.
"""
from __future__ import annotations

from kraftsman.controller.image.start_time import with_start_time
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.protocol.uuids import uuid_str
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from . import broker_fencing, replication_control
from . import feature_levels as fc
from .api_error import ApiError
from .context import ControllerContext, ControllerResult, QuorumConfig
from .describe_cluster import describe_cluster
from .heartbeats import BrokerControlState, BrokerHeartbeatManager
from .staging import advance

PRE_MIGRATION = 2  # ZkMigrationState
# UnregisterBroker's message for an id that is not registered, per release (3.9's controller sent none)
UNREGISTER_UNKNOWN = {"3.9": "", **dict.fromkeys(("4.0", "4.1", "4.2"), "Broker ID {id} is not currently registered")}


def _reserved_directory(uuid: bytes) -> bool:
    """Kafka's DirectoryId.reserved: the most significant half is 0 and the least is below 100."""
    raw = bytes(uuid)
    return raw[:8] == bytes(8) and int.from_bytes(raw[8:], "big", signed=True) in range(100)


def _start_time(ctx: ControllerContext, request) -> int:
    """Return the start time to record for a registration (see Rules)."""
    if getattr(request, "start_time_ms", -1) >= 0:
        return request.start_time_ms
    existing = ctx.image.cluster.brokers.get(request.broker_id)
    if existing is not None and bytes(existing.record.incarnation_id) == bytes(request.incarnation_id) \
            and existing.start_time_ms >= 0:
        return existing.start_time_ms
    return ctx.now_ms


def _shutdown_records(ctx: ControllerContext, request) -> list:
    """Return Kafka 4.x's records for the shutdown of a broker's previous incarnation (none for the same
    incarnation, nor on a 3.9 controller); the shutdown was clean when a v3+ request's PreviousBrokerEpoch is the
    registered epoch (-2 when none is registered)."""
    existing = ctx.image.cluster.brokers.get(request.broker_id)
    if ctx.config.kafka_version == "3.9" or (
            existing is not None and bytes(existing.record.incarnation_id) == bytes(request.incarnation_id)):
        return []
    stored = existing.record.broker_epoch if existing is not None else -2
    clean = ctx.api_version >= 3 and stored == request.previous_broker_epoch
    return list(replication_control.on_broker_shutdown(ctx, request.broker_id, clean))


class ClusterControl:
    """Registrations, leases and fencing; one instance per controller process."""

    READ_ONLY: frozenset = frozenset({"DescribeCluster"})

    def __init__(self, config: QuorumConfig):
        self.config = config
        self.heartbeats = BrokerHeartbeatManager(config.session_timeout_ms)
        self.HANDLERS = {"BrokerRegistration": self.broker_registration, "BrokerHeartbeat": self.broker_heartbeat,
                         "UnregisterBroker": self.unregister_broker,
                         "ControllerRegistration": self.controller_registration, "DescribeCluster": describe_cluster}

    # ------------------------------------------------------------ activation
    def on_activate(self, ctx: ControllerContext) -> None:
        """Start fresh leases for every registered broker (Kafka activates its heartbeat manager so)."""
        self.heartbeats.reset(ctx.now_ms, ctx.image.cluster.brokers)

    def on_deactivate(self) -> None:
        """Drop the leases: only the active controller keeps them."""
        self.heartbeats.leases.clear()

    # ------------------------------------------------------------ BrokerRegistration
    def broker_registration(self, ctx: ControllerContext, request) -> ControllerResult:
        """Handle BrokerRegistration (v0-v4)."""
        cls = codec.message_class("BrokerRegistrationResponse")
        try:
            record = self._registration_record(ctx, request)
        except ApiError as e:
            return ControllerResult([], cls(throttle_time_ms=0, error_code=e.code, broker_epoch=-1))
        self.heartbeats.register(request.broker_id, ctx.now_ms)
        return ControllerResult(_shutdown_records(ctx, request) + [record], cls(
            throttle_time_ms=0, error_code=0, broker_epoch=record.message.broker_epoch))

    def _check_registration(self, ctx: ControllerContext, request) -> None:
        if request.cluster_id != ctx.cluster_id:
            raise ApiError(E.INCONSISTENT_CLUSTER_ID, f"Expected cluster ID {ctx.cluster_id}, but got "
                                                          f"cluster ID {request.cluster_id}")
        existing = ctx.image.cluster.brokers.get(request.broker_id)
        if (existing is not None and bytes(existing.record.incarnation_id) != bytes(request.incarnation_id)
                and self.heartbeats.has_valid_session(existing, ctx.now_ms)):
            raise ApiError(E.DUPLICATE_BROKER_REGISTRATION, "Another broker is registered with that broker id.")
        if request.is_migrating_zk_broker:
            raise ApiError(E.BROKER_ID_NOT_REGISTERED, "Controller does not support registering ZK brokers.")
        if ctx.image.features.zk_migration_state == PRE_MIGRATION:
            raise ApiError(E.BROKER_ID_NOT_REGISTERED, "Controller is in pre-migration mode and cannot "
                               "register KRaft brokers until the metadata migration is complete.")
        if fc.metadata_version(ctx.image) >= fc.DIRECTORY_ASSIGNMENT_LEVEL:
            self._check_log_dirs(ctx, request.broker_id, list(request.log_dirs or ()))

    @staticmethod
    def _check_log_dirs(ctx: ControllerContext, broker_id: int, log_dirs: list) -> None:
        if not log_dirs:
            raise ApiError(E.INVALID_REGISTRATION, "No directories specified in request")
        if any(_reserved_directory(d) for d in log_dirs):
            raise ApiError(E.INVALID_REGISTRATION, "Reserved directory ID in request")
        if len({bytes(d) for d in log_dirs}) != len(log_dirs):
            raise ApiError(E.INVALID_REGISTRATION, "Duplicate directory ID in request")
        for other in ctx.image.cluster.brokers.values():
            shared = {bytes(d) for d in other.record.log_dirs or ()} & {bytes(d) for d in log_dirs}
            if other.id != broker_id and shared:
                raise ApiError(E.INVALID_REGISTRATION, f"Broker {other.id} is already registered with "
                                                           f"directory {uuid_str(min(shared))}")

    def _registration_record(self, ctx: ControllerContext, request) -> ApiMessageAndVersion:
        self._check_registration(ctx, request)
        cls = codec.message_class("RegisterBrokerRecord")
        level = fc.metadata_version(ctx.image)
        features = fc.registration_features(ctx.image, request.broker_id, request.features, ctx.config.kafka_version)
        record = cls(
            broker_id=request.broker_id, is_migrating_zk_broker=False, incarnation_id=request.incarnation_id,
            broker_epoch=ctx.next_offset, rack=request.rack, fenced=True, in_controlled_shutdown=False,
            end_points=[cls.BrokerEndpoint(name=x.name, host=x.host, port=x.port, security_protocol=x.security_protocol)
                        for x in request.listeners],
            features=[cls.BrokerFeature(name=n, min_supported_version=lo, max_supported_version=hi)
                      for n, lo, hi in features],
            log_dirs=list(request.log_dirs or ()) if level >= fc.DIRECTORY_ASSIGNMENT_LEVEL else [])
        record = with_start_time(record, _start_time(ctx, request))
        return ApiMessageAndVersion(record, fc.register_broker_record_version(level))

    # ------------------------------------------------------------ BrokerHeartbeat
    def broker_heartbeat(self, ctx: ControllerContext, request) -> ControllerResult:
        """Handle BrokerHeartbeat (v0-v1)."""
        cls = codec.message_class("BrokerHeartbeatResponse")
        registration = ctx.image.cluster.brokers.get(request.broker_id)
        if registration is None or registration.record.broker_epoch != request.broker_epoch:
            return ControllerResult([], cls(throttle_time_ms=0, error_code=E.STALE_BROKER_EPOCH))
        broker_id = request.broker_id
        current = self.heartbeats.current_state(registration)
        lease = self.heartbeats.lease(broker_id, ctx.now_ms)
        if current is BrokerControlState.CONTROLLED_SHUTDOWN and lease.controlled_shutdown_offset < 0:
            lease.controlled_shutdown_offset = ctx.next_offset - 1  # known from the image only: the log end
        state = self.heartbeats.next_state(ctx.image, registration, request,
                                           lambda: broker_fencing.has_leaderships(ctx.image, broker_id))
        records = self._transition(ctx, broker_id, current, state)
        self.heartbeats.touch(broker_id, ctx.now_ms, state.fenced, request.current_metadata_offset)
        if fc.metadata_version(ctx.image) >= fc.DIRECTORY_ASSIGNMENT_LEVEL:
            records += broker_fencing.directories_offline(advance(ctx, records), broker_id, request.offline_log_dirs)
        if state is BrokerControlState.CONTROLLED_SHUTDOWN and lease.controlled_shutdown_offset < 0:
            lease.controlled_shutdown_offset = ctx.next_offset + len(records) - 1
        return ControllerResult(records, cls(
            throttle_time_ms=0, error_code=0, is_caught_up=request.current_metadata_offset >= request.broker_epoch,
            is_fenced=state.fenced, should_shut_down=state.should_shut_down))

    @staticmethod
    def _transition(ctx: ControllerContext, broker_id: int, current, state) -> list:
        if current is state:
            return []
        if state is BrokerControlState.UNFENCED:
            return broker_fencing.unfence(ctx, broker_id)
        if state is BrokerControlState.CONTROLLED_SHUTDOWN:
            return broker_fencing.controlled_shutdown(ctx, broker_id)
        return broker_fencing.fence(ctx, broker_id)  # FENCED or SHUTDOWN_NOW

    # ------------------------------------------------------------ UnregisterBroker
    def unregister_broker(self, ctx: ControllerContext, request) -> ControllerResult:
        """Handle UnregisterBroker (v0): unknown ids get BROKER_ID_NOT_REGISTERED with the release's message (3.9:
        empty; 4.x: BrokerIdNotRegisteredException's "Broker ID <id> is not currently registered")."""
        cls = codec.message_class("UnregisterBrokerResponse")
        if request.broker_id not in ctx.image.cluster.brokers:
            message = UNREGISTER_UNKNOWN[ctx.config.kafka_version].format(id=request.broker_id)
            return ControllerResult([], cls(throttle_time_ms=0, error_code=E.BROKER_ID_NOT_REGISTERED,
                                            error_message=message))
        records = broker_fencing.unregister(ctx, request.broker_id)
        self.heartbeats.remove(request.broker_id)
        return ControllerResult(records, cls(throttle_time_ms=0, error_code=0, error_message=""))

    # ------------------------------------------------------------ ControllerRegistration
    def controller_registration(self, ctx: ControllerContext, request) -> ControllerResult:
        """Handle ControllerRegistration (v0): a RegisterControllerRecord v0 from 3.7-IV0 on."""
        cls = codec.message_class("ControllerRegistrationResponse")
        if fc.metadata_version(ctx.image) < fc.CONTROLLER_REGISTRATION_LEVEL:
            return ControllerResult([], cls(throttle_time_ms=0, error_code=E.UNSUPPORTED_VERSION, error_message=(
                "The current MetadataVersion is too old to support controller registrations.")))
        rec = codec.message_class("RegisterControllerRecord")
        record = rec(
            controller_id=request.controller_id, incarnation_id=request.incarnation_id,
            zk_migration_ready=request.zk_migration_ready,
            end_points=[rec.ControllerEndpoint(name=x.name, host=x.host, port=x.port,
                                               security_protocol=x.security_protocol) for x in request.listeners],
            features=[rec.ControllerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                            max_supported_version=f.max_supported_version) for f in request.features])
        return ControllerResult([ApiMessageAndVersion(record, 0)], cls(throttle_time_ms=0, error_code=0,
                                                                       error_message=""))

    # ------------------------------------------------------------ fencing sweep
    def fence_stale_brokers(self, ctx: ControllerContext) -> list[ControllerResult]:
        """Fence every unfenced broker whose lease expired: one result each, each seeing the ones before."""
        results = []
        for broker_id in sorted(ctx.image.cluster.brokers):
            registration = ctx.image.cluster.brokers[broker_id]
            if registration.record.fenced or not self.heartbeats.is_expired(broker_id, ctx.now_ms):
                continue
            records = broker_fencing.fence(ctx, broker_id)
            lease = self.heartbeats.leases[broker_id]
            self.heartbeats.touch(broker_id, lease.last_contact_ms, True, lease.metadata_offset)
            results.append(ControllerResult(records, None))
            ctx = advance(ctx, records)
        return results
