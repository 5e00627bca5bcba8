"""Which Kafka release a command speaks for where 3.9 and 4.x differ: KRAFTSMAN_KAFKA_VERSION (3.9, 4.0, 4.1, 4.2),
else the connection profile's `kafka-version`, else 3.9.

Rules:
- Precedence is the suite's: environment variable > profile > default. There is no flag: the release is the
  cluster's, set once for a whole run (a playbook, a container).
- A value that names no release is a usage error naming where it came from (exit 64).
- Every tool reads the release here and hands the name down; the tables that differ by release are keyed by it.
"""
from __future__ import annotations

from kraftsman.storage.releases import DEFAULT_RELEASE, UnknownRelease, check

from .environment import Environment
from .status import ExitStatus, ToolError

VARIABLE = "KRAFTSMAN_KAFKA_VERSION"


def kafka_release(env: Environment, profile=None) -> str:
    """Return the release the command speaks for: the variable, else `profile`'s kafka_version (a Profile, or the
    settings a profile filled), else 3.9."""
    text = env.env.get(VARIABLE, "").strip()
    source = VARIABLE
    if not text and profile is not None and getattr(profile, "kafka_version", None):
        text, source = str(profile.kafka_version), "the profile's kafka-version"
    if not text:
        return DEFAULT_RELEASE
    try:
        return check(text)
    except UnknownRelease as e:
        raise ToolError(f"{source}: {e}", ExitStatus.USAGE) from None


def version_line(prog: str, package_version: str, release: str) -> str:
    """Return `--version`'s line: the tool, kraftsman's version and the Kafka release it speaks for."""
    return f"{prog} (kraftsman) {package_version}, Kafka {release}\n"
