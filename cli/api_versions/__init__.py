"""kafka-broker-api-versions: the API versions every broker (or controller) speaks (Kafka 3.9's
BrokerApiVersionsCommand)."""
