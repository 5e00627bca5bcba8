"""kafka-controller: one KRaft controller in the foreground."""
