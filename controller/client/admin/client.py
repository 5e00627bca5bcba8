"""The Admin client: one class whose calls come from the area modules (one mixin each) over the core's routes.

Rules:
- Admin(addresses, config, deadline) is what the tools use (cli/common/admin.py's Context.admin()): every call
  of every area, each named after Kafka's Admin method, each under the one deadline; `with Admin(...)` (or
  close()) closes the connections it kept.
- An area is one module holding one mixin class (its calls) and its private request helpers; a new area is a
  new module and one more base below. The mixins use only the core's routes (any_node, on_controller, on_node,
  _on_active_controller), connection() and remaining_ms(); none imports another.
"""
from __future__ import annotations

from .acls import AclCalls
from .cluster import ClusterCalls
from .configs import ConfigCalls
from .core import AdminCore
from .elections import ElectionCalls
from .features import FeatureCalls
from .quorum import QuorumCalls
from .quotas import QuotaCalls
from .reassignments import ReassignmentCalls
from .topics import TopicCalls


class Admin(ClusterCalls, QuorumCalls, FeatureCalls, TopicCalls, ConfigCalls, ReassignmentCalls, ElectionCalls,
            QuotaCalls, AclCalls, AdminCore):
    """Kafka's Admin calls to the servers at `addresses`, each before `deadline` (see Rules)."""
