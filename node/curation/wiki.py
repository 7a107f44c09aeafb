"""The wiki: one Markdown page per topic, compiled from the replicated rows into ``HOME/wiki/``.

Pages are derived data (DESIGN §2): they never travel, each device compiles its own, and two
devices holding the same rows compile the same bytes apart from the ``last_compiled`` line.
So nothing here reads a clock or the local environment except that one line, and everything is
sorted.

Topics:

* a fact belongs to the topic of its subject ("user" holds what was said about the user);
* an episode belongs to the topic of each of its entities, or to ``Session <id>`` if it has
  none;
* topic names are compared in the normalised form of sync/ids.py (case and white space do not
  matter); a topic is shown in its most frequent spelling (ties: the smallest string).

A page has YAML frontmatter (``topic``, ``sources``: the ids of every row on it, sorted, and
``last_compiled``), then ``## Facts``, ``## Needs review``, ``## Episodes`` and ``## Edited on
two devices`` (the open conflicts of the page's memories, as ``memory conflicts`` lists them)
sections, each present only when
it has entries. "Needs review" lists every predicate with several live
facts that disagree (same subject and predicate, different objects), except the predicates
that hold many values by nature: :data:`MULTI_VALUED`.

File names are slugs: ASCII letters and digits joined by ``-``, at most 60 characters. Topics
whose slugs collide (or whose slug is empty or a reserved device name) get ``-`` and 8
characters of a hash of the normalised topic. :func:`read_page` finds a page by its topic or
its slug through the compiled index, never by joining user input to a path, so a topic like
``../x`` cannot leave the wiki folder.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from feral.node.answers import WikiTopic
from feral.node.home.files import replace_private_file
from feral.sync.errors import HomeFileError, NotFoundError, PathRefused
from feral.sync.ids import normalise

__all__ = [
    "MULTI_VALUED",
    "WIKI_FOLDER",
    "WikiPage",
    "build_pages",
    "list_pages",
    "pages_citing",
    "read_page",
    "slugify",
    "write_pages",
]

WIKI_FOLDER = "wiki"
MULTI_VALUED = frozenset({"note", "is", "likes", "dislikes"})
"""Predicates whose several objects are expected, not a conflict."""
MAX_SLUG = 60
REVIEW_HEADING = "\n## Needs review\n"
_DEVICES = {f"{prefix}{n}" for prefix in ("com", "lpt") for n in range(10)}
_RESERVED = frozenset({"con", "prn", "aux", "nul"} | _DEVICES)
"""Names Windows will not create as files, whatever the extension."""

Row = dict[str, Any]


@dataclass(frozen=True)
class WikiPage:
    """One compiled page before it is written."""

    topic: str
    slug: str
    sources: tuple[str, ...]
    body: str

    @property
    def path(self) -> str:
        """Where the page lives, relative to the home."""
        return f"{WIKI_FOLDER}/{self.slug}.md"

    def render(self, last_compiled: str) -> str:
        """The file's text: frontmatter, then the body."""
        sources = "".join(f"\n  - {json.dumps(s)}" for s in self.sources) or " []"
        front = f"topic: {json.dumps(self.topic, ensure_ascii=False)}\nsources:{sources}\n"
        return f"---\n{front}last_compiled: {last_compiled}\n---\n\n{self.body}"

    @property
    def needs_review(self) -> bool:
        return _needs_review(self.body)

    def entry(self) -> WikiTopic:
        """The JSON-friendly index entry: ``{"topic", "path", "sources", "needs_review"}``."""
        return {
            "topic": self.topic,
            "path": self.path,
            "sources": list(self.sources),
            "needs_review": self.needs_review,
        }


def slugify(topic: str) -> str:
    """ASCII letters and digits joined by ``-`` (possibly empty; see :func:`build_pages`)."""
    ascii_text = unicodedata.normalize("NFKD", topic).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:MAX_SLUG].strip("-")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _entities(row: Row) -> list[str]:
    """An episode's entities; a malformed value (rows come from peers) counts as none."""
    try:
        value = json.loads(row["entities"])
    except (TypeError, ValueError, RecursionError):
        return []
    if not isinstance(value, list):
        return []
    return [_one_line(e) for e in value if isinstance(e, str) and e.strip()]


class _Topics:
    """Rows grouped by normalised topic, with every spelling seen for each topic."""

    def __init__(self) -> None:
        self.facts: dict[str, list[Row]] = defaultdict(list)
        self.episodes: dict[str, list[Row]] = defaultdict(list)
        self.spellings: dict[str, Counter[str]] = defaultdict(Counter)

    def key(self, name: str) -> str:
        spelling = _one_line(name)
        key = normalise(spelling)
        self.spellings[key][spelling] += 1
        return key

    def name(self, key: str) -> str:
        return min(self.spellings[key].items(), key=lambda kv: (-kv[1], kv[0]))[0]


