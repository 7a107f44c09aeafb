"""Search that follows the graph: a query naming a relation path is resolved before ranking.

"my son's school" names a path from the user: ``user --son--> ? --school--> ?``. Each hop is
looked up in the live facts (storage/memory/graph.py reads them; there is no other store), so with
``user son Leo`` and ``Leo school Hillside Primary`` stored, the path ends at Hillside Primary:

1. the facts of the last hop (``Leo school Hillside Primary``) come first, marked
   ``"via": "graph"`` with the ``graph_path`` that led there;
2. then up to :data:`MAX_LINKED` memories one hop away from them, marked ``"via": "graph_link"``:
   facts about the entity the path reached ("Hillside Primary's head teacher is Mrs Grant"), then
   memories joined to the answers by a typed edge;
3. then the ordinary ranking of the query with the path replaced by what it resolved to ("who is
   the head teacher at Hillside Primary"), without repeats, up to the ``top_k`` asked for.

What counts as a path: ``my`` (or ``our``) or a capitalised name with ``'s``, then at least one
more ``WORD's``, then one to three words: "my wife's dentist", "Bob's employer's city", "my son's
school's head teacher". So a path always has two hops or more; a single possessive ("Sam's GP")
is left to the ordinary ranking, which already matches the name. A hop may be several words in
one predicate, as the phrasing rules store them (node/absorb/phrases.py): "my sister's doctor" tries
``user sister_doctor`` before ``user sister`` then ``doctor``, and ``doctor_name`` counts as
``doctor``. Every hop must resolve; if one does not, the search is the ordinary one, unchanged.

The graph's hits obey the search's filters as every hit does: with a ``scope``, each hop
resolves through facts of that scope only (so neither an answer nor its ``graph_path`` shows
another scope's memory), and the answers and linked memories are weighed like any hit
(``relevance × temporal × importance``, storage/search/ranking.py, with a relevance of
:data:`ANSWER_RELEVANCE` or :data:`LINKED_RELEVANCE`), so ``min_score`` drops them too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from feral.node.absorb.phrases import USER, snake_case
from feral.storage.db.connection import Connection
from feral.storage.memory import graph
from feral.storage.memory.memories import Row, find_row
from feral.storage.memory.memory_model import edges_of
from feral.storage.search.query import Hit, content_of
from feral.storage.search.ranking import in_scope
from feral.sync.errors import NotFoundError
from feral.sync.ids import normalise

__all__ = [
    "ANSWER_RELEVANCE",
    "LINKED_RELEVANCE",
    "MAX_LINKED",
    "Path",
    "follow_graph",
    "find_path",
]

MAX_LINKED = 3
"""The most memories one hop away from the answers that a graph search pulls in."""
ANSWER_RELEVANCE = 1.0
"""A graph answer's relevance before time and importance: the path named it exactly, as
much as the best hit of a leg (each leg's scores are normalised to at most 1)."""
LINKED_RELEVANCE = 0.5
"""A linked memory's: one hop further from what the query named."""
MAX_HOP_WORDS = 3
"""The most words one hop's predicate may have ("swimming club", "head teacher")."""

_OWNER = r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.\s+)?[^\W\d_a-z][\w-]*(?:\s+[^\W\d_a-z][\w-]*){0,3}"
_CHAIN = re.compile(
    rf"(?:\b(?P<my>(?i:my|our))|(?P<owner>{_OWNER})['’]s)"
    r"(?P<links>(?:\s+[\w-]+['’]s)+)"
    r"(?P<tail>(?:\s+[\w-]+){1,3})"
)
_POSSESSIVE = re.compile(r"['’]s$")
_NOT_OWNERS = frozenset("what who whose where when which how why is are was the a an".split())


@dataclass(frozen=True)
class Path:
    """A relation path found in a query: where it starts, its words, and the text around it."""

    start: str
    words: tuple[str, ...]
    links: int
    """How many of ``words`` came before a possessive (they must all be consumed by hops)."""
    before: str
    after: str


def find_path(query: str) -> Path | None:
    """The first relation path in ``query``, or ``None`` (see the module docstring)."""
    match = _CHAIN.search(query)
    if match is None:
        return None
    if match["my"]:
        start = USER
    else:
        words = match["owner"].split()
        while words and words[0].casefold() in _NOT_OWNERS:
            words.pop(0)
        if not words:
            return None
        start = " ".join(words)
    links = [_POSSESSIVE.sub("", w) for w in match["links"].split()]
    tail = match["tail"].split()
    return Path(start, (*links, *tail), len(links), query[: match.start()], query[match.end() :])


@dataclass(frozen=True)
class _Resolved:
    hops: list[list[Row]]
    """The facts of each hop, in order; the last hop's are the answers."""
    leftover: str
    """Words of the path's tail that no hop used (they go back into the ranked query)."""


def _predicates(path: Path) -> set[str]:
    """Every predicate a hop of ``path`` could be: each run of words, with and without
    ``_name``."""
    found = set()
    for i in range(len(path.words)):
        for width in range(1, min(MAX_HOP_WORDS, len(path.words) - i) + 1):
            predicate = snake_case(" ".join(path.words[i : i + width]))
            found |= {predicate, f"{predicate}_name"}
    return found


