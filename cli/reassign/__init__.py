"""kafka-reassign-partitions (Kafka 3.9's ReassignPartitionsCommand): partition reassignments and their throttles."""