def build_pages(
    facts: Iterable[Row], episodes: Iterable[Row], *, conflicts: Iterable[Mapping[str, Any]] = ()
) -> list[WikiPage]:
    """Group live facts and episodes by topic and render each page body (pure). An open
    conflict (storage/absorb/conflicts.py) of a memory on a page is listed on that page."""
    races: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for race in conflicts:  # on the page of the memory, and of each value's row (a slot's)
        for row_id in sorted(
            {str(race["row_id"])} | {str(v.get("id", "")) for v in race["values"]}
        ):
            races[row_id].append(race)
    topics = _Topics()
    for fact in facts:
        topics.facts[topics.key(fact["subject"])].append(fact)
    for episode in episodes:
        names = _entities(episode) or [f"Session {_one_line(episode['session_id'])}"]
        for key in sorted({topics.key(name) for name in names}):
            topics.episodes[key].append(episode)
    keys = sorted(set(topics.facts) | set(topics.episodes))
    slugs = _slugs(keys)
    pages = []
    for key in keys:
        fact_rows = sorted(topics.facts.get(key, []), key=_fact_order)
        episode_rows = sorted(
            topics.episodes.get(key, []), key=lambda r: (r["created_at"], r["id"])
        )
        name = topics.name(key)
        shown = {
            str(r["id"]): r
            for row in (*fact_rows, *episode_rows)
            for r in races.get(str(row["id"]), [])
        }
        body = _body(name, fact_rows, episode_rows) + _races(list(shown.values()))
        sources = tuple(sorted({str(r["id"]) for r in (*fact_rows, *episode_rows)}))
        pages.append(WikiPage(name, slugs[key], sources, body))
    return pages


def _slugs(keys: Sequence[str]) -> dict[str, str]:
    base = {key: slugify(key) for key in keys}
    uses = Counter(base.values())
    slugs = {}
    for key, slug in base.items():
        if not slug or uses[slug] > 1 or slug in _RESERVED:
            digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
            slug = f"{slug}-{digest}" if slug else f"topic-{digest}"
        slugs[key] = slug
    return slugs


def _fact_order(row: Row) -> tuple[str, str, str]:
    return (normalise(row["predicate"]), normalise(row["object"]), str(row["id"]))


def _body(topic: str, facts: list[Row], episodes: list[Row]) -> str:
    lines = [f"# {_one_line(topic)}", ""]
    if facts:
        lines += ["## Facts", ""]
        for fact in facts:
            predicate, obj = _one_line(fact["predicate"]), _one_line(fact["object"])
            lines.append(f"- **{predicate}**: {obj} (`{fact['id']}`)")
        lines.append("")
    conflicts = _conflicts(facts)
    if conflicts:
        lines += [REVIEW_HEADING.strip(), ""]
        for predicate, rows in conflicts:
            lines.append(f"- **{predicate}** has {len(rows)} different values:")
            lines += [f"  - {_one_line(r['object'])} (`{r['id']}`)" for r in rows]
        lines.append("")
    if episodes:
        lines += ["## Episodes", ""]
        for e in episodes:
            session = _one_line(e["session_id"])
            lines.append(f"- {_one_line(e['summary'])} (session `{session}`, `{e['id']}`)")
        lines.append("")
    return "\n".join(lines)


RACES_HEADING = "## Edited on two devices"


def _races(races: list[Mapping[str, Any]]) -> str:
    """The open conflicts of this page's memories: both versions, and how to keep one."""
    if not races:
        return ""
    lines = [RACES_HEADING, ""]
    for race in sorted(races, key=lambda r: (r["detected_at"], r["id"])):
        what = f"slot {race['slot']}" if race.get("kind") == "slot" else f"`{race['row_id']}`"
        lines.append(f"- {what} ({race['table']}), conflict `{race['id']}`:")
        changed = _differing(race["values"])
        for version, values in zip(race["versions"], race["values"], strict=True):
            words = ", ".join(f"{k} = {_one_line(values[k])}" for k in changed)
            live = " (live)" if version == race["live"] else ""
            lines.append(f"  - `{version}`{live}: {words}")
        lines.append(f"  - keep one: `feral memory resolve {race['id']} --keep VERSION`")
    lines.append("")
    return "\n".join(lines) + "\n"


