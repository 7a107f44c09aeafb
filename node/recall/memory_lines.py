"""How a memory reads as one line of a prompt, and which category a fact falls in.

Shared by the digest (node/recall/digest.py) and the prompt files (node/curation/prompt_files.py),
so a fact reads the same in both. Everything here is pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping

from feral.node.absorb.fact_rules import category_of

__all__ = ["TODO_OPENINGS", "TODO_PREDICATES", "effective_category", "is_todo", "memory_line"]

TODO_PREDICATES = frozenset({"todo", "to_do", "task", "reminder", "remind_me"})
TODO_OPENINGS = ("todo", "to do", "to-do", "remind me", "reminder")
"""How a note that is a TODO begins (case blind): "TODO: renew the passport", "remind me to..."."""
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def plain(text: object) -> str:
    """One line, with ``& < >`` escaped: no memory can close (or open) the block it is in."""
    return " ".join(str(text).split()).translate(_ESCAPES)


def memory_line(row: Mapping[str, object]) -> str:
    """An episode's summary; a fact as ``predicate: object`` for the user, else as a sentence,
    a note as its text."""
    if "summary" in row:
        return plain(row["summary"])
    subject, predicate, obj = str(row["subject"]), str(row["predicate"]), str(row["object"])
    words = predicate.replace("_", " ")
    if predicate == "note":
        return plain(obj if subject == "user" else f"{subject}: {obj}")
    if subject == "user":
        return plain(f"{words}: {obj}")
    return plain(f"{subject} {words} {obj}")


def effective_category(row: Mapping[str, object], stored: str | None) -> str:
    """A fact's category: its meta row's, or (with none, or ``note``) what its predicate says
    (node/absorb/fact_rules.py), so facts imported without the absorb pipeline are sorted too."""
    if stored and stored != "note":
        return stored
    if "predicate" not in row:  # an episode
        return stored or "note"
    return category_of(str(row["predicate"]), str(row["object"]))


def is_todo(row: Mapping[str, object], category: str) -> bool:
    """A live fact that is something to do: a ``goal``, a TODO predicate, or a note that opens
    with one of :data:`TODO_OPENINGS`. It stays open until it is forgotten (archived)."""
    if "predicate" not in row:
        return False
    if category == "goal" or row["predicate"] in TODO_PREDICATES:
        return True
    return row["predicate"] == "note" and str(row["object"]).casefold().startswith(TODO_OPENINGS)
