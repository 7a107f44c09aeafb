"""``kill -9`` at random points of catch-ups and of local writes (TEST-CATALOG 18 and 19).

A crash must never cost an acknowledged write, nor leave a store whose parts disagree: a local
write commits its row, its delta-log entry and its version-vector entry in one transaction, and
a peer's page is merged the same way. Only a real process killed between two system calls shows
that this holds, so these suites SIGKILL real ``feral serve`` and CLI processes on real files,
twenty rounds each, check ``integrity_check`` and that each store's ledger balances after every
kill, and go on from the state the kill left, as a user's next command would.

Every random choice (who dies, when, how much new data each side makes, how far a restarted
clock is set back) comes from one seeded ``random.Random``, whose seed the assertion messages
and a failure's captured output name: ``FERAL_KILL_SEED=N`` replays the choices (the processes'
timing is their own, so a replay usually, not always, hits the same spot).
"""

from __future__ import annotations

import dataclasses
import http.client
import itertools
import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import sqlean

from feral.node.absorb.absorb_batch import TRANSACTION
from feral.node.node import IMPORT_BATCH
from feral.node.node_kernel import CLOCK_OFFSET_ENV
from feral.node.settings.config import load_settings, save_settings
from feral.sync.delta import MAX_PAGE_DELTAS

from .helpers import exported_facts, turn_off_embeddings
from .servers import CLI_TIMEOUT_S, FeralNode, Mesh, export_rows, pair, run_parallel, wait_until

