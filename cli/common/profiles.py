"""Connection profiles: named sets of bootstrap addresses, client settings, timeout and output, in one YAML file.

Rules:
- The file is $XDG_CONFIG_HOME/kraftsman/config.yaml (default ~/.config/kraftsman/config.yaml):
  `current-profile: NAME` and `profiles: {NAME: {bootstrap-controller, bootstrap-server, client: {k: v},
  client-config: path, timeout: seconds, output: text|json|yaml}}`. A missing file is no profile.
- The profile used is --profile, else KRAFTSMAN_PROFILE, else current-profile; none of them: no profile.
- Precedence is flag > environment variable > profile > built-in default; -X key=value client overrides win
  over the profile's client settings and client-config file.
- A broken file (bad YAML, an unknown key, a wrong type, a named profile that is not there) is a ProfileError:
  one line naming the file (and the line when known), exit 64, for a command that uses a profile (--profile,
  KRAFTSMAN_PROFILE, or a command line that leaves its bootstrap to the profile); for any other it is one
  warning line and no profile (`select_for`).
- Secrets are masked when shown: a client key holding password, secret, token or key, or sasl.jaas.config.
- The file is written atomically (temp, fsync, rename, directory fsync).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .status import ExitStatus, ToolError

KEYS = {"bootstrap-controller": str, "bootstrap-server": str, "client": dict, "client-config": str,
        "timeout": (int, float), "output": str}
OUTPUTS = ("text", "json", "yaml")
SECRET_WORDS = ("password", "secret", "token", "key", "sasl.jaas.config")
MASK = "********"


class ProfileError(ToolError):
    """A profile file or name that cannot be used (exit 64)."""

    def __init__(self, message: str):
        super().__init__(message, ExitStatus.USAGE)


@dataclass(frozen=True)
class Profile:
    """One named profile's settings (None: not set)."""

    name: str
    bootstrap_controller: str | None = None
    bootstrap_server: str | None = None
    client: dict = field(default_factory=dict)
    client_config: str | None = None
    timeout: float | None = None
    output: str | None = None

    def as_dict(self, masked: bool = True) -> dict:
        """Return the profile as its file spells it (secrets masked unless told)."""
        client = {k: (MASK if masked and is_secret(k) else v) for k, v in self.client.items()}
        values = {"bootstrap-controller": self.bootstrap_controller, "bootstrap-server": self.bootstrap_server,
                  "client": client or None, "client-config": self.client_config, "timeout": self.timeout,
                  "output": self.output}
        return {k: v for k, v in values.items() if v is not None}


@dataclass
class ProfileFile:
    """The profiles file: where it is, which profile is current, and every profile."""

    path: Path
    current: str | None = None
    profiles: dict[str, Profile] = field(default_factory=dict)


def is_secret(key: str) -> bool:
    """Tell whether a client setting holds a secret."""
    return any(word in key.lower() for word in SECRET_WORDS)


def config_path(environ) -> Path:
    """Return the profiles file's path under $XDG_CONFIG_HOME (default ~/.config)."""
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base) / "kraftsman" / "config.yaml"


def load(environ) -> ProfileFile:
    """Read the profiles file (an empty ProfileFile when there is none); raise ProfileError when broken."""
    path = config_path(environ)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ProfileFile(path)
    except OSError as e:
        raise ProfileError(f"{path}: cannot read: {e.strerror or e}") from None
    return parse(text, path)


