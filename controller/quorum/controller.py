"""QuorumController: one table of request handlers (every `_control` part's) and the periodic work.

Rules:
- `handlers` maps API names (framing's ApiInfo.name) to `handler(ctx, request) -> ControllerResult`;
  `handle` raises KeyError for an API it does not serve (the driver maps that).
- One registration style: every part that serves requests names them in HANDLERS (API name -> handler) and
  READ_ONLY (the ones that never write); the `_control` modules at module level, ClusterControl (which keeps leases)
  on its instance. QuorumController joins them; an API served twice is a bug (ValueError).
- Read-only APIs never return records; the driver answers them at once from the committed image.
- `periodic(ctx)` is cheap to call often: it fences brokers whose session expired, removes expired delegation
  tokens, moves leaderships back to preferred replicas every leader.imbalance.check.interval.seconds while
  auto.leader.rebalance.enable (again 10 ms later when a run hit its 1,000 elections), elects leaders uncleanly
  for the leaderless partitions of topics that allow it every unclean.leader.election.interval.ms (likewise) and, from
  metadata.version 3.3-IV1, appends a NoOpRecord at most every metadata.max.idle.interval.ms
  (500 ms by default, counted from activation), as Kafka's active controller does.
- Each periodic result is computed on an image holding the results before it.
- Broker start times are in the metadata (RegisterBrokerRecord's kraftsman tag, cluster_control); DescribeCluster
  reads them from the image, so nothing is remembered outside it.
- Only the active controller keeps leases; `on_activate` starts them fresh, `on_deactivate` drops them.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from . import (
    acls_control,
    configuration_control,
    features_control,
    producer_ids_control,
    quotas_control,
    replication_control,
    scram_control,
    tokens_control,
)
from . import feature_levels as fc
from .cluster_control import ClusterControl
from .context import ControllerContext, ControllerResult, QuorumConfig
from .staging import advance

METADATA_MAX_IDLE_INTERVAL_MS = 500  # metadata.max.idle.interval.ms
BALANCE_AGAIN_MS = 10                # Kafka reruns a periodic task that has more to do after 10 ms
MODULES = (replication_control, configuration_control, producer_ids_control, acls_control, scram_control,
           quotas_control, features_control, tokens_control)


class _Period:
    """The clock of a periodic task of the active controller: due once per interval, counted from activation
    (or from its first check)."""

    __slots__ = ("last",)

    def __init__(self):
        self.last: int | None = None

    def due(self, now_ms: int, interval_ms: int) -> bool:
        """Tell whether `interval_ms` has passed since the last time it was due; if so, start the next one."""
        if self.last is None:
            self.last = now_ms
        if now_ms - self.last < interval_ms:
            return False
        self.last = now_ms
        return True


class QuorumController:
    """The request -> records logic of a controller, with its in-memory broker leases."""

    def __init__(self, config: QuorumConfig | None = None,
                 noop_interval_ms: int | None = METADATA_MAX_IDLE_INTERVAL_MS):
        self.config = config if config is not None else QuorumConfig()
        self.noop_interval_ms = noop_interval_ms
        self.cluster = ClusterControl(self.config)
        self._noop_clock, self._token_sweep_clock = _Period(), _Period()
        self._balance_clock, self._unclean_clock = _Period(), _Period()
        self._balance_soon = self._unclean_soon = False  # the last run hit its limit
        self.handlers: dict = {}
        self.read_only: frozenset = frozenset()
        for part in (*MODULES, self.cluster):
            self._register(part)

    def _register(self, part) -> None:
        """Add the HANDLERS and READ_ONLY of `part` (a module or ClusterControl)."""
        twice = self.handlers.keys() & part.HANDLERS.keys()
        if twice:
            raise ValueError(f"{sorted(twice)} served twice")
        self.handlers.update(part.HANDLERS)
        self.read_only |= part.READ_ONLY

    def is_read_only(self, api_name: str) -> bool:
        """Tell whether `api_name` never writes records."""
        return api_name in self.read_only

    def handle(self, api_name: str, ctx: ControllerContext, request) -> ControllerResult:
        """Run the handler of `api_name` (KeyError when this controller does not serve it)."""
        return self.handlers[api_name](ctx, request)

    def on_activate(self, ctx: ControllerContext) -> None:
        """Become the active controller: fresh leases, the periodic clocks start now."""
        self.cluster.on_activate(ctx)
        for clock in self._clocks():
            clock.last = ctx.now_ms

    def on_deactivate(self) -> None:
        """Stop being the active controller."""
        self.cluster.on_deactivate()
        for clock in self._clocks():
            clock.last = None

    def _clocks(self) -> tuple:
        return self._noop_clock, self._token_sweep_clock, self._balance_clock, self._unclean_clock

    def periodic(self, ctx: ControllerContext) -> list[ControllerResult]:
        """Return the periodic results due now: fencing of stale brokers, expired delegation tokens, leader balancing,
        unclean elections, then a NoOpRecord if due."""
        results = self.cluster.fence_stale_brokers(ctx)
        sweep = self._token_sweep(ctx)
        if sweep is not None:
            results.append(sweep)
        for result in results:
            ctx = advance(ctx, result.records)
        for task in (self._balance, self._elect_unclean):
            result = task(ctx)
            if result is not None:
                results.append(result)
                ctx = advance(ctx, result.records)
        noop = self._noop(ctx)
        if noop is not None:
            results.append(noop)
        return results

    def _token_sweep(self, ctx: ControllerContext) -> ControllerResult | None:
        """Remove expired delegation tokens every delegation.token.expiry.check.interval.ms (tokens enabled)."""
        if not self.config.delegation_token_secret_key or \
                fc.metadata_version(ctx.image) < tokens_control.DELEGATION_TOKEN_LEVEL or \
                not self._token_sweep_clock.due(ctx.now_ms, self.config.delegation_token_expiry_check_interval_ms):
            return None
        return tokens_control.sweep_expired(ctx)

    def _balance(self, ctx: ControllerContext) -> ControllerResult | None:
        """Move leaderships back to preferred replicas when due (Kafka's electPreferred task)."""
        config = self.config
        interval = BALANCE_AGAIN_MS if self._balance_soon else config.leader_imbalance_check_interval_ms
        if not config.auto_leader_rebalance or not self._balance_clock.due(ctx.now_ms, interval):
            return None
        records, self._balance_soon = replication_control.balance_leaders(ctx)
        return ControllerResult(records, None) if records else None

    def _elect_unclean(self, ctx: ControllerContext) -> ControllerResult | None:
        """Elect leaders uncleanly where topics allow it, when due (Kafka's electUnclean task)."""
        interval = BALANCE_AGAIN_MS if self._unclean_soon else self.config.unclean_leader_election_interval_ms
        if not self._unclean_clock.due(ctx.now_ms, interval):
            return None
        records, self._unclean_soon = replication_control.elect_unclean_leaders(ctx)
        return ControllerResult(records, None) if records else None

    def _noop(self, ctx: ControllerContext) -> ControllerResult | None:
        if self.noop_interval_ms is None or fc.metadata_version(ctx.image) < fc.NOOP_RECORD_LEVEL or \
                not self._noop_clock.due(ctx.now_ms, self.noop_interval_ms):
            return None
        return ControllerResult([ApiMessageAndVersion(codec.message_class("NoOpRecord")(), 0)], None)
