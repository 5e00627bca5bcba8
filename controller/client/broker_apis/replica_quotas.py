"""Which partitions replication throttles apply to, and at what rate, read from the metadata image.

Rules:
- Topic configs leader.replication.throttled.replicas / follower.replication.throttled.replicas list
  "partition:broker" entries (or "*"): a leader throttles what it sends for the partitions listed with its own
  id, a follower what it fetches for those listed with its id (Kafka's QuotaConfigHandler).
- Broker configs leader.replication.throttled.rate / follower.replication.throttled.rate come from the broker's
  dynamic config, else the cluster default; unset means no limit.
- Throttles apply only to replicas not in sync: a leader's to followers outside the ISR, a follower's while it lags
  the leader's high watermark (Kafka's shouldLeaderThrottle / shouldFollowerThrottle).
"""
from __future__ import annotations

TOPIC, BROKER = 2, 4
UNLIMITED = float("inf")


def throttled(image, topic: str, partition: int, broker_id: int, side: str) -> bool:
    """Tell whether `side` ("leader" or "follower") throttles this partition on `broker_id`."""
    text = image.configs.resources.get((TOPIC, topic), {}).get(f"{side}.replication.throttled.replicas")
    if not text:
        return False
    entries = [e.strip() for e in text.split(",") if e.strip()]
    return "*" in entries or f"{partition}:{broker_id}" in entries


def rate(image, broker_id: int, side: str) -> float:
    """Return the broker's `side` replication rate limit in bytes per second (inf when unset)."""
    key = f"{side}.replication.throttled.rate"
    for name in (str(broker_id), ""):
        value = image.configs.resources.get((BROKER, name), {}).get(key)
        if value is not None:
            try:
                return float(int(value))
            except ValueError:
                return UNLIMITED
    return UNLIMITED