def parse(text: str, path: Path) -> ProfileFile:
    """Parse the profiles file's text; raise ProfileError naming the file and line."""
    import yaml

    try:
        root = yaml.compose(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ProfileError(f"{where}: not valid YAML: {getattr(e, 'problem', None) or e}") from None
    if root is None:
        return ProfileFile(path)
    data = yaml.safe_load(text)
    _expect(isinstance(data, dict), path, root, "expected a mapping with current-profile and profiles")
    unknown = set(data) - {"current-profile", "profiles"}
    _expect(not unknown, path, _key_node(root, sorted(unknown)[0] if unknown else ""),
            f"unknown key {sorted(unknown)[0]!r} (known: current-profile, profiles)" if unknown else "")
    profiles_node = _value_node(root, "profiles")
    raw = data.get("profiles") or {}
    _expect(isinstance(raw, dict), path, profiles_node, "profiles must be a mapping of names to profiles")
    profiles = {str(name): _profile(str(name), body, path, _value_node(profiles_node, name))
                for name, body in raw.items()}
    current = data.get("current-profile")
    return ProfileFile(path, None if current is None else str(current), profiles)


def _profile(name: str, body, path: Path, node) -> Profile:
    body = body or {}
    _expect(isinstance(body, dict), path, node, f"profile {name!r} must be a mapping")
    for key, value in body.items():
        _expect(key in KEYS, path, _key_node(node, key),
                f"profile {name!r}: unknown key {key!r} (known: {', '.join(KEYS)})")
        _expect(isinstance(value, KEYS[key]) and not isinstance(value, bool), path, _value_node(node, key),
                f"profile {name!r}: {key} must be a {_type_name(KEYS[key])}")
    output = body.get("output")
    _expect(output is None or output in OUTPUTS, path, _value_node(node, "output"),
            f"profile {name!r}: output must be one of {', '.join(OUTPUTS)}")
    timeout = body.get("timeout")
    _expect(timeout is None or timeout > 0, path, _value_node(node, "timeout"),
            f"profile {name!r}: timeout must be positive")
    return Profile(name, body.get("bootstrap-controller"), body.get("bootstrap-server"),
                   {str(k): str(v) for k, v in (body.get("client") or {}).items()}, body.get("client-config"),
                   None if timeout is None else float(timeout), output)


def _type_name(kind) -> str:
    return {str: "string", dict: "mapping"}.get(kind, "number")


def _expect(ok: bool, path: Path, node, message: str) -> None:
    if not ok:
        line = f":{node.start_mark.line + 1}" if node is not None else ""
        raise ProfileError(f"{path}{line}: {message}")


def _key_node(mapping, key):
    for k, _ in getattr(mapping, "value", None) or ():
        if getattr(k, "value", None) == key:
            return k
    return mapping


def _value_node(mapping, key):
    for k, v in getattr(mapping, "value", None) or ():
        if getattr(k, "value", None) == str(key):
            return v
    return mapping


def select(found: ProfileFile, name: str | None, environ) -> Profile | None:
    """Return the profile to use: `name` (--profile), else KRAFTSMAN_PROFILE, else current-profile, else None."""
    chosen = name or environ.get("KRAFTSMAN_PROFILE") or found.current
    if not chosen:
        return None
    if chosen not in found.profiles:
        known = ", ".join(sorted(found.profiles)) or "none"
        raise ProfileError(f"{found.path}: no profile {chosen!r} (profiles: {known})")
    return found.profiles[chosen]


def select_for(environ, name: str | None, *, needed: bool, warn) -> Profile | None:
    """Return the profile a command uses (load + select); a broken file only gets `warn(text)` when the command
    uses no profile: no --profile, no KRAFTSMAN_PROFILE, and not `needed` (its line names what it needs)."""
    try:
        found = load(environ)
    except ProfileError as e:
        if name or environ.get("KRAFTSMAN_PROFILE") or needed:
            raise
        warn(f"{e.message}; no profile is used (the command line names the cluster)")
        return None
    return select(found, name, environ)


def save(found: ProfileFile) -> None:
    """Write the profiles file atomically (secrets as given: the file is the user's)."""
    import yaml

    from kraftsman.storage.log.atomic import atomic_write_text

    data = {}
    if found.current is not None:
        data["current-profile"] = found.current
    data["profiles"] = {name: p.as_dict(masked=False) for name, p in sorted(found.profiles.items())}
    found.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # it may hold client passwords: private from the temp file's creation on, not only after the rename
    atomic_write_text(found.path, yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=1 << 30),
                      mode=0o600)


def fill(ns, chosen: Profile | None, given, *, servers: bool = True, output: bool = True) -> None:
    """Fill what the command line left out from profile `chosen` (flag > variable > profile > default), in place:
    the bootstrap (the controllers', else the brokers' when `servers`), the client-config file, the client
    settings (the line's -X win), the timeout, and the output when `output`. `given(name)` tells whether a
    flag or variable set option `name`; `ns.client` holds the line's -X settings."""
    if chosen is None:
        return
    if not (getattr(ns, "bootstrap_server", None) or ns.bootstrap_controller):
        ns.bootstrap_controller = chosen.bootstrap_controller
        if servers:
            ns.bootstrap_server = None if chosen.bootstrap_controller else chosen.bootstrap_server
    if not given("config") and chosen.client_config:
        ns.config = chosen.client_config
    ns.client = {**chosen.client, **ns.client}
    if not given("timeout") and chosen.timeout is not None:
        ns.timeout = chosen.timeout
    if output and not given("output") and chosen.output is not None:
        ns.output = chosen.output


def complete_names(ctx, incomplete: str) -> list[str]:
    """Complete a profile's name from the profile file (shell completion; silent on any error)."""
    try:
        return sorted(n for n in load(os.environ).profiles if n.startswith(incomplete))
    except Exception:          # noqa: BLE001 (completion never complains)
        return []
