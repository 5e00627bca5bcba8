"""kafka-cluster: cluster id, endpoints, unregister, and the rolling-restart verbs (describe-brokers, wait, health)."""
