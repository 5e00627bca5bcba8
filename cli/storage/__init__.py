"""kafka-storage: format and inspect KRaft log directories."""
