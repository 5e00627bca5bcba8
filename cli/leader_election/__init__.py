"""kafka-leader-election (Kafka 3.9's LeaderElectionCommand): preferred and unclean leader elections."""
