"""Cache parsed schema YAML as JSON in the user's cache folder, keyed by the YAML text's hash.

Rules:
- The YAML files are the only source of truth: an entry is found only by the BLAKE2 digest of the
  exact text it was parsed from, so an edited or new schema file can never be served stale.
- The cache is an optimisation for start-up time (importing PyYAML costs more than a whole
  short command): every failure to read or write it is silent and falls back to parsing YAML.
- Location: $KRAFTSMAN_CACHE_DIR, else $XDG_CACHE_HOME/kraftsman, else ~/.cache/kraftsman;
  KRAFTSMAN_CACHE_DIR=off disables it. Entries are written atomically (temp file + rename).
"""
from __future__ import annotations

import json
import os

FORMAT = "1"  # bump when the cached shape changes


def cache_dir() -> str | None:
    """Return the folder holding schema entries, or None when caching is off."""
    explicit = os.environ.get("KRAFTSMAN_CACHE_DIR")
    if explicit is not None:
        base = None if explicit.strip().lower() in ("", "off", "0") else explicit
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "kraftsman")
    return None if base is None else os.path.join(base, "schemas")


def entry_path(name: str, text: str) -> str | None:
    """Return where the parsed form of `text` (schema `name`) lives, or None when caching is off."""
    folder = cache_dir()
    if folder is None:
        return None
    import hashlib

    digest = hashlib.blake2b(f"{FORMAT}\0{text}".encode("utf-8"), digest_size=16).hexdigest()
    return os.path.join(folder, f"{name}.{digest}.json")


def read(path: str | None):
    """Return the cached mapping at `path`, or None when absent or unreadable."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write(path: str | None, raw: dict) -> None:
    """Store `raw` at `path` atomically; ignore any failure (read-only home, full disk, ...)."""
    if path is None:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        text = json.dumps(raw, separators=(",", ":"))
        if json.loads(text) != raw:  # e.g. YAML dates or integer keys: keep parsing that file
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
