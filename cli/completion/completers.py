"""Run-time candidates for shell completion: click `shell_complete` callbacks the tools' options name.

Rules:
- Each completer takes (ctx, incomplete) — typer's `autocompletion=` signature — and returns the strings that
  start with `incomplete`. The source (snapshot, directory, bootstrap, client settings, profile) is read
  from the words already typed, parsed by the tool's own definition (click's resilient parsing), parents'
  options included; ~ and $VARIABLES in file names are expanded as the shell would have.
- Failure is silent: any error completes nothing. Time is bounded: requests get TIMEOUT seconds in all
  (KRAFTSMAN_COMPLETE_TIMEOUT, 0-30), loading a snapshot or directory is cut at LOAD_SECONDS.
- Fast start: heavy modules are imported inside the completer that needs them; no asyncio.
- Broker ids come from the metadata log (a read-only observer) with --bootstrap-controller, so fenced
  brokers are offered too; --bootstrap-server can only give DescribeCluster's unfenced brokers.
"""
from __future__ import annotations

import os

import click

TIMEOUT = 2.0
LOAD_SECONDS = 5.0
TIMEOUT_ENV = "KRAFTSMAN_COMPLETE_TIMEOUT"


def silent(completer):
    """Wrap `completer(values, incomplete)` as a (ctx, incomplete) callback: any failure (or Ctrl-C) completes
    nothing, and only candidates starting with `incomplete` are kept."""
    def wrapper(ctx: click.Context, incomplete: str) -> list[str]:
        try:
            return [c for c in completer(typed(ctx), incomplete) if c.startswith(incomplete)]
        except BaseException:       # noqa: BLE001 (completion never complains)
            return []
    wrapper.__name__, wrapper.__doc__ = completer.__name__, completer.__doc__
    return wrapper


def typed(ctx: click.Context) -> dict:
    """Return the options typed so far on the line, the parent commands' included."""
    from ..common.admin_options import merged

    return merged(ctx, dict(ctx.params))


# ---------------------------------------------------------------- metadata


@silent
def metadata_paths(values: dict, incomplete: str) -> list[str]:
    """Complete kafka-metadata-shell's command words against the image of --snapshot / --directory."""
    if not (values.get("snapshot") or values.get("directory")):
        return []
    if values.get("controllers") or values.get("bootstrap_controller"):
        return []
    from kraftsman.controller.image.loader import load
    from kraftsman.shell.completion import suggest
    from kraftsman.shell.state import ShellState

    snapshot, directory = _path(values.get("snapshot")), _path(values.get("directory"))
    with _time_limit(LOAD_SECONDS):
        image = load(snapshot, directory=directory, offset=values.get("offset"), on_fault=lambda message: None).image
    words = list(values.get("command") or ())
    line = " ".join(_quote(w) for w in words) + (" " if words else "") + incomplete
    _, candidates = suggest(line, ShellState(image), shell=False)
    return [text for text, _ in candidates]


def _path(text: str | None) -> str | None:
    """Expand ~ and $VARIABLES as the shell would have (the line is passed as typed)."""
    return os.path.expanduser(os.path.expandvars(text)) if text else text


def _quote(word: str) -> str:
    return word if word and not any(c.isspace() or c in "'\"\\" for c in word) else repr(word)


# ---------------------------------------------------------------- node ids


@silent
def broker_ids(values: dict, incomplete: str) -> list[str]:
    """Complete a broker id: every registered broker, fenced ones included (from the metadata log)."""
    return node_ids(values, controllers=False)


@silent
def controller_ids(values: dict, incomplete: str) -> list[str]:
    """Complete a controller id (DescribeCluster's controllers)."""
    return node_ids(values, controllers=True)


