"""``feral memory ...``: remember, search, list, archive and delete memories (bulk import
and ingest: cli/memory/memory_transfer_commands.py; export: cli/memory/export_command.py)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from feral.cli.context import pass_home, with_node
from feral.cli.lazy_group import LazyGroup
from feral.cli.output import echo_json, echo_table, json_option, queue_line, shorten
from feral.node.settings.bounds import (
    DEFAULT_ALPHA,
    DEFAULT_EPISODES,
    DEFAULT_MIN_SCORE,
    DEFAULT_MMR,
    DEFAULT_MMR_LAMBDA,
    DEFAULT_STRATEGY,
    DEFAULT_TOP_K,
    FRACTION_RANGE,
    MAX_EPISODES,
    MAX_IMPORTANCE,
    MAX_TOP_K,
    MIN_TOP_K,
    SEARCH_STRATEGIES,
    Strategy,
)

from .plain_checks import mmr_on
from .scope_option import scope_option

if TYPE_CHECKING:
    from feral.node.answers import AbsorbedAnswer
    from feral.node.node import Node

__all__ = ["memory"]

ELSEWHERE = {
    "boost": "feral.cli.memory.memory_rank_commands:boost",
    "conflicts": "feral.cli.memory.conflict_commands:conflicts_command",
    "digest": "feral.cli.memory.digest_commands:digest",
    "distill": "feral.cli.memory.memory_rank_commands:distill",
    "export": "feral.cli.memory.export_command:export",
    "gc": "feral.cli.memory.memory_rank_commands:gc",
    "get": "feral.cli.memory.memory_graph_commands:get",
    "import": "feral.cli.memory.memory_transfer_commands:import_",
    "ingest": "feral.cli.memory.memory_transfer_commands:ingest",
    "link": "feral.cli.memory.memory_graph_commands:link_command",
    "list": "feral.cli.memory.memory_rank_commands:list_",
    "prompt": "feral.cli.memory.digest_commands:prompt",
    "resolve": "feral.cli.memory.conflict_commands:resolve",
}
"""The ``memory`` commands kept in other modules, imported only when used (cli/lazy_group.py)."""


@click.group(cls=LazyGroup, lazy_subcommands=ELSEWHERE)
def memory() -> None:
    """Remember, search and manage memories."""


@memory.command()
@click.argument("text", required=False)
@click.option("--subject", help="Subject of an explicit triple.")
@click.option("--predicate", help="Predicate of an explicit triple.")
@click.option("--object", "obj", help="Object of an explicit triple.")
@scope_option("Whose fact it is (default user)")
@click.option(
    "--keep-both",
    is_flag=True,
    help="Write the fact even if it would be merged as a duplicate or supersede a stored one "
    "(linked to it as related).",
)
@json_option("the stored row")
@pass_home
def remember(
    home: Path,
    text: str | None,
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    scope: str | None,
    keep_both: bool,
    as_json: bool,
) -> None:
    """Remember TEXT as a fact, or the triple given by --subject/--predicate/--object.

    Common phrasings become triples ("I live in Porto" is user / lives_in / Porto); anything
    else is a note (user / note / TEXT). The fact is classified against what is stored: the
    same fact (the same words again) is one row, a look-alike ("5 mg", "5 g") a row of its own,
    related; a new value of a single-valued slot ("my doctor is now Dr. Lee") supersedes the
    old one, which is archived; an opposite is linked as a contradiction, a close fact as
    related. The answer names every row merged into or
    archived (`memory restore ID` brings one back); --keep-both writes beside them instead.
    A text saying several facts ("I moved to Lisbon and my dentist is Dr. Silva") is
    absorbed clause by clause. --json prints the answer with the row.
    """
    from feral.cli.resident import resident_idle, start_resident
    from feral.cli.serve_handoff import hand_to_serve

    from .absorb_output import echo_absorbed

    parts = (subject, predicate, obj)
    if any(parts) and not all(parts):
        raise click.UsageError("--subject, --predicate and --object go together")
    if any(parts) and text is not None:
        raise click.UsageError("give TEXT or --subject/--predicate/--object, not both")
    if not all(parts) and not (text and text.strip()):
        raise click.UsageError("give TEXT or --subject/--predicate/--object")
    given = {"subject": subject, "predicate": predicate, "object": obj} if all(parts) else {}
    body: dict[str, Any] = {**given, **({} if given else {"fact": text})}
    body.update({"scope": scope} if scope else {})
    body.update({"keep_both": True} if keep_both else {})
    served = hand_to_serve(home, "/api/memory/remember", body)  # cli/serve_handoff.py
    if served is not None:
        echo_absorbed(served, as_json)
        return
    idle_s = resident_idle(home)  # a bad setting refuses before anything is written
    absorbed = _remember_here(home, text, (subject, predicate, obj), scope, keep_both)
    echo_absorbed(absorbed, as_json)
    start_resident(home, idle_s)  # for the next command (cli/resident.py)


def _remember_here(
    home: Path, text: str | None, parts: tuple[str | None, ...], scope: str | None, keep: bool
) -> AbsorbedAnswer:
    """``remember`` in this process: the node opened here, the model loaded here. The text
    goes to ``Node.absorb`` as the API sends it: the node scans, parses and classifies it
    (node/absorb/pipeline.py), and checks it before the home is opened (``absorbing``), so a secret
    is refused before anything is read, written or made."""
    from feral.node.absorb.pipeline import absorbing

    triple = (str(parts[0]), str(parts[1]), str(parts[2])) if all(parts) else None
    absorb = absorbing(None if triple else text, triple, scope, keep_both=keep)
    return with_node(home, absorb).as_dict()


@memory.command()
@click.argument("query")
@click.option(
    "--top-k",
    type=click.IntRange(MIN_TOP_K, MAX_TOP_K),
    help="How many results.",
    show_default=f"settings search.top_k, {DEFAULT_TOP_K}",
)
@click.option(
    "--strategy",
    type=click.Choice(SEARCH_STRATEGIES),
    help="Which search legs to use.",
    show_default=f"settings search.strategy, {DEFAULT_STRATEGY}",
)
@click.option(
    "--alpha",
    type=click.FloatRange(*FRACTION_RANGE),
    help="Weight of the vector leg in hybrid (not given: the setting, lowered for a long query).",
    show_default=f"settings search.alpha, {DEFAULT_ALPHA}",
)
@click.option(
    "--mmr/--no-mmr",
    default=None,
    help="Rerank for diversity (MMR; needs an embedding model).",
    show_default=f"settings search.mmr, {'on' if DEFAULT_MMR else 'off'}",
)
@click.option(
    "--mmr-lambda",
    type=click.FloatRange(*FRACTION_RANGE),
    help="MMR's relevance weight: 1 is plain relevance order, lower is more diverse; needs --mmr.",
    show_default=f"settings search.mmr_lambda, {DEFAULT_MMR_LAMBDA}",
)
@click.option(
    "--min-score",
    type=click.FloatRange(0, MAX_IMPORTANCE),
    help="Drop hits whose final score (relevance x temporal x importance) is below this.",
    show_default=f"settings search.min_score, {DEFAULT_MIN_SCORE}",
)
@scope_option("Only memories of this scope")
@json_option("results")
@pass_home
def search(
    home: Path,
    query: str,
    top_k: int | None,
    strategy: Strategy | None,
    alpha: float | None,
    mmr: bool | None,
    mmr_lambda: float | None,
    min_score: float | None,
    scope: str | None,
    as_json: bool,
) -> None:
    """Search episodes and facts, ranked by relevance x temporal x importance."""
    from feral.cli.resident import resident_idle, start_resident
    from feral.cli.serve_handoff import hand_to_serve

    from .search_output import echo_search

    if mmr_lambda is not None and not mmr_on(home, mmr):
        raise click.UsageError("--mmr-lambda needs --mmr (MMR is off, so it would be ignored)")
    options = {"top_k": top_k, "strategy": strategy, "alpha": alpha, "mmr": mmr,
               "mmr_lambda": mmr_lambda, "min_score": min_score, "scope": scope}  # fmt: skip
    body = {"query": query, **{k: v for k, v in options.items() if v is not None}}
    result = hand_to_serve(home, "/api/memory/search", body)  # cli/serve_handoff.py
    if result is not None:
        echo_search(result, as_json)
        return
    idle_s = resident_idle(home)
    found = with_node(home, lambda node: node.search(query, **options))  # type: ignore[arg-type]
    echo_search(dict(found.as_dict()), as_json)
    start_resident(home, idle_s)  # for the next command (cli/resident.py)


@memory.command()
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_EPISODES),
    default=DEFAULT_EPISODES,
    show_default=True,
    help="How many episodes, newest first.",
)
@json_option("episodes")
@pass_home
def episodes(home: Path, limit: int, as_json: bool) -> None:
    """List the newest episodes."""
    rows = with_node(home, lambda node: node.episodes(limit))
    if as_json:
        echo_json(rows)
        return
    echo_table(
        [(r["id"], r["session_id"], shorten(r["summary"], 60)) for r in rows],
        ("id", "session", "summary"),
    )


def _echo_row(row: Mapping[str, object], verb: str, as_json: bool) -> None:
    if as_json:
        echo_json(row)
    else:
        click.echo(f"{verb} {row['id']}")


@memory.command()
@click.argument("row_id", metavar="ID")
@json_option("the row")
@pass_home
def forget(home: Path, row_id: str, as_json: bool) -> None:
    """Archive a memory (replicated; undo with restore)."""
    _echo_row(with_node(home, lambda node: node.set_archived(row_id, True)), "Archived", as_json)


@memory.command()
@click.argument("row_id", metavar="ID")
@json_option("the row")
@pass_home
def restore(home: Path, row_id: str, as_json: bool) -> None:
    """Un-archive a memory."""
    _echo_row(with_node(home, lambda node: node.set_archived(row_id, False)), "Restored", as_json)


@memory.command()
@click.argument("row_id", metavar="ID", required=False)
@scope_option("Every memory of this agent: or session: scope, instead of one ID")
@click.option("--yes", is_flag=True, help="Confirm: the content is erased on every device.")
@json_option("the tombstone, or the ids erased")
@pass_home
def nuke(home: Path, row_id: str | None, scope: str | None, yes: bool, as_json: bool) -> None:
    """Hard-delete a memory (or a scope's) everywhere (replicated tombstones; not recoverable)."""
    if (row_id is None) == (scope is None):
        raise click.UsageError("give one ID or --scope")
    from feral.node.curation import actions as curation

    if not yes:
        raise click.UsageError("nuke erases the memory on every device; add --yes to confirm")
    if scope is None:
        _echo_row(with_node(home, lambda node: node.nuke(str(row_id))), "Deleted", as_json)
        return
    erased = with_node(home, lambda node: curation.nuke_scope(node, scope))
    if as_json:
        echo_json({"scope": scope, "deleted": erased})
        return
    click.echo(f"Deleted {len(erased)} memory(ies) of {scope}")


@memory.command()
@scope_option("Count only memories of this scope")
@json_option("stats")
@pass_home
def stats(home: Path, scope: str | None, as_json: bool) -> None:
    """Counts per tier, the delta log, vectors and the embedder."""
    from feral.node.curation import actions as curation

    from .conflict_commands import conflicts_line

    result = with_node(home, lambda node: curation.scoped_stats(node, scope))
    if as_json:
        echo_json(result)
        return
    echo_table(
        [(tier, c["live"], c["archived"], c["deleted"]) for tier, c in result["tiers"].items()],
        ("tier", "live", "archived", "deleted"),
    )
    embedder = result["embedder"]
    click.echo(f"node id        {result['node_id']}")
    click.echo(
        f"delta log      {result['delta_log_entries']} entries from {result['origins']} node(s)"
    )
    click.echo(f"vector search  {result['vector_search']}")
    if embedder:
        name, dim, count = embedder["name"], embedder["dim"], result["vectors"]
        unused = "" if result["vector_search"] == "on" else " (kept, not in use)"
        click.echo(f"embedder       {name} ({dim} dims), {count} vectors{unused}")
    click.echo(f"embed queue    {queue_line(result['embed_pending'])}")
    click.echo(f"conflicts      {conflicts_line(result['conflicts'])}")  # as sync status
    pruning = result["prune"]
    oldest = pruning["oldest_unacknowledged_peer"]
    lagging = "none" if oldest is None else f"{oldest['name'] or oldest['node_id']}"
    click.echo(f"prunable       {pruning['prunable_entries']} log entries, "
               f"{pruning['prunable_tombstones']} tombstones (feral sync prune)")  # fmt: skip
    click.echo(f"oldest unacked {lagging}")


@memory.command()
@json_option("the count and embedder")
@pass_home
def reembed(home: Path, as_json: bool) -> None:
    """Drop every vector and embed all episodes and facts again with the current embedder.

    A node re-embeds by itself when memory.embedder names another model; run this after
    anything else that changes vectors (a new feral with a retrained model of the same name).
    Vectors are derived data, local to this device: nothing is sent to peers.
    """
    hidden = not sys.stderr.isatty()  # a log or a pipe gets the count, not a bar
    with contextlib.ExitStack() as stack:
        bars: list[Any] = []

        def progress(done: int, total: int) -> None:
            if not bars:
                bar = click.progressbar(
                    length=total, label="Re-embedding", file=sys.stderr, hidden=hidden
                )
                bars.append(stack.enter_context(bar))
            bars[0].update(done - bars[0].pos)

        async def run(node: Node) -> dict[str, Any]:
            count = await node.reembed(progress)
            name, dim = (node.embedder.name, node.embedder.dim) if node.embedder else ("", 0)
            return {"embedded": count, "embedder": {"name": name, "dim": dim}}

        result = with_node(home, run)
    if as_json:
        echo_json(result)
        return
    used = result["embedder"]
    click.echo(f"Re-embedded {result['embedded']} row(s) with {used['name']} ({used['dim']} dims)")
