"""Cluster: broker registrations (with fencing and controlled shutdown) and controller registrations.

Rules:
- A registration is its latest RegisterBrokerRecord/RegisterControllerRecord message with the later
  fencing, shutdown and log-dir changes folded in; write() gives that message back.
- Changes for an unknown broker or a stale epoch raise ImageReplayError, as Kafka's ClusterDelta does.
- Text forms follow BrokerRegistration.toString / ControllerRegistration.toString of Kafka 3.9 (kraftsman's start
  time, start_time.py, is not in them, as Kafka knows no such field).
"""
from __future__ import annotations

from kraftsman.storage.protocol.uuids import Uuid, uuid_str
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from . import render
from .errors import ImageReplayError
from .start_time import start_time_ms

FENCED, UNFENCED = 1, -1


class BrokerRegistration:
    """One broker's registration: the RegisterBrokerRecord message and its schema version."""

    __slots__ = ("record", "version")

    def __init__(self, record, version: int):
        self.record = record
        self.version = version

    @property
    def id(self) -> int:
        """Return the broker id."""
        return self.record.broker_id

    @property
    def start_time_ms(self) -> int:
        """Return kraftsman's start time of this incarnation (ms since the Unix epoch), -1 when unknown."""
        return start_time_ms(self.record)

    def __str__(self) -> str:
        r = self.record
        directories = sorted((Uuid(d) for d in (r.log_dirs or ())), key=Uuid.sort_key)
        return (f"BrokerRegistration(id={r.broker_id}, epoch={r.broker_epoch}, "
                f"incarnationId={uuid_str(r.incarnation_id)}, listeners=[{render.endpoints(r.end_points)}], "
                f"supportedFeatures={{{render.features(r.features)}}}, rack={render.optional(r.rack)}, "
                f"fenced={render.java_bool(r.fenced)}, "
                f"inControlledShutdown={render.java_bool(r.in_controlled_shutdown)}, "
                f"isMigratingZkBroker={render.java_bool(r.is_migrating_zk_broker)}, "
                f"directories={render.uuid_list(directories)})")

    def to_record(self) -> ApiMessageAndVersion:
        """Return the RegisterBrokerRecord that recreates this registration."""
        version = self.version
        if self.record.in_controlled_shutdown:
            version = max(version, 1)
        if self.record.log_dirs:
            version = max(version, 3)
        return ApiMessageAndVersion(self.record, version)


class ControllerRegistration:
    """One controller's registration (RegisterControllerRecord)."""

    __slots__ = ("record", "version")

    def __init__(self, record, version: int):
        self.record = record
        self.version = version

    def __str__(self) -> str:
        r = self.record
        return (f"ControllerRegistration(id={r.controller_id}, incarnationId={uuid_str(r.incarnation_id)}, "
                f"zkMigrationReady={render.java_bool(r.zk_migration_ready)}, "
                f"listeners=[{render.endpoints(r.end_points)}], "
                f"supportedFeatures={{{render.features(r.features)}}})")

    def to_record(self) -> ApiMessageAndVersion:
        """Return the RegisterControllerRecord."""
        return ApiMessageAndVersion(self.record, self.version)


class ClusterImage:
    """Brokers and controllers by id."""

    __slots__ = ("brokers", "controllers")

    def __init__(self, brokers: dict | None = None, controllers: dict | None = None):
        self.brokers = brokers if brokers is not None else {}
        self.controllers = controllers if controllers is not None else {}

    def is_empty(self) -> bool:
        """Tell whether no broker or controller is registered."""
        return not self.brokers and not self.controllers

    def write(self):
        """Yield the registration records, brokers then controllers, by id."""
        for broker_id in sorted(self.brokers):
            yield self.brokers[broker_id].to_record()
        for controller_id in sorted(self.controllers):
            yield self.controllers[controller_id].to_record()


class ClusterDelta:
    """Collect registration changes on top of a ClusterImage."""

    def __init__(self, image: ClusterImage):
        self.image = image
        self.brokers = None
        self.controllers = None

    def _brokers(self) -> dict:
        if self.brokers is None:
            self.brokers = dict(self.image.brokers)
        return self.brokers

    def replay_register_broker(self, message, version: int) -> None:
        """Apply RegisterBrokerRecord: the new registration replaces any older one."""
        self._brokers()[message.broker_id] = BrokerRegistration(message, version)

    def replay_unregister_broker(self, message) -> None:
        """Apply UnregisterBrokerRecord."""
        current = self._current(message.broker_id, message.broker_epoch, "UnregisterBrokerRecord")
        del self._brokers()[current.id]

    def replay_fence(self, message, fenced: bool) -> None:
        """Apply FenceBrokerRecord (fenced=True) or UnfenceBrokerRecord."""
        name = "FenceBrokerRecord" if fenced else "UnfenceBrokerRecord"
        current = self._current(message.id, message.epoch, name)
        self._change(current, fenced=fenced)

    def replay_registration_change(self, message) -> None:
        """Apply BrokerRegistrationChangeRecord (fenced -1/0/1, inControlledShutdown 0/1, logDirs)."""
        current = self._current(message.broker_id, message.broker_epoch, "BrokerRegistrationChangeRecord")
        changes = {}
        if message.fenced == FENCED:
            changes["fenced"] = True
        elif message.fenced == UNFENCED:
            changes["fenced"] = False
        if getattr(message, "in_controlled_shutdown", 0) == 1:
            changes["in_controlled_shutdown"] = True
        log_dirs = getattr(message, "log_dirs", None)
        if log_dirs:
            changes["log_dirs"] = list(log_dirs)
        self._change(current, **changes)

    def replay_register_controller(self, message, version: int) -> None:
        """Apply RegisterControllerRecord."""
        if self.controllers is None:
            self.controllers = dict(self.image.controllers)
        self.controllers[message.controller_id] = ControllerRegistration(message, version)

    def _current(self, broker_id: int, epoch: int, what: str) -> BrokerRegistration:
        brokers = self.image.brokers if self.brokers is None else self.brokers
        current = brokers.get(broker_id)
        if current is None:
            raise ImageReplayError(f"Unable to replay {what}: no broker registration found for {broker_id}")
        if current.record.broker_epoch != epoch:
            raise ImageReplayError(f"Unable to replay {what}: no broker registration with id {broker_id} "
                                   f"and epoch {epoch}")
        return current

    def _change(self, current: BrokerRegistration, **changes) -> None:
        if changes:
            self._brokers()[current.id] = BrokerRegistration(current.record.replace(**changes), current.version)

    def apply(self) -> ClusterImage:
        """Return the resulting ClusterImage."""
        return ClusterImage(self.image.brokers if self.brokers is None else self.brokers,
                            self.image.controllers if self.controllers is None else self.controllers)