def node_ids(values: dict, controllers: bool) -> list[str]:
    """Return the ids of the cluster the typed line (or its profile) names: brokers, or controllers."""
    from kraftsman.controller.client.admin import BROKERS, CONTROLLERS

    found = _admin(values)
    if found is None:
        return []
    admin, by_controller = found
    with admin:
        if not controllers and by_controller:
            addresses = ",".join(f"{h}:{p}" for h, p in admin.addresses)
            return [str(i) for i in registered_brokers(addresses, admin.config, timeout_seconds())]
        info = admin.describe_cluster(CONTROLLERS if controllers else BROKERS)
    if controllers and info.source != "DescribeCluster":
        return []          # Metadata lists brokers only
    return [str(i) for i in sorted({node.node_id for node in info.nodes})]


def _admin(values: dict):
    """Return (an Admin to the cluster the typed line or its profile names, bounded by timeout_seconds(), whether
    the addresses are the controllers'), or None when the line names none."""
    address, props, by_controller = connection(values)
    if not address:
        return None
    import time

    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.admin import Admin

    seconds = timeout_seconds()
    config = sc.ClientConfig.from_properties(props)
    config.request_timeout_ms = int(seconds * 1000)
    return Admin(sc.parse_addresses(address), config, time.monotonic() + seconds), by_controller


# ---------------------------------------------------------------- topics and configs


@silent
def topic_names(values: dict, incomplete: str) -> list[str]:
    """Complete a topic name from the cluster the line names (Metadata: every topic, internal ones too)."""
    return live_topics(values)


@silent
def topic_config_pairs(values: dict, incomplete: str) -> list[str]:
    """Complete `--config NAME=VALUE` of a topic: the topic config names with '=' (Kafka 3.9's LogConfig)."""
    return [f"{name}=" for name in topic_config_names()]


def topic_config_names() -> list[str]:
    """Return Kafka 3.9's topic config names, sorted."""
    from kraftsman.controller.quorum.topic_configs_schema import TOPIC_CONFIGS

    return sorted(TOPIC_CONFIGS)


def live_topics(values: dict) -> list[str]:
    """Return the cluster's topic names (Metadata), or [] when the line names no cluster."""
    found = _admin(values)
    if found is None:
        return []
    with found[0] as admin:
        return [t.name for t in admin.list_topics()]


def quota_names(values: dict, entity_type: str) -> list[str]:
    """Return the names of the quota entities of one type (DescribeClientQuotas), defaults left out."""
    from kraftsman.controller.client.admin.quotas import SPECIFIED, QuotaFilterComponent

    found = _admin(values)
    if found is None:
        return []
    with found[0] as admin:
        entries = admin.describe_client_quotas([QuotaFilterComponent(entity_type, SPECIFIED)], strict=False)
    return sorted({name for e in entries for kind, name in e.entity if kind == entity_type and name})


def scram_users(values: dict) -> list[str]:
    """Return the users with SCRAM credentials (DescribeUserScramCredentials)."""
    found = _admin(values)
    if found is None:
        return []
    with found[0] as admin:
        return sorted({r.user for r in admin.describe_user_scram_credentials() if not r.error_code})


@silent
def users(values: dict, incomplete: str) -> list[str]:
    """Complete kafka-configs --user: the users with SCRAM credentials or quotas."""
    return sorted({*scram_users(values), *quota_names(values, "user")})


@silent
def principals(values: dict, incomplete: str) -> list[str]:
    """Complete a kafka-acls principal: those the cluster's ACLs name, and User:<name> of each SCRAM user."""
    from kraftsman.controller.client.admin.acls import ANY_ENTRY, ANY_PATTERN, ANY_TYPE, ResourcePattern

    found = _admin(values)
    if found is None:
        return []
    with found[0] as admin:
        named = {b.entry.principal for b in admin.describe_acls(ResourcePattern(ANY_TYPE, None, ANY_PATTERN),
                                                                ANY_ENTRY)}
    return sorted(named | {f"User:{u}" for u in scram_users(values)})


