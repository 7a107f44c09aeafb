"""What ``feral sync peers add|remove`` changed, said plainly and as JSON (issue 15, item 6).

Pairing an id that is already paired used to print "Paired with ..." whatever it replaced: a
new URL for an old peer, or nothing at all. The outcome now names the change: a new pairing, a
re-pairing (the URL or the plaintext flag before and after), or nothing changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from feral.node.settings.config import PeerSettings, Settings

__all__ = ["pairing_outcome", "pairing_line", "removal_outcome", "removal_line"]


def _peer_dict(peer: PeerSettings) -> dict[str, Any]:
    return {
        "node_id": str(peer.node_id),
        "url": peer.url,
        "insecure_plaintext": peer.insecure_plaintext,
    }


def pairing_outcome(before: Settings, peer: PeerSettings) -> dict[str, Any]:
    """``change`` is ``paired`` (new), ``re-paired`` (``before`` holds what it replaced) or
    ``unchanged``."""
    old = next((p for p in before.sync.peers if p.node_id == peer.node_id), None)
    if old is None:
        change = "paired"
    elif _peer_dict(old) == _peer_dict(peer):
        change = "unchanged"
    else:
        change = "re-paired"
    return {
        **_peer_dict(peer),
        "change": change,
        "before": None if old is None else _peer_dict(old),
    }


def _where(url: str | None) -> str:
    return f"at {url}" if url else "(accept only)"


def pairing_line(outcome: dict[str, Any]) -> str:
    """``Paired with ID at URL``, ``Re-paired ID: ... -> ...`` or ``Already paired ...``."""
    node_id, url = outcome["node_id"], outcome["url"]
    if outcome["change"] == "paired":
        return f"Paired with {node_id} {_where(url)}"
    if outcome["change"] == "unchanged":
        return f"Already paired with {node_id} {_where(url)}; nothing changed"
    before = outcome["before"]
    changes = []
    if before["url"] != url:
        changes.append(f"url {before['url'] or '(accept only)'} -> {url or '(accept only)'}")
    if before["insecure_plaintext"] != outcome["insecure_plaintext"]:
        flag = "on" if outcome["insecure_plaintext"] else "off"
        changes.append(f"insecure plaintext {flag}")
    return f"Re-paired {node_id}: " + ", ".join(changes)


def removal_outcome(before: Settings, after: Settings) -> dict[str, Any]:
    """The peers ``remove`` unpaired (one, or every peer sharing a URL)."""
    kept = {p.node_id for p in after.sync.peers}
    return {"removed": [_peer_dict(p) for p in before.sync.peers if p.node_id not in kept]}


def removal_line(outcome: dict[str, Any]) -> str:
    """``Removed ID at URL`` per peer, on one line."""
    return "; ".join(f"Removed {p['node_id']} {_where(p['url'])}" for p in outcome["removed"])
