"""Errors raised while replaying metadata records into an image."""
from __future__ import annotations


class ImageReplayError(ValueError):
    """A record cannot be applied to the current image (Kafka's delta would throw)."""
