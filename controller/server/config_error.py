"""ConfigError: a server configuration that cannot be used (its own module, so that the checks config.py runs
(listener_security, client_security) need not import config.py back)."""
from __future__ import annotations


class ConfigError(ValueError):
    """The server configuration is missing a setting or holds a bad value."""
