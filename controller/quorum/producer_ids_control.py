"""AllocateProducerIds: hand a broker the next block of 1000 producer ids (Kafka's ProducerIdControlManager).

Rules:
- The broker id and epoch must match its registration, else STALE_BROKER_EPOCH (Kafka's checkBrokerEpoch).
- The block starts at the image's next producer id (0 when none was ever allocated) and the
  ProducerIdsRecord v0 stores the first id after it: a real log shows nextProducerId 1000, then 2000.
- A block that would pass Long.MAX_VALUE is refused with UNKNOWN_SERVER_ERROR, as Kafka does.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .context import ControllerContext, ControllerResult

PRODUCER_ID_BLOCK_SIZE = 1000
LONG_MAX = 2**63 - 1


def allocate_producer_ids(ctx: ControllerContext, request) -> ControllerResult:
    """Handle AllocateProducerIds (v0)."""
    cls = codec.message_class("AllocateProducerIdsResponse")
    registration = ctx.image.cluster.brokers.get(request.broker_id)
    if registration is None or registration.record.broker_epoch != request.broker_epoch:
        return ControllerResult([], cls(throttle_time_ms=0, error_code=E.STALE_BROKER_EPOCH))
    start = max(ctx.image.producer_ids.next_producer_id, 0)
    if start > LONG_MAX - PRODUCER_ID_BLOCK_SIZE:
        return ControllerResult([], cls(throttle_time_ms=0, error_code=E.UNKNOWN_SERVER_ERROR))
    record = codec.message_class("ProducerIdsRecord")(
        broker_id=request.broker_id, broker_epoch=request.broker_epoch,
        next_producer_id=start + PRODUCER_ID_BLOCK_SIZE)
    return ControllerResult([ApiMessageAndVersion(record, 0)], cls(
        throttle_time_ms=0, error_code=0, producer_id_start=start, producer_id_len=PRODUCER_ID_BLOCK_SIZE))


HANDLERS = {"AllocateProducerIds": allocate_producer_ids}
READ_ONLY: frozenset = frozenset()
