"""The names of a home's files that every command checks, and where the home is by default.

Kept apart from node/node/ and node/home/identity.py (which re-export them) so that the CLI can
find and check a home without importing the store, the key handling or the models: a command
handed to a running ``feral serve`` (cli/serve_handoff.py) never imports them at all.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATABASE_FILE", "KEY_FILENAME", "SETTINGS_FILENAME", "default_home"]

DATABASE_FILE = "feral.db"
KEY_FILENAME = "node.key"
SETTINGS_FILENAME = "settings.json"


def default_home() -> Path:
    """``$FERAL_HOME`` or ``~/.feral``."""
    return Path(os.environ.get("FERAL_HOME") or Path.home() / ".feral")
