"""Producer ids (ProducerIdsRecord) and the image's provenance (where it was read up to).

Rules:
- nextProducerId is -1 until a ProducerIdsRecord is seen; write() gives back the last record.
- Provenance: the offset and epoch of the last record applied and its batch's append time (ms).
"""
from __future__ import annotations

from dataclasses import dataclass

from kraftsman.storage.records.metadata import ApiMessageAndVersion

from . import render


class ProducerIdsImage:
    """The next producer id block start (-1 when never allocated)."""

    __slots__ = ("record", "version")

    def __init__(self, record=None, version: int = 0):
        self.record = record
        self.version = version

    @property
    def next_producer_id(self) -> int:
        """Return the next producer id, -1 when none was allocated."""
        return -1 if self.record is None else self.record.next_producer_id

    def is_empty(self) -> bool:
        """Tell whether no producer id block was allocated."""
        return self.record is None

    def write(self):
        """Yield the last ProducerIdsRecord, if any."""
        if self.record is not None:
            yield ApiMessageAndVersion(self.record, self.version)


@dataclass(frozen=True)
class Provenance:
    """Where an image comes from: last contained offset, epoch and log time (ms)."""

    offset: int = -1
    epoch: int = -1
    time_ms: int = -1

    def __str__(self) -> str:
        return f"offset {self.offset}, epoch {self.epoch}, time {render.iso_zoned_utc(self.time_ms)}"
