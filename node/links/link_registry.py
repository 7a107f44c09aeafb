"""One live link per peer: which of a node's links with a peer pushes to it, and which wait.

Kept apart from node/links/peer.py so the rule (who pushes, who stands by, who yields when both ends
dialled at once) reads on its own. It works on :attr:`NodeKernel.links` and
:attr:`NodeKernel.standby` through the :class:`~feral.node.node_kernel.Link` protocol only; what
makes a link one this node dialled is the caller's to say (``dialled``), so this module never
imports the link class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from feral.node.node_kernel import Link, NodeKernel
from feral.sync.types import NodeId

__all__ = ["register", "unregister"]

Dialled = TypeVar("Dialled")


def register(
    node: NodeKernel, link: Link, peer: NodeId, dialled: Callable[[Link], Dialled | None]
) -> list[Dialled]:
    """Make ``link`` the one that pushes to ``peer``; an older one waits on standby.

    A ``sync now`` from the peer's other process opens a second link for its round; when
    that ends, the older link takes the pushes back (:func:`unregister`) instead of the peer
    being left with none. Two serve links between the same pair (both dialled at once) are one
    too many: the dialled link of the node with the greater id yields to the one it accepted,
    so both ends keep the link the smaller id dialled.

    Returns the links this node dialled that must step aside (``dialled`` gives a link back
    when this node dialled it, else ``None``).
    """
    current = node.links.get(peer)
    if current is not None and current is not link:
        node.standby.setdefault(peer, []).append(current)
    node.links[peer] = link
    if node.node_id <= peer:
        return []
    live = [node.links[peer], *node.standby.get(peer, [])]
    mine = [x for x in map(dialled, live) if x is not None]
    if len(mine) < len(live):  # an accepted link is up too
        return mine
    return []


def unregister(node: NodeKernel, link: Link, peer: NodeId | None) -> None:
    """``link`` ended: if it was pushing, the newest link on standby takes over, and looks for
    what was committed meanwhile (live sync must not wait for anti-entropy)."""
    if peer is None:
        return
    standby = node.standby.get(peer, [])
    if link in standby:
        standby.remove(link)
    if node.links.get(peer) is link:
        del node.links[peer]
        if standby:
            node.links[peer] = back = standby.pop()
            node.spawn(back.local_changed())
    if not standby:
        node.standby.pop(peer, None)
