"""kafka-features: describe, upgrade, downgrade and disable feature flags."""