def _differing(values: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns whose values differ among a conflict's values (not the ids or dates)."""
    names = [k for k in values[0] if k not in ("id", "created_at")]
    return [k for k in names if len({repr(v.get(k)) for v in values}) > 1]


def _conflicts(facts: list[Row]) -> list[tuple[str, list[Row]]]:
    """Predicates with several live objects for this subject (``facts`` is sorted)."""
    by_predicate: dict[str, list[Row]] = defaultdict(list)
    for fact in facts:
        by_predicate[normalise(fact["predicate"])].append(fact)
    return [
        (_one_line(rows[0]["predicate"]), rows)
        for key, rows in by_predicate.items()
        if key not in MULTI_VALUED and len({normalise(r["object"]) for r in rows}) > 1
    ]


# -- files -----------------------------------------------------------------------------------


def _iso(now_ms: int) -> str:
    return datetime.fromtimestamp(now_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_pages(home: Path, pages: Sequence[WikiPage], now_ms: int) -> list[WikiTopic]:
    """Write ``pages`` into ``home/wiki`` (replacing each atomically) and delete stale pages.

    Returns:
        ``[{"topic", "path", "sources", "needs_review"}]`` for the pages written, topic order.

    Raises:
        HomeFileError: the folder or a page cannot be written.
    """
    folder = home / WIKI_FOLDER
    stamp = _iso(now_ms)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for page in pages:
            data = page.render(stamp).encode("utf-8")
            replace_private_file(folder / f"{page.slug}.md", data, durable=False)
        keep = {f"{page.slug}.md" for page in pages}
        for stale in folder.glob("*.md"):
            if stale.name not in keep and _frontmatter(stale) is not None:
                stale.unlink(missing_ok=True)
    except OSError as exc:
        raise HomeFileError(f"{folder}: cannot write the wiki: {exc.strerror or exc}") from exc
    return [page.entry() for page in pages]


def _frontmatter(path: Path) -> WikiTopic | None:
    """The index entry of a page this module wrote; ``None`` for other files."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    head, sep, body = text.removeprefix("---\n").partition("\n---\n")
    if not text.startswith("---\n") or not sep:
        return None
    topic: object = None
    sources: list[str] = []
    for line in head.splitlines():
        try:
            if line.startswith("topic: "):
                topic = json.loads(line.removeprefix("topic: "))
            elif line.startswith("  - "):
                sources.append(str(json.loads(line.removeprefix("  - "))))
        except ValueError:
            return None
    if not isinstance(topic, str):
        return None
    return {
        "topic": topic,
        "sources": sources,
        "needs_review": _needs_review(body),
        "path": f"{WIKI_FOLDER}/{path.name}",
    }


def _needs_review(body: str) -> bool:
    """Whether a page's body asks for review: conflicting values, or a memory edited on two
    devices (the same rule when a page is compiled and when the folder is listed)."""
    return REVIEW_HEADING in body or RACES_HEADING in body


def list_pages(home: Path) -> list[WikiTopic]:
    """The compiled pages: ``[{"topic", "path", "sources", "needs_review"}]``, topic order."""
    folder = home / WIKI_FOLDER
    found: list[WikiTopic] = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        front = _frontmatter(path)
        if front is not None:
            found.append(front)
    return sorted(found, key=lambda p: (normalise(p["topic"]), p["topic"], p["path"]))


def pages_citing(home: Path, row_ids: Iterable[str]) -> list[WikiTopic]:
    """The compiled pages that list one of ``row_ids`` among their sources.

    A nuked row's words stay on such a page until it is compiled again, and the API serves
    the pages as they are on disk: so a nuke (local or from a peer) recompiles at once.
    """
    wanted = set(row_ids)
    return [page for page in list_pages(home) if wanted.intersection(page["sources"])]


def read_page(home: Path, topic: str) -> str:
    """The text of the page for ``topic`` (its name in any case, or its file's slug).

    Raises:
        PathRefused: ``topic`` looks like a path (``/``, ``\\``, ``..``), or its page is a
            link to a file outside the wiki folder: refused.
        NotFoundError: no compiled page has that topic.
        HomeFileError: the page exists but cannot be read.
    """
    pages = list_pages(home)
    key = normalise(topic)
    # A topic's own page first, then a page whose file is named so (the index lists only files
    # inside the folder, so no input can name a path outside it).
    matches = [p for p in pages if normalise(p["topic"]) == key]
    matches += [p for p in pages if p["path"] == f"{WIKI_FOLDER}/{topic}.md"]
    if not matches:
        if any(mark in topic for mark in ("/", "\\", "..", "\x00")):
            raise PathRefused(f"refused: {topic!r} is a path, not a wiki topic")
        raise NotFoundError(f"no wiki page for {topic!r} (see 'feral wiki list'; compile first)")
    folder = (home / WIKI_FOLDER).resolve()
    path = (home / str(matches[0]["path"])).resolve()
    if path.parent != folder:  # a symlinked page pointing elsewhere
        raise PathRefused(f"refused: the page for {topic!r} is outside {folder}")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HomeFileError(f"cannot read the page for {topic!r}: {exc}") from exc
