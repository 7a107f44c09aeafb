"""The CLI opens its node's store with the schema the program running it passes
(docs/PROTOCOL.md §10, rule 7): a newer release is a schema value handed to ``cli.main``, and
this release's schema stays as it was. With real processes and sync: test_mixed_versions.py."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from feral.cli.context import StoreSchema, store_schema
from feral.cli.main import cli
from feral.storage.db.migrations import Migration
from feral.sync.schema import BASE_SCHEMA, FACTS, SCHEMA_VERSION, Column

from .helpers import feral, init_home, turn_off_embeddings

COLOR = Column("color", "text", nullable=True, max_bytes=64, added_in=SCHEMA_VERSION + 1)
NEWER = StoreSchema(
    BASE_SCHEMA.with_column("facts", COLOR),
    (Migration("0099_test_fact_color", "ALTER TABLE facts ADD COLUMN color TEXT;"),),
)


def newer_feral(home: Path, *args: str) -> Result:
    """The CLI as a program of the newer schema runs it."""
    argv = ["--home", str(home), *args]
    return CliRunner().invoke(cli, argv, obj=NEWER, catch_exceptions=False)


def test_a_command_given_a_wider_schema_opens_the_store_with_it(tmp_path: Path):
    home = init_home(tmp_path / "home")
    turn_off_embeddings(home)
    triple = ("--subject", "the sky", "--predicate", "is", "--object", "blue")
    assert newer_feral(home, "memory", "remember", *triple).exit_code == 0
    exported = newer_feral(home, "memory", "export")
    assert exported.exit_code == 0, exported.output
    (fact,) = [r for r in map(json.loads, exported.stdout.splitlines()) if r["table"] == "facts"]
    assert "color" in fact and fact["color"] is None
    assert "color" not in FACTS.column_names and BASE_SCHEMA.version == SCHEMA_VERSION

    refused = feral(home, "memory", "export")  # this release, given no schema
    assert refused.exit_code == 1 and refused.stdout == ""
    assert f"schema version {SCHEMA_VERSION + 1}" in refused.stderr


def test_no_schema_is_found_outside_a_command_or_where_none_was_passed():
    assert store_schema() is None
    with cli.make_context("feral", [], resilient_parsing=True) as ctx, ctx.scope():
        assert store_schema() is None