def connection(values: dict) -> tuple[str | None, dict, bool]:
    """Return (bootstrap address, client properties, whether the address is the controllers') from the typed
    flags, the chosen profile filling what they leave out (common.profiles.fill)."""
    import argparse

    from ..common import profiles
    from ..common.key_values import key_values

    ns = argparse.Namespace(**{k: values.get(k) for k in ("bootstrap_controller", "bootstrap_server")},
                            client=key_values(values.get("client_property") or [], lenient=True), timeout=None)
    # the client properties file: --command-config's in the jopt tools (whose --config is Kafka's), else --config's
    ns.config = values.get("command_config") if "command_config" in values else values.get("config")
    if not (ns.bootstrap_controller or ns.bootstrap_server):
        chosen = profiles.select(profiles.load(os.environ), values.get("profile"), os.environ)
        profiles.fill(ns, chosen, lambda name: (ns.config if name == "config" else values.get(name)) is not None,
                      output=False)
    props = {**_properties(_path(ns.config)), **ns.client}
    if ns.bootstrap_controller:
        return ns.bootstrap_controller, props, True
    return ns.bootstrap_server, props, False


def registered_brokers(address: str, config, seconds: float) -> list[int]:
    """Return every registered broker, fenced ones included, from the metadata log of the controllers at
    `address` (a read-only observer catching up; DescribeCluster lists only unfenced brokers)."""
    import time

    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.observer import Observer

    observer = Observer(config, bootstrap=sc.parse_addresses(address), fetch_max_wait_ms=0)
    try:
        view = observer.catch_up(time.monotonic() + seconds)
    finally:
        observer.close()
    return sorted(view.image.cluster.brokers)


def _properties(path: str | None) -> dict:
    if not path:
        return {}
    from kraftsman.storage import properties

    return properties.load(path)


def timeout_seconds() -> float:
    """Return the completion's time budget for requests (KRAFTSMAN_COMPLETE_TIMEOUT, else TIMEOUT)."""
    try:
        seconds = float(os.environ.get(TIMEOUT_ENV, TIMEOUT))
    except ValueError:
        return TIMEOUT
    return seconds if 0 < seconds <= 30 else TIMEOUT


class _time_limit:
    """Raise TimeoutError in the main thread after `seconds` (a no-op elsewhere)."""

    def __init__(self, seconds: float):
        self.seconds, self.armed = seconds, False

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
            self.previous = signal.signal(signal.SIGALRM, self._expire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    @staticmethod
    def _expire(signum, frame):
        raise TimeoutError("completion took too long")

    def __exit__(self, *exc):
        if self.armed:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


# ---------------------------------------------------------------- static tables and profiles


@silent
def release_versions(values: dict, incomplete: str) -> list[str]:
    """Complete a release version (metadata.version names a KRaft cluster can use, e.g. 3.9-IV0)."""
    from kraftsman.storage import features

    return [mv.version for mv in features.VERSIONS]


@silent
def feature_levels(values: dict, incomplete: str) -> list[str]:
    """Complete `--feature NAME=LEVEL`: the feature names with '=', then that feature's known levels."""
    name, sep, _ = incomplete.partition("=")
    if not sep:
        return [f"{n}=" for n in _feature_names()]
    return [f"{name}={level}" for level in _levels(name)]


@silent
def feature_names(values: dict, incomplete: str) -> list[str]:
    """Complete a feature name (kafka-features disable --feature)."""
    return _feature_names()


def _feature_names() -> list[str]:
    from kraftsman.storage import features

    return sorted([features.METADATA_VERSION, *features.feature_names()])


def _levels(name: str) -> list[int]:
    from kraftsman.storage import features

    if name == features.METADATA_VERSION:
        return [mv.level for mv in features.VERSIONS]
    found = features.feature(name)
    return [fl.level for fl in found.levels] if found else []


@silent
def profile_names(values: dict, incomplete: str) -> list[str]:
    """Complete a connection profile's name (from the profile file)."""
    from ..common import profiles

    return sorted(profiles.load(os.environ).profiles)
