"""Programs that call a controller from outside: the blocking admin client and its search for the active
controller, the asyncio admin client, the Raft observer behind the live shell, and simulated brokers.

Rules:
- Nothing here imports controller.server, and the server imports nothing here (an import-linter contract);
  what both sides speak through (Connection, SASL mechanisms, secure connect) lives in controller.wire.
"""
