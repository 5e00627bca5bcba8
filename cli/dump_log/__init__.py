"""kafka-dump-log: segments, snapshots, indexes and their decoders."""