def _resolve(facts: Sequence[Row], path: Path) -> _Resolved | None:
    """Walk ``path`` over ``facts`` (the live facts with a predicate the path could name)."""
    index: dict[tuple[str, str], list[Row]] = {}
    for fact in facts:
        key = (normalise(fact["subject"]), normalise(fact["predicate"]))
        index.setdefault(key, []).append(fact)
    current = {normalise(path.start)}
    hops: list[list[Row]] = []
    i = 0
    while i < len(path.words):
        found = _hop(index, current, path.words, i)
        if found is None:
            if i <= path.links or not hops:
                return None  # a possessive hop (or the first one) did not resolve
            break  # the rest of the tail is ordinary words
        width, rows = found
        hops.append(rows)
        current = {normalise(r["object"]) for r in rows}
        i += width
    return _Resolved(hops, " ".join(path.words[i:]))


def _hop(
    index: dict[tuple[str, str], list[Row]], subjects: set[str], words: Sequence[str], i: int
) -> tuple[int, list[Row]] | None:
    """The longest run of words from ``i`` that is a predicate of one of ``subjects``."""
    for width in range(min(MAX_HOP_WORDS, len(words) - i), 0, -1):
        predicate = snake_case(" ".join(words[i : i + width]))
        rows = [
            row
            for subject in sorted(subjects)
            for name in (predicate, f"{predicate}_name")
            for row in index.get((subject, name), [])
        ]
        if rows:
            return width, sorted(rows, key=lambda r: r["id"])
    return None


def follow_graph(
    conn: Connection,
    query: str,
    k: int,
    rank: Callable[[str], list[Hit]],
    *,
    scope: str | None = None,
    keep: Callable[[list[Hit]], list[Hit]] = list,
) -> list[Hit] | None:
    """The hits of a query that names a resolvable path, else ``None`` (rank it as usual).

    ``rank`` is the ordinary search (in the same read), called with the rewritten query.
    ``scope``: the path resolves through facts of that scope only (``None``: every scope).
    ``keep`` weighs the graph's own hits as the ordinary ranking weighs its hits and drops those
    it would drop (another scope, below ``min_score``), keeping their order; an answer's
    relevance is :data:`ANSWER_RELEVANCE`, a linked memory's :data:`LINKED_RELEVANCE`.
    """
    path = find_path(query)
    if path is None:
        return None
    facts = graph.facts_where(conn, "predicate", _predicates(path))
    resolved = _resolve(facts if scope is None else in_scope(conn, facts, scope), path)
    if resolved is None:
        return None
    answers = keep(
        [_fact_hit(row, _trail(resolved.hops, row), "graph") for row in resolved.hops[-1]]
    )
    names = sorted({row["object"] for row in resolved.hops[-1]}, key=normalise)
    shown = {row["id"] for row in resolved.hops[-1]}
    linked = keep(_linked(conn, resolved.hops[-1], shown))[:MAX_LINKED]
    shown |= {hit.id for hit in linked}
    rewritten = " ".join(p for p in (path.before, *names, resolved.leftover, path.after) if p)
    ordinary = [hit for hit in rank(rewritten) if hit.id not in shown]
    return [*answers, *linked, *ordinary][:k]


def _trail(hops: Sequence[Sequence[Row]], answer: Row) -> list[str]:
    """The facts that led to ``answer``, first hop first (one chain back from the answer)."""
    trail = [answer]
    for rows in reversed(hops[:-1]):
        subject = normalise(trail[0]["subject"])
        parent = next((r for r in rows if normalise(r["object"]) == subject), None)
        if parent is None:
            break
        trail.insert(0, parent)
    return [content_of({**row, "table": "facts"}) for row in trail]


def _fact_hit(row: Row, trail: list[str] | None, via: str, score: float = ANSWER_RELEVANCE) -> Hit:
    extra: dict[str, object] = {"via": via}
    if trail is not None:
        extra["graph_path"] = trail
    return Hit({**row, "table": "facts"}, score=score, extra=extra)


def _linked(conn: Connection, answers: Sequence[Row], shown: set[str]) -> list[Hit]:
    """The memories one hop from the answers, in one order everywhere: facts about what the
    path reached, then memories joined to an answer by an edge (the caller keeps the first
    :data:`MAX_LINKED` its filters leave)."""
    reached = {normalise(row["object"]) for row in answers}
    about = [f for f in graph.facts_where(conn, "subject", reached) if f["id"] not in shown]
    about.sort(key=lambda f: (normalise(f["predicate"]), f["id"]))
    hits = [_fact_hit(f, None, "graph_link", LINKED_RELEVANCE) for f in about]
    seen = shown | {hit.id for hit in hits}
    for answer in answers:
        for edge in edges_of(conn, answer["id"]):
            other = edge["to_id"] if edge["from_id"] == answer["id"] else edge["from_id"]
            if other in seen:
                continue
            seen.add(other)
            hit = _edge_hit(conn, other, edge)
            if hit is not None:
                hits.append(hit)
    return hits


def _edge_hit(conn: Connection, row_id: str, edge: Row) -> Hit | None:
    try:
        table, row = find_row(conn, row_id)
    except NotFoundError:
        return None
    if row.get("archived") or table.name not in ("facts", "episodes"):
        return None
    extra: dict[str, object] = {"via": "graph_link", "edge": edge["type"]}
    return Hit({**row, "table": table.name}, score=LINKED_RELEVANCE, extra=extra)
