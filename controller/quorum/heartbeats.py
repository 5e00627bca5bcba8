"""Broker leases and the BrokerHeartbeat state machine (Kafka's BrokerHeartbeatManager).

Rules:
- Leases live in memory on the active controller only: last contact (ms), the broker's metadata offset
  and its controlled-shutdown offset (-1 when not shutting down). They start fresh when a controller
  becomes active (`reset`), so a failover does not fence every broker.
- A broker's current state comes from the image (fenced, in controlled shutdown) plus its lease:
  FENCED, UNFENCED, CONTROLLED_SHUTDOWN; a heartbeat moves it to one of those or SHUTDOWN_NOW with
  Kafka 3.9's calculateNextBrokerState:
    FENCED:    WantShutDown -> SHUTDOWN_NOW; !WantFence and CurrentMetadataOffset >= the offset of its
               RegisterBrokerRecord (= its broker epoch) -> UNFENCED; else FENCED.
    UNFENCED:  WantFence -> SHUTDOWN_NOW if WantShutDown else FENCED; WantShutDown -> CONTROLLED_SHUTDOWN
               while it leads a partition, else SHUTDOWN_NOW; else UNFENCED.
    CONTROLLED_SHUTDOWN: SHUTDOWN_NOW once it leads nothing and its controlled-shutdown offset is
               <= the lowest metadata offset of the active (unfenced, not shutting down) brokers.
- A session is valid while now - last contact <= broker.session.timeout.ms and the broker is unfenced.
"""
from __future__ import annotations

import enum
import sys
from dataclasses import dataclass


class BrokerControlState(enum.Enum):
    """Kafka's BrokerControlState: (fenced, in controlled shutdown, should shut down)."""

    FENCED = (True, False, False)
    UNFENCED = (False, False, False)
    CONTROLLED_SHUTDOWN = (False, True, False)
    SHUTDOWN_NOW = (True, True, True)

    @property
    def fenced(self) -> bool:
        """Tell whether the broker is fenced in this state."""
        return self.value[0]

    @property
    def should_shut_down(self) -> bool:
        """Tell whether the broker should shut down now."""
        return self.value[2]


@dataclass
class BrokerLease:
    """What the active controller remembers of one broker's heartbeats."""

    last_contact_ms: int
    metadata_offset: int = -1
    controlled_shutdown_offset: int = -1


class BrokerHeartbeatManager:
    """Leases by broker id."""

    def __init__(self, session_timeout_ms: int):
        self.session_timeout_ms = session_timeout_ms
        self.leases: dict[int, BrokerLease] = {}

    def reset(self, now_ms: int, broker_ids) -> None:
        """Start a fresh lease for every registered broker (controller activation)."""
        self.leases = {broker_id: BrokerLease(now_ms) for broker_id in broker_ids}

    def register(self, broker_id: int, now_ms: int) -> None:
        """Start a fresh lease for a new registration."""
        self.leases[broker_id] = BrokerLease(now_ms)

    def remove(self, broker_id: int) -> None:
        """Forget a broker (unregistered)."""
        self.leases.pop(broker_id, None)

    def lease(self, broker_id: int, now_ms: int) -> BrokerLease:
        """Return the broker's lease, starting one now if it has none."""
        lease = self.leases.get(broker_id)
        if lease is None:
            lease = self.leases[broker_id] = BrokerLease(now_ms)
        return lease

    def touch(self, broker_id: int, now_ms: int, fenced: bool, metadata_offset: int) -> None:
        """Record a heartbeat; a fenced broker leaves controlled shutdown (Kafka's touch)."""
        lease = self.lease(broker_id, now_ms)
        lease.last_contact_ms, lease.metadata_offset = now_ms, metadata_offset
        if fenced:
            lease.controlled_shutdown_offset = -1

    def is_expired(self, broker_id: int, now_ms: int) -> bool:
        """Tell whether the broker's last contact is older than the session timeout."""
        return now_ms - self.lease(broker_id, now_ms).last_contact_ms > self.session_timeout_ms

    def has_valid_session(self, registration, now_ms: int) -> bool:
        """Tell whether a registration is alive: unfenced and heard from within the session timeout."""
        if registration.record.fenced or registration.id not in self.leases:
            return False
        return not self.is_expired(registration.id, now_ms)

    def current_state(self, registration) -> BrokerControlState:
        """Return the broker's state from its registration and lease."""
        lease = self.leases.get(registration.id)
        if registration.record.fenced:
            return BrokerControlState.FENCED
        if registration.record.in_controlled_shutdown or (lease is not None and lease.controlled_shutdown_offset >= 0):
            return BrokerControlState.CONTROLLED_SHUTDOWN
        return BrokerControlState.UNFENCED

    def lowest_active_offset(self, image) -> int:
        """Return the lowest metadata offset of the unfenced brokers not shutting down (Long.MAX if none)."""
        offsets = [self.leases[b.id].metadata_offset for b in image.cluster.brokers.values()
                   if b.id in self.leases and self.current_state(b) is BrokerControlState.UNFENCED]
        return min(offsets, default=sys.maxsize)

    def next_state(self, image, registration, request, leads_partitions) -> BrokerControlState:
        """Return the state a heartbeat moves the broker to (Kafka's calculateNextBrokerState)."""
        S = BrokerControlState
        current = self.current_state(registration)
        if current is S.FENCED:
            if request.want_shut_down:
                return S.SHUTDOWN_NOW
            caught_up = request.current_metadata_offset >= registration.record.broker_epoch
            return S.UNFENCED if not request.want_fence and caught_up else S.FENCED
        if current is S.UNFENCED:
            if request.want_fence:
                return S.SHUTDOWN_NOW if request.want_shut_down else S.FENCED
            if request.want_shut_down:
                return S.CONTROLLED_SHUTDOWN if leads_partitions() else S.SHUTDOWN_NOW
            return S.UNFENCED
        if leads_partitions():
            return S.CONTROLLED_SHUTDOWN
        offset = self.leases[registration.id].controlled_shutdown_offset if registration.id in self.leases else -1
        return S.SHUTDOWN_NOW if offset <= self.lowest_active_offset(image) else S.CONTROLLED_SHUTDOWN
