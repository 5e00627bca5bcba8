"""Help texts that follow the Kafka release a run speaks for (KRAFTSMAN_KAFKA_VERSION).

Rules:
- A tool's click objects carry Kafka 3.9's texts as declared. `speaking(command, texts)` gives them another
  release's texts for one run and puts the declared ones back when the run ends: the man pages and completions
  are built in-process from the same cached objects, and document the default release.
- `texts` maps (sub-command name or None for `command` itself, parameter name or None for the command) to the
  text; a sub-command's text is its short help too (the line its group's --help lists). NOT_IN_RELEASE instead of
  a text hides a parameter for the run (its help and the shell's completion leave it out), for a flag the
  release's tool refuses.
"""
from __future__ import annotations

from contextlib import contextmanager

KAFKA_4_0 = "(Kafka 4.0) "  # opens the declared help of what Kafka 3.9's tool lacks (offered whatever the release)
NOT_IN_RELEASE = object()  # a text that hides the parameter for the run (see Rules)


@contextmanager
def speaking(command, texts: dict):
    """Give `command`'s sub-commands and parameters the help `texts` while the block runs (see Rules)."""
    saved = []
    try:
        for (sub, param), text in texts.items():
            target = command if sub is None else command.commands[sub]
            for obj in ([target] if param is None else [p for p in target.params if p.name == param]):
                saved.append((obj, obj.help, getattr(obj, "short_help", None), getattr(obj, "hidden", None)))
                if text is NOT_IN_RELEASE:
                    obj.hidden = True
                    continue
                obj.help = text
                if param is None:
                    obj.short_help = text
        yield
    finally:
        for obj, help_text, short_help, hidden in reversed(saved):
            obj.help = help_text
            if hasattr(obj, "short_help"):
                obj.short_help = short_help
            if hidden is not None:
                obj.hidden = hidden
