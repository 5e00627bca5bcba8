"""Kafka-protocol client connections that both the controller process and the outside programs open: the
asyncio Connection, the pure SASL mechanism clients, and TLS/SASL login on connect.

Rules:
- Below controller.server and controller.client, and imports neither; above storage.protocol, whose codec
  and framing it sends.
"""
