"""ConfigError, re-exported where the controller's own checks (listener_security, client_security, tls) find it,
so that they need not import config.py back; its one home is storage/server_properties.py."""
from __future__ import annotations

from kraftsman.storage.server_properties import ConfigError

__all__ = ["ConfigError"]