ROUNDS = 20
SEED_ENV = "FERAL_KILL_SEED"
POLL_S = 0.01
PAGE = MAX_PAGE_DELTAS
SET_BACK_MS = 10 * 60_000
JSON_BODY = {"Content-Type": "application/json"}
IMPORT_LINES = {"import": IMPORT_BATCH + 500, "both": IMPORT_BATCH // 2}
"""Two transactions (a kill between them must leave exactly the first batch), or one."""

LEDGER_SQL = {
    "rows": "SELECT origin, count(*), NULL FROM facts GROUP BY origin",
    "entries": "SELECT origin, count(*), max(hlc) FROM delta_log GROUP BY origin",
    "paired": "SELECT f.origin, count(*), NULL FROM facts AS f JOIN delta_log AS d "
    "ON d.origin = f.origin AND d.hlc = f.hlc AND d.row_id = f.id GROUP BY f.origin",
    "vector": "SELECT origin, entries, hlc FROM version_vector",
}
"""Per origin: (how many, the newest stamp) of its rows, its log entries, the rows that have
their own entry (a row has at most one, an entry at most one row), and its vector entry."""


@dataclass
class Trial:
    """The seeded choices of one test and how far it has got, for every assertion message."""

    seed: int
    rng: random.Random
    round: int = -1

    def __str__(self) -> str:
        return f"[{SEED_ENV}={self.seed}, round {self.round}]"


@pytest.fixture
def trial() -> Trial:
    raw = os.environ.get(SEED_ENV)
    seed = int(raw) if raw else random.SystemRandom().randrange(2**32)
    print(f"{SEED_ENV}={seed}")  # shown with the captured output of a failure
    return Trial(seed, random.Random(seed))


def quiet_nodes(mesh: Mesh, *names: str, tls: bool = False) -> list[FeralNode]:
    """Nodes without an embedding model (vectors play no part here, and the model slows starts),
    their databases made (the checks below read the files, and must not create them); with
    ``tls`` they serve, and are dialled, over ``wss://``. An empty receiver catches up by the
    log here, never by a snapshot (its pages carry no log entries, which the checks count)."""
    nodes = mesh.add(*names, tls=tls)
    for node in nodes:
        turn_off_embeddings(node.home)
        settings = load_settings(node.home)
        sync = dataclasses.replace(settings.sync, snapshot_above_entries=10**9)
        save_settings(node.home, dataclasses.replace(settings, sync=sync))
        node.cli("memory", "stats")
    return nodes


def ended(proc: subprocess.Popen[str]) -> bool:
    return proc.poll() is not None


def held(node: FeralNode, origin: FeralNode) -> int:
    """How many of ``origin``'s log entries ``node`` holds, by its version vector."""
    rows = node.query("SELECT entries FROM version_vector WHERE origin = ?", origin.node_id)
    return int(rows[0][0]) if rows else 0


def check_ledger(node: FeralNode, trial: Trial, *, integrity: bool = True) -> None:
    """``integrity_check`` (for a file a killed process wrote), then the crash invariant.

    Read in one snapshot, per origin: as many rows as log entries as rows paired with their own
    entry as the vector counts, and the vector at the newest entry (never ahead of the data).
    The suites write each fact once and never edit it, so a row and its entry share one stamp.
    """
    conn = sqlean.connect(str(node.database), timeout=10, isolation_level=None)
    try:
        verdict = conn.execute("PRAGMA integrity_check").fetchall() if integrity else [("ok",)]
        conn.execute("BEGIN")
        views = {
            name: {origin: (count, top) for origin, count, top in conn.execute(sql)}
            for name, sql in LEDGER_SQL.items()
        }
        conn.execute("COMMIT")
    finally:
        conn.close()
    assert verdict == [("ok",)], f"{trial} {node.name}: integrity_check says {verdict}"
    for origin in set().union(*views.values()):
        seen = {name: view.get(origin, (0, None)) for name, view in views.items()}
        balanced = len({count for count, _ in seen.values()}) == 1
        assert balanced and seen["vector"][1] == seen["entries"][1], (
            f"{trial} {node.name}, origin {origin}: (count, newest stamp) {seen}"
        )


def exports(*nodes: FeralNode) -> list[str]:
    results = run_parallel((node, ("memory", "export")) for node in nodes)
    for node, result in zip(nodes, results, strict=True):
        assert result.returncode == 0, f"{node.name}: export: {result.stderr}"
    return [r.stdout for r in results]


# -- kill -9 during catch-up ------------------------------------------------------------------


def top_up(node: FeralNode, peer: FeralNode, trial: Trial) -> None:
    """Import new facts into ``node`` until ``peer`` lacks two to three pages of them (only for
    the direction the next kill watches: the other drains, which keeps the files small)."""
    own = held(node, node)
    backlog = own - held(peer, node)
    if backlog >= 2 * PAGE:
        return
    numbers = range(own, own + 2 * PAGE - backlog + trial.rng.randint(0, PAGE))
    path = node.home.parent / f"{node.name}-{own}.jsonl"
    path.write_text(exported_facts(f"{node.name} fact {n} on topic {n % 97}" for n in numbers))
    node.cli("memory", "import", str(path))


def strike_when(
    proc: subprocess.Popen[str], landed: Callable[[], int], backlog: int, mode: str, trial: Trial
) -> str:
    """Wait for a random point inside the catch-up of the watched direction, and say which.

    ``rows``: right after a random number of its rows has landed (between two commits, a page
    or more still to go); ``delay``: a random delay after its first page (anywhere in the
    transfer or apply of the next). A process that ends first ends the wait.
    """
    rows = trial.rng.randint(1, backlog - PAGE) if mode == "rows" else 1
    delay = trial.rng.uniform(0.0, 0.25) if mode == "delay" else 0.0
    reached = wait_until(lambda: ended(proc) or landed() >= rows, 30, POLL_S)
    assert reached, f"{trial}: no {rows} rows landed within 30 s of a catch-up of {backlog}"
    wait_until(lambda: ended(proc), delay, POLL_S)
    return f"{delay:.3f} s after {rows} rows"


def watched(sender: FeralNode, receiver: FeralNode, victim: str) -> tuple[FeralNode, FeralNode]:
    """The direction a kill of ``victim`` strikes: (the origin of the pages, their receiver)."""
    return (sender, receiver) if victim == "receiver" else (receiver, sender)


def catch_up_round(
    sender: FeralNode, receiver: FeralNode, victim: str, mode: str, trial: Trial
) -> bool:
    """One ``sync now`` from the sender, SIGKILLed at a random point; whether it landed partway.

    ``victim`` is the receiver's server (killed mid-apply of the sender's pages) or the
    sender's ``sync now`` process (killed mid-apply of the receiver's pages).
    """
    directions = ((receiver, sender), (sender, receiver))
    origin, holder = watched(sender, receiver, victim)
    before = {pair: held(*pair) for pair in directions}
    total = held(origin, origin)
    with sender.spawn("sync", "now") as sync:
        start = before[holder, origin]
        point = strike_when(sync, lambda: held(holder, origin) - start, total - start, mode, trial)
        receiver.kill() if victim == "receiver" else sync.kill()
        _, err = sync.communicate(timeout=CLI_TIMEOUT_S)
    where = f"{trial} kill -9 of the {victim} {point}"
    assert "Traceback" not in err, (where, err)
    if victim == "receiver":  # exit 1 with one line saying why, or 0 if it had finished
        one_line = sync.returncode == 1 and len(err.strip().splitlines()) == 1
        assert sync.returncode == 0 or one_line, (where, sync.returncode, err)
    else:
        assert sync.returncode in (0, -signal.SIGKILL), (where, err)
        assert receiver.serving, f"{where}: the receiver's server died too"
    check_ledger(receiver, trial, integrity=victim == "receiver")
    check_ledger(sender, trial, integrity=victim == "sender")
    for (node, source), was in before.items():
        now, whole = held(node, source), held(source, source)
        assert (now - was) % PAGE == 0 or now == whole, (
            f"{where}: {node.name} took {was} to {now} of {whole}: not pages of {PAGE}"
        )
    return before[holder, origin] < held(holder, origin) < total


@pytest.mark.slow
@pytest.mark.timeout(900)  # over four minutes on two busy cores
@pytest.mark.parametrize(
    ("tls", "rounds"), [(False, ROUNDS), (True, ROUNDS // 2)], ids=["ws", "wss"]
)  # over TLS, half the rounds: the same kills inside encrypted links, for less CI time
def test_kill_9_at_random_points_of_catch_ups_loses_nothing_and_converges(mesh, trial, tls, rounds):
    sender, receiver = quiet_nodes(mesh, "sender", "receiver", tls=tls)
    pair(receiver, sender, dial=False)
    pair(sender, receiver, dial=True)
    kills = [(v, m) for v in ("receiver", "sender") for m in ("rows", "delay")] * (rounds // 4)
    trial.rng.shuffle(kills)
    partway = 0
    for trial.round, (victim, mode) in enumerate(kills):
        restart = not receiver.serving
        if restart:
            receiver.start()  # it starts while the two sides make new facts
        top_up(*watched(sender, receiver, victim), trial)
        if restart:
            receiver.wait_ready()
        partway += catch_up_round(sender, receiver, victim, mode, trial)
    # Not a vacuous run: a good share of the kills fell inside a catch-up, between two pages.
    assert partway >= rounds // 4, f"{trial}: only {partway} kills fell inside a catch-up"

    trial.round = rounds
    if not receiver.serving:
        mesh.start(receiver)
    sender.run("sync", "now")
    sender_export, receiver_export = exports(sender, receiver)
    assert sender_export == receiver_export, f"{trial}: the exports differ after a clean sync"
    everything = held(sender, sender) + held(receiver, receiver)
    assert len(export_rows(receiver_export)) == everything, trial
    assert sender.count() == receiver.count() == everything, trial
    for node in (sender, receiver):
        check_ledger(node, trial)


# -- kill -9 during local writes --------------------------------------------------------------


class ApiWriters:
    """Clients remembering facts through ``POST /api/memory/remember`` until stopped or cut
    off; a write is acknowledged only once its 200 answer, the stored row, has arrived."""

    def __init__(self, node: FeralNode, prefix: str, clients: int = 2) -> None:
        self.port = node.port
        self.prefix = prefix
        self.acked: list[dict[str, Any]] = []
        self.refused: list[str] = []
        self.halt = threading.Event()
        self.threads = [threading.Thread(target=self.write, args=(n,)) for n in range(clients)]

    def __enter__(self) -> ApiWriters:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.halt.set()
        for thread in self.threads:
            thread.join(CLI_TIMEOUT_S)

    def write(self, client: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=CLI_TIMEOUT_S)
        try:
            for n in itertools.count():
                if self.halt.is_set():
                    return
                body = json.dumps({"fact": f"{self.prefix} api c{client} n{n}"})
                conn.request("POST", "/api/memory/remember", body, JSON_BODY)
                answer = conn.getresponse()
                data = answer.read()
                if answer.status != 200:
                    self.refused.append(f"{answer.status}: {data!r}")
                    return
                self.acked.append(json.loads(data))
        except (OSError, http.client.HTTPException):
            return  # the server is gone: the write in flight was never acknowledged
        finally:
            conn.close()


def strike_writes(writer: FeralNode, kind: str, lines: list[str], trial: Trial) -> int:
    """SIGKILL this round's victims at a random point; the importer's exit status (0: none ran).

    ``serve`` kills the server amid API writes; ``import`` kills an import beside it, once its
    first batch has committed (a one-batch import: before it can say so) or after a delay;
    ``both`` kills the two together."""
    if kind == "serve":
        time.sleep(trial.rng.uniform(0.05, 0.5))
        writer.kill()
        return 0
    path = writer.home.parent / f"import-{trial.round}.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    first_batch = held(writer, writer) + min(IMPORT_BATCH, len(lines))
    after_commit = trial.rng.random() < 0.5
    delay = 30.0 if after_commit else trial.rng.uniform(0.2, 2.0)
    with writer.spawn("memory", "import", str(path)) as importer:
        wait_until(
            lambda: ended(importer) or (after_commit and held(writer, writer) >= first_batch),
            delay,
            POLL_S,
        )
        importer.kill()
        if kind == "both":
            writer.kill()
        _, err = importer.communicate(timeout=CLI_TIMEOUT_S)
    assert importer.returncode in (0, -signal.SIGKILL), f"{trial} import: {err}"
    return importer.returncode


def check_import(writer: FeralNode, lines: list[str], status: int, trial: Trial) -> None:
    """An import commits whole transactions in file order (each of ``TRANSACTION`` lines:
    an import is classified line by line, node/absorb/absorb_batch.py), and all of it once it exits
    0."""
    if not lines:
        return
    like = lines[0].rsplit(" ", 1)[0] + " %"
    present = {row[0] for row in writer.query("SELECT object FROM facts WHERE object LIKE ?", like)}
    count = len(present)
    if status == 0:
        assert count == len(lines), f"{trial}: the import exited 0 but {count} lines are in"
    assert count % TRANSACTION == 0 or count == len(lines), f"{trial}: a partial batch: {count}"
    assert present == set(lines[: len(present)]), f"{trial}: not the first {count} lines"


def check_round(writer: FeralNode, acked: list[dict[str, Any]], floor: int, trial: Trial) -> None:
    """Every answered write is there as answered; all of the round's rows stamp above ``floor``."""
    ids = json.dumps([answer["id"] for answer in acked])
    sql = "SELECT id, object, hlc FROM facts WHERE id IN (SELECT value FROM json_each(?))"
    found = {row_id: (text, hlc) for row_id, text, hlc in writer.query(sql, ids)}
    for answer in acked:
        assert found.get(answer["id"]) == (answer["object"], answer["hlc"]), (
            f"{trial}: the acknowledged write {answer['object']!r} is lost or changed"
        )
    like = f"r{trial.round:02d} %"
    sql = "SELECT min(hlc), count(*) FROM facts WHERE object LIKE ?"
    ((lowest, count),) = writer.query(sql, like)
    assert count == 0 or lowest > floor, f"{trial}: stamp {lowest} is not above {floor}"


def write_round(writer: FeralNode, kind: str, trial: Trial) -> dict[str, int]:
    """One round of writes ending in a kill; returns the acknowledged API writes, text to stamp."""
    prefix = f"r{trial.round:02d}"
    lines = [f"{prefix} import line {n}" for n in range(IMPORT_LINES.get(kind, 0))]
    ((floor,),) = writer.query("SELECT coalesce(max(hlc), 0) FROM version_vector")
    with ApiWriters(writer, prefix) as api:
        status = strike_writes(writer, kind, lines, trial)
    assert not api.refused, f"{trial}: API writes refused: {api.refused[:3]}"
    assert kind != "import" or writer.serving, f"{trial}: the server died with the importer"
    check_ledger(writer, trial)
    check_round(writer, api.acked, floor, trial)
    check_import(writer, lines, status, trial)
    return {answer["object"]: answer["hlc"] for answer in api.acked}


def check_stamp_order(rows: list[dict[str, Any]], trial: Trial) -> None:
    """Each round's stamps lie above every earlier round's, whatever the clock said at restart."""
    by_round: dict[int, list[int]] = {}
    for row in rows:
        by_round.setdefault(int(row["object"][1:3]), []).append(row["hlc"])
    spans = [(min(by_round[r]), max(by_round[r])) for r in sorted(by_round)]
    for (_, earlier), (later, _) in itertools.pairwise(spans):
        assert later > earlier, f"{trial}: a round stamped {later}, below {earlier} before it"


@pytest.mark.slow
def test_kill_9_during_local_writes_loses_no_acknowledged_write(mesh, trial):
    writer, peer = quiet_nodes(mesh, "writer", "peer")
    pair(writer, peer, dial=False)
    pair(peer, writer, dial=True)
    peer.cli("memory", "remember", "the peer's own note")
    kinds = ["serve"] * 14 + ["import"] * 3 + ["both"] * 3
    trial.rng.shuffle(kinds)
    acked: dict[str, int] = {}
    for trial.round, kind in enumerate(kinds):
        # Half the restarts run 10 minutes behind: stamps must still climb above the last one.
        offset = trial.rng.choice((0, -SET_BACK_MS))
        writer.env = {CLOCK_OFFSET_ENV: str(offset)} if offset else {}
        if not writer.serving:
            mesh.start(writer)
        acked.update(write_round(writer, kind, trial))

    trial.round = ROUNDS
    writer.stop()
    writer.env = {}
    mesh.start(writer)
    peer.run("sync", "now")
    writer_export, peer_export = exports(writer, peer)
    assert writer_export == peer_export, f"{trial}: the exports differ after a clean sync"
    rows = export_rows(peer_export).values()
    mine = [row for row in rows if row["origin"] == writer.node_id]
    assert len(mine) == held(writer, writer) and len(rows) == len(mine) + 1, trial
    stamped = {row["object"]: row["hlc"] for row in mine}
    lost = [text for text, hlc in acked.items() if stamped.get(text) != hlc]
    assert not lost, f"{trial}: acknowledged writes lost by the end: {lost[:5]}"
    check_stamp_order(mine, trial)
    for node in (writer, peer):
        check_ledger(node, trial)
