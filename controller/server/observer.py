"""Moved to kraftsman.controller.client.observer; this name stays only until cli/ imports the new one.

Rules:
- Temporary: the old module name is the same module object (so settings made through it, such as
  sync_client.TRACE, reach the client). Delete this file once nothing imports it.
"""
import sys

from kraftsman.controller.client import observer

sys.modules[__name__] = observer
