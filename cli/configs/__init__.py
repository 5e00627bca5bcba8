"""kafka-configs: Kafka 3.9's ConfigCommand (describe and alter configs of topics, brokers, users, clients, ips)."""
