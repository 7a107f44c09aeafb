"""An example under every command's help, and the defaults shown beside its options.

Issue 15, item 6: a new user reads ``feral CMD -h`` and should see one line they can type.
The examples live here, one per command path, rather than in each command's docstring, so one
table shows them all and tests/cli/test_plain_help.py checks that none is missing and that each
parses as its command. :func:`add_examples` puts each under its command's help (click's
``epilog``) as each command is loaded by its lazy group (cli/lazy_group.py).
"""

from __future__ import annotations

import click

__all__ = ["EXAMPLES", "add_examples"]

EXAMPLES: dict[str, tuple[str, ...]] = {
    "feral": ("feral --home ~/.feral memory search 'doctor'",),
    "feral init": ("feral init --name laptop",),
    "feral demo": ("feral demo",),
    "feral serve": ("feral serve --host 0.0.0.0 --port 9090",),
    "feral mcp": ("feral mcp --home ~/.feral",),
    "feral memory": ('feral memory remember "my doctor\'s name is Dr. Chen"',),
    "feral memory remember": (
        'feral memory remember "my doctor\'s name is Dr. Chen"',
        "feral memory remember --subject Alice --predicate birthday --object 'May 4'",
    ),
    "feral memory search": ("feral memory search 'doctor appointment' --top-k 5",),
    "feral memory list": ("feral memory list --tier semantic -n 20",),
    "feral memory get": ("feral memory get ID --follow full_history",),
    "feral memory link": ("feral memory link FROM_ID TO_ID --type related_to --note 'one trip'",),
    "feral memory boost": ("feral memory boost ID 3 --reason 'asked about it daily'",),
    "feral memory forget": ("feral memory forget ID",),
    "feral memory restore": ("feral memory restore ID",),
    "feral memory conflicts": ("feral memory conflicts --all --json",),
    "feral memory resolve": ("feral memory resolve ID --keep VERSION",),
    "feral memory nuke": (
        "feral memory nuke ID --yes",
        "feral memory nuke --scope session:s1 --yes",
    ),
    "feral memory episodes": ("feral memory episodes --limit 5",),
    "feral memory stats": ("feral memory stats --json",),
    "feral memory export": ("feral memory export --output memories.jsonl",),
    "feral memory import": ("feral memory import facts.jsonl",),
    "feral memory ingest": ("feral memory ingest transcript.jsonl --secrets skip",),
    "feral memory reembed": ("feral memory reembed",),
    "feral memory gc": ("feral memory gc --ttl-days 14 --dry-run",),
    "feral memory distill": ("feral memory distill --session s1 --dry-run",),
    "feral memory digest": ("feral memory digest --topic 'dentist' --max-tokens 400",),
    "feral memory prompt": ("feral memory prompt --scope user",),
    "feral sync": ("feral sync status",),
    "feral sync prune": ("feral sync prune --dry-run",),
    "feral sync node-id": ("feral sync node-id",),
    "feral sync peers": ("feral sync peers --json",),
    "feral sync peers add": (
        "feral sync peers add wss://server.local:9090 --node-id SERVER_ID",
        "feral sync peers add --node-id PHONE_ID",
    ),
    "feral sync peers remove": ("feral sync peers remove SERVER_ID",),
    "feral sync now": ("feral sync now --peer SERVER_ID",),
    "feral sync status": ("feral sync status --json",),
    "feral sync clock-reset": ("feral sync clock-reset",),
    "feral sync invite": ("feral sync invite --name laptop --expires 30m",),
    "feral sync join": ("feral sync join 'feral://join?url=...&node=...&secret=...'",),
    "feral sync cert": ("feral sync cert --pem",),
    "feral wiki": ("feral wiki compile",),
    "feral wiki compile": ("feral wiki compile",),
    "feral wiki list": ("feral wiki list",),
    "feral wiki show": ("feral wiki show alice",),
    "feral graph": ("feral graph query --start place:Berlin --direction inbound",),
    "feral graph add": ("feral graph add --relation person:Alice lives_in place:Berlin",),
    "feral graph list": ("feral graph list --type person",),
    "feral graph query": ("feral graph query --start person:Alice --hops 2",),
    "feral log": ("feral log list -n 5",),
    "feral log record": ('feral log record web_search --args \'{"q": "tea"}\' --latency-ms 120',),
    "feral log list": ("feral log list --session s1",),
    "feral log search": ("feral log search web_search",),
}


def _epilog(examples: tuple[str, ...]) -> str:
    """Click rewraps an epilog's paragraphs; ``\\b`` keeps this one's lines as written."""
    label = "Example:" if len(examples) == 1 else "Examples:"
    return "\b\n" + "\n".join([label, *(f"  {line}" for line in examples)])


def add_examples(command: click.Command, path: str = "feral") -> None:
    """Set the epilog of ``command`` and of every command under it from :data:`EXAMPLES`."""
    examples = EXAMPLES.get(path)
    if examples is not None and not command.epilog:
        command.epilog = _epilog(examples)
    if isinstance(command, click.Group):
        for name, child in command.commands.items():
            add_examples(child, f"{path} {name}")
