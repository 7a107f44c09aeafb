"""Checks that refuse an option the command would otherwise ignore (issue 15, item 6).

An option that changes nothing is worse than an error: the user believes it was heard. These
helpers read only what the check needs (the settings file), with node/ imported on call, so
the CLI's modules stay light to import.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["mmr_on"]


def mmr_on(home: Path, mmr: bool | None) -> bool:
    """Whether a search runs MMR: ``--mmr/--no-mmr`` when given, else ``search.mmr`` in the
    home's settings."""
    if mmr is not None:
        return mmr
    from feral.node.settings.config import load_settings

    return load_settings(home).search.mmr
