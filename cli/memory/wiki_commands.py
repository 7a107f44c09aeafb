"""``feral wiki ...``: compile, list and show the Markdown pages built from the memories."""

from __future__ import annotations

from pathlib import Path

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, echo_table, json_option

__all__ = ["wiki"]


@click.group()
def wiki() -> None:
    """A Markdown wiki of your memories, one page per topic, in HOME/wiki."""


@wiki.command(name="compile")
@json_option("the pages")
@pass_home
def compile_(home: Path, as_json: bool) -> None:
    """Rebuild every page from the live memories.

    One page per topic (a fact's subject, an episode's entities); stale pages are removed.
    Pages where one subject and predicate have several objects get a "Needs review" section.
    """
    from feral.node.node import Node

    pages = with_node(home, Node.compile_wiki)
    if as_json:
        echo_json(pages)
        return
    click.echo(f"Compiled {len(pages)} page(s) in {home / 'wiki'}")
    review = [p["topic"] for p in pages if p["needs_review"]]
    if review:
        click.echo(f"Needs review (conflicting facts): {', '.join(review)}")


@wiki.command(name="list")
@json_option("the pages")
@pass_home
def list_(home: Path, as_json: bool) -> None:
    """List the compiled pages.

    Each with its topic, number of sources, whether it needs review, and its file.
    """
    from feral.node.node import Node

    pages = with_node(home, Node.wiki_topics)
    if as_json:
        echo_json(pages)
        return
    rows = [
        (p["topic"], len(p["sources"]), "yes" if p["needs_review"] else "", p["path"])
        for p in pages
    ]
    echo_table(rows, ("topic", "sources", "review", "path"))


@wiki.command()
@click.argument("topic")
@json_option("the topic and its page")
@pass_home
def show(home: Path, topic: str, as_json: bool) -> None:
    """Print the page for TOPIC.

    TOPIC is the page's topic in any case, or its file name without .md.
    """
    page = with_node(home, lambda node: node.wiki_page(topic))
    if as_json:
        echo_json({"topic": topic, "markdown": page})
        return
    click.echo(page, nl=False)
