"""kafka-topics: create, list, describe, alter and delete topics (Kafka 3.9's TopicCommand)."""
