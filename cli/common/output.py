"""Render a command's data as text, JSON or YAML: one object, one style, every tool.

Rules:
- JSON is one object per line as json.dumps writes it (", " and ": " separators, keys in the order built,
  non-ASCII kept); YAML is the same object through pyyaml (block style, keys in the same order, long strings
  never folded at 80 columns), so `yaml.safe_load` of the YAML equals `json.loads` of the JSON. A stream of
  objects (dump-log) is a stream of YAML documents, each opened by `---` (yaml_document).
- Text is the command's own (Kafka's texts); this module only knows the structured formats.
- pyyaml is imported only when YAML is asked for.
"""
from __future__ import annotations

import json

FORMATS = ("text", "json", "yaml")


def render(obj, fmt: str) -> str:
    """Return `obj` as `fmt` ('json' or 'yaml'), ending with a newline."""
    if fmt == "json":
        return json.dumps(obj, ensure_ascii=False) + "\n"
    if fmt == "yaml":
        import yaml

        return yaml.safe_dump(_plain(obj), **YAML_STYLE)
    raise ValueError(f"no structured rendering for {fmt!r}")


# block style, keys in the order built, no folding of long strings (pyyaml folds at 80 columns by default)
YAML_STYLE = {"sort_keys": False, "allow_unicode": True, "default_flow_style": False, "width": 1 << 30}


def yaml_document(obj) -> str:
    """Return `obj` as one YAML document of a stream (opened by `---`), in render's style (libyaml's emitter when
    pyyaml has it: the same text, four times faster, for streams of thousands of documents)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(_plain(obj), Dumper=dumper, explicit_start=True, **YAML_STYLE)


def _plain(obj):
    """Return `obj` with int and str subclasses (IntEnum exit statuses...) as plain values, as JSON writes them."""
    if isinstance(obj, dict):
        return {_plain(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, float):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, str):
        return str(obj)
    return obj


def structured(fmt: str) -> bool:
    """Tell whether `fmt` is one of the structured formats (json, yaml)."""
    return fmt in ("json", "yaml")
