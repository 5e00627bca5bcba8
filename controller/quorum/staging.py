"""Stage records on top of a handler's image, so later steps of one result see the earlier ones.

Rules:
- A handler's ctx.image never holds the records of its own result: when one step (say, a fence record)
  must be visible to the next (the partition hooks of replication_control), the next step gets `advance(ctx, records)`.
- Staging is pure: a new image and a new context, the originals are untouched.
"""
from __future__ import annotations

import dataclasses

from kraftsman.controller.image.delta import MetadataDelta

from .context import ControllerContext


def apply_records(image, records):
    """Return `image` with `records` (ApiMessageAndVersion) replayed and applied."""
    if not records:
        return image
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    return delta.apply()


def advance(ctx: ControllerContext, records) -> ControllerContext:
    """Return a context whose image holds `records` and whose next offset follows them."""
    if not records:
        return ctx
    return dataclasses.replace(ctx, image=apply_records(ctx.image, records),
                               next_offset=ctx.next_offset + len(records))
