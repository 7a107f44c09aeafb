"""What curation keeps current as rows change under it, subscribed to the node's kernel.

The kernel (node/node_kernel.py) knows nothing of curation: it tells its subscribers that a
peer's rows arrived, or that a commit erased rows (node/kernel.py). :func:`follow_changes`
subscribes this room when the ``Node`` is put together (node/node/): after a peer's page, the
conflicts it forked are recorded (node/curation/conflicts.py); after an erasure (a nuke, here or
from a peer), the wiki pages that showed an erased row are compiled again at once and the
prompt files written again, so the words leave the derived files with the row.
"""

from __future__ import annotations

from feral.node.answers import WikiTopic
from feral.node.kernel import Kernel
from feral.storage.absorb.conflicts import list_conflicts
from feral.storage.memory import memories
from feral.sync.schema import EPISODES, FACTS

from .conflicts import record_conflicts
from .wiki import build_pages, pages_citing, write_pages

__all__ = ["compile_wiki", "follow_changes"]


async def compile_wiki(node: Kernel) -> list[WikiTopic]:
    """Rebuild every page from the live rows: ``[{"topic", "path", "sources", ...}]``."""
    facts, episodes, races = await node.store.read(
        lambda conn: (
            memories.list_live(conn, FACTS),
            memories.list_live(conn, EPISODES),
            list_conflicts(conn),
        )
    )
    pages = build_pages(facts, episodes, conflicts=races)
    return write_pages(node.home, pages, node.now_ms())


def follow_changes(node: Kernel) -> None:
    """Subscribe curation to ``node``'s changes (see the module docstring)."""

    async def rows_arrived() -> None:
        await record_conflicts(node)

    async def rows_erased(erased: list[str]) -> None:
        from .prompt_files import rewrite_prompt_files  # its tokenizer: after an erasure only

        if pages_citing(node.home, erased):
            await compile_wiki(node)
        await rewrite_prompt_files(node)

    node.on_rows_arrived(rows_arrived)
    node.on_rows_erased(rows_erased)
