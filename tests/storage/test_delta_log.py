"""storage/log/delta_log.py: the log, the version vector, paging, applying pages, and convergence.

The exchange tests pull pages through ``changes_since`` + ``apply_page`` between real database
files, in every delivery order, and hold the result to two oracles: byte-identical exports (the
DESIGN §4 contract) and every row holding its LWW winner among all the deltas ever written.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from feral.storage.log.delta_log import apply_page, changes_since, clock_high_water, version_vector
from feral.storage.memory.memories import find_row
from feral.storage.store import run_write
from feral.sync.codec import decode_page, encode_page
from feral.sync.delta import MAX_PAGE_DELTAS, Delta, Page
from feral.sync.errors import ClockSkewError, NotFoundError, ProtocolError, SchemaError
from feral.sync.hlc import pack
from feral.sync.ids import fact_id
from feral.sync.types import NodeId, RowId

from .support import (
    T0,
    WINDOW_MS,
    A,
    B,
    C,
    Replica,
    all_deltas,
    assert_converged,
    assert_lww_winners,
    assert_unchanged,
    export_text,
    page_stream,
    pull,
    snapshot,
    sync_until_quiet,
)

MakeReplica = Callable[..., Replica]


def write_offline_history(a: Replica, b: Replica) -> None:
    """Both sides write while apart: shared facts, an archive against an edit, nukes."""
    a.remember("Alice", "likes", "green tea", confidence=0.9)
    b.remember("alice", " likes ", "Green   Tea", confidence=0.8)  # same fact, other spelling
    a.remember("Dr. Chen", "is", "my doctor")
    b.remember("Dr. Chen", "is", "my doctor")
    bob = a.remember("Bob", "lives in", "Paris")["id"]
    b.remember("Bob", "lives in", "Paris")
    a.archive(bob)  # archived on one side...
    b.archive(bob)
    b.restore(bob)  # ...edited (archived, then restored) on the other
    cat = a.remember("the cat", "eats", "fish")["id"]
    b.remember("the cat", "eats", "fish", confidence=0.5)
    b.archive(cat)
    a.nuke(cat)  # a nuke against an archive
    scratch = a.remember("scratch", "is", "temporary")["id"]
    a.nuke(scratch)
    a.episode("walked the dog in the park", ["dog", "park"])
    gone = b.episode("booked a dentist appointment", ["dentist"])["id"]
    b.episode("called mum", ["mum"])
    b.nuke(gone)
    a.execution("search")
    b.execution("calendar")


@pytest.fixture
def pair(make_replica: MakeReplica) -> tuple[Replica, Replica]:
    a, b = make_replica("a", A), make_replica("b", B)
    write_offline_history(a, b)
    return a, b


def deliver(receiver: Replica, pages: list[Page]) -> int:
    return sum(receiver.apply(page) for page in pages)


# -- the log and the vector ---------------------------------------------------------------------


def test_a_local_write_appends_one_log_entry_and_advances_the_vector(make_replica: MakeReplica):
    a = make_replica("a", A)
    row = a.remember("sky", "is", "blue")
    (delta,) = all_deltas(a.conn)
    assert (delta.table, delta.row_id, delta.hlc, delta.origin) == (
        "facts",
        row["id"],
        row["hlc"],
        A,
    )
    assert version_vector(a.conn) == {A: row["hlc"]}
    assert clock_high_water(a.conn) == row["hlc"]


def test_changes_since_pages_each_origin_in_hlc_order_within_the_limit(pair):
    a, b = pair
    sync_until_quiet([(a, b)])
    pages = changes_since(a.conn, {}, limit=3)
    assert sum(len(p.deltas) for p in pages) == 3
    for page in pages:
        page.check()
        assert page.after == 0
        assert all(d.origin == page.origin for d in page.deltas)
    everything = page_stream(a.conn, {}, limit=2)
    assert all(1 <= len(p.deltas) <= 2 for p in everything)
    for origin in (A, B):
        stamps = [d.hlc for p in everything if p.origin == origin for d in p.deltas]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
        assert stamps[-1] == version_vector(a.conn)[origin]


def test_changes_since_is_empty_for_a_peer_that_holds_everything_or_more(pair):
    a, _ = pair
    vector = version_vector(a.conn)
    assert changes_since(a.conn, vector) == []
    assert changes_since(a.conn, {A: vector[A] + 1_000_000}) == []
    assert changes_since(a.conn, vector, limit=0) == []


def test_changes_since_continues_from_the_peers_cursor(pair):
    a, _ = pair
    first, second = page_stream(a.conn, {}, limit=2)[:2]
    assert changes_since(a.conn, {A: first.last_hlc}, limit=2) == [second]
    assert second.after == first.last_hlc


# -- convergence of two offline stores ------------------------------------------------------------


def exchange_a_first(a: Replica, b: Replica) -> None:
    while pull(b, a):
        pass
    while pull(a, b):
        pass


def exchange_b_first(a: Replica, b: Replica) -> None:
    while pull(a, b):
        pass
    while pull(b, a):
        pass


def exchange_alternating(a: Replica, b: Replica) -> None:
    sync_until_quiet([(a, b)])


def exchange_each_page_twice(a: Replica, b: Replica) -> None:
    for receiver, sender in ((b, a), (a, b)):
        for page in page_stream(sender.conn, version_vector(receiver.conn), 2):
            first = receiver.apply(page)
            assert receiver.apply(page) == 0
            assert first == len(page.deltas)


def exchange_interleaved(a: Replica, b: Replica) -> None:
    to_b = page_stream(a.conn, version_vector(b.conn), 2)
    to_a = page_stream(b.conn, version_vector(a.conn), 2)
    for page_b, page_a in itertools.zip_longest(to_b, to_a):
        if page_b is not None:
            b.apply(page_b)
        if page_a is not None:
            a.apply(page_a)


def exchange_then_replay_everything(a: Replica, b: Replica) -> None:
    to_b = page_stream(a.conn, version_vector(b.conn), 2)
    to_a = page_stream(b.conn, version_vector(a.conn), 2)
    deliver(b, to_b)
    deliver(a, to_a)
    assert deliver(b, to_b) == 0
    assert deliver(a, to_a) == 0
    assert deliver(b, list(reversed(to_b))) == 0


def exchange_with_stale_overlapping_pages(a: Replica, b: Replica) -> None:
    # Pages fetched for one vector, then fetched again before the first batch was applied.
    for receiver, sender in ((b, a), (a, b)):
        small = changes_since(sender.conn, version_vector(receiver.conn), 1)
        large = changes_since(sender.conn, version_vector(receiver.conn), 3)
        assert deliver(receiver, small) == 1
        assert deliver(receiver, large) == 2
        while pull(receiver, sender):
            pass


EXCHANGES = [
    exchange_a_first,
    exchange_b_first,
    exchange_alternating,
    exchange_each_page_twice,
    exchange_interleaved,
    exchange_then_replay_everything,
    exchange_with_stale_overlapping_pages,
]


@pytest.mark.parametrize("exchange", EXCHANGES, ids=lambda f: f.__name__.removeprefix("exchange_"))
def test_two_offline_stores_converge_whatever_the_delivery_order(pair, exchange):
    a, b = pair
    written = all_deltas(a.conn) + all_deltas(b.conn)
    exchange(a, b)
    assert_converged(a, b)
    nuked = {(d.table, d.row_id) for d in written if d.is_tombstone}
    logged = [  # a nuke erases every entry of its row, here and on the peer (storage/log/erase.py)
        Delta(d.table, d.row_id, d.hlc, d.origin, None, d.prior)
        if (d.table, d.row_id) in nuked
        else d
        for d in written
    ]
    for replica in (a, b):
        assert_lww_winners(replica, written)
        assert sorted(all_deltas(replica.conn), key=lambda d: d.version) == sorted(
            logged, key=lambda d: d.version
        )


def test_the_same_fact_remembered_on_both_sides_is_one_row_after_sync(pair):
    a, b = pair
    exchange_alternating(a, b)
    tea = fact_id("Alice", "likes", "green tea")
    rows = [line for line in export_text(a.conn).splitlines() if tea in line]
    assert len(rows) == 1
    assert find_row(a.conn, tea) == find_row(b.conn, tea)


def test_every_order_ends_in_the_same_bytes(make_replica: MakeReplica):
    exports = set()
    for n, exchange in enumerate(EXCHANGES):
        a, b = make_replica(f"a{n}", A), make_replica(f"b{n}", B)
        write_offline_history(a, b)
        exchange(a, b)
        exports.add(export_text(a.conn))
    assert len(exports) == 1


def test_equal_stamps_from_two_nodes_are_won_by_the_higher_node_id_everywhere(
    make_replica: MakeReplica,
):
    a, b = make_replica("a", A), make_replica("b", B)
    row_a = a.remember("tie", "breaks", "by node id", confidence=0.1)
    row_b = b.remember("tie", "breaks", "by node id", confidence=0.2)
    assert row_a["hlc"] == row_b["hlc"]
    exchange_a_first(a, b)
    for replica in (a, b):
        _, row = find_row(replica.conn, row_a["id"])
        assert (row["origin"], row["confidence"]) == (B, 0.2)
    assert_converged(a, b)


def test_a_local_write_after_a_sync_follows_its_own_clock_and_an_edit_wins_over_the_version(
    make_replica: MakeReplica,
):
    # This test asserted the old rule (every local stamp above everything received), which let
    # one fast clock carry every device's stamps ahead (issue 11). Stamps follow the device's
    # clock; an edit of a received row is still stamped above that row's version.
    ahead = make_replica("ahead", A, start=T0 + WINDOW_MS - 1)
    behind = make_replica("behind", B, start=T0)
    received = ahead.remember("future", "is", "near")["hlc"]
    pull(behind, ahead)
    assert clock_high_water(behind.conn) == received
    assert behind.remember("now", "is", "later")["hlc"] < received
    edit = behind.archive(fact_id("future", "is", "near"))
    assert edit["hlc"] > received and edit["origin"] == B


# -- three stores, relayed -----------------------------------------------------------------------


def test_three_stores_converge_through_a_relay_when_a_and_c_never_talk(make_replica):
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C, start=T0 + 90_000)
    a.remember("Alice", "likes", "green tea")
    c.remember("ALICE", "likes", "green tea", confidence=0.4)
    a.episode("a's episode")
    b.episode("b's episode")
    c.execution("c's tool")
    sync_until_quiet([(b, c)])
    # C's clock runs ahead and B has seen it; A has not, so A's next write carries a stamp older
    # than what B and C hold, and must still reach C through B (a cursor by clock would skip it:
    # DESIGN §4, "Cursor ≠ clock").
    late = a.remember("relayed", "has", "an old stamp")
    assert late["hlc"] < clock_high_water(b.conn) == clock_high_water(c.conn)
    sync_until_quiet([(a, b), (b, c)])
    assert find_row(c.conn, late["id"])[1]["hlc"] == late["hlc"]
    assert_converged(a, b, c)
    written = all_deltas(a.conn)
    for replica in (a, b, c):
        assert_lww_winners(replica, written)


def test_pages_from_two_origins_may_arrive_interleaved_at_a_third_store(pair, make_replica):
    a, b = pair
    c = make_replica("c", C)
    from_a = page_stream(a.conn, {}, 2)
    from_b = page_stream(b.conn, {}, 2)
    for page_a, page_b in itertools.zip_longest(from_a, from_b):
        for page in (page_b, page_a):
            if page is not None:
                c.apply(page)
    sync_until_quiet([(a, b), (b, c)])
    assert_converged(a, b, c)


# -- hypothesis: any offline history, any delivery schedule ---------------------------------------

TRIPLES = [
    ("Alice", "likes", "green tea"),
    ("Dr. Chen", "is", "my doctor"),
    ("Bob", "lives in", "Paris"),
    ("the cat", "eats", "fish"),
]
SPELLINGS = [lambda s: s, str.upper, lambda s: f"  {s}  ".replace(" ", "  ")]

operations = st.lists(
    st.tuples(
        st.sampled_from(["remember", "remember", "episode", "exec", "archive", "restore", "nuke"]),
        st.integers(0, 15),
        st.sampled_from([0.25, 0.5, 1.0]),
        st.integers(0, 2),
    ),
    max_size=10,
)
ALL_IDS = "SELECT id FROM facts UNION SELECT id FROM episodes UNION SELECT id FROM exec_log"
DIRECTIONS = [("a", "b"), ("b", "a"), ("a", "c"), ("b", "c")]
schedules = st.lists(st.tuples(st.sampled_from(DIRECTIONS), st.integers(0, 20)), max_size=25)


def run_operation(replica: Replica, op: tuple[str, int, float, int]) -> None:
    kind, n, confidence, ms = op
    replica.time.advance(ms)
    if kind == "remember":
        spell = SPELLINGS[n % len(SPELLINGS)]
        replica.remember(*(spell(part) for part in TRIPLES[n % len(TRIPLES)]), confidence)
    elif kind == "episode":
        replica.episode(f"episode {n}", [f"entity {n}"])
    elif kind == "exec":
        replica.execution(f"tool {n}")
    else:
        ids = [r[0] for r in replica.conn.execute(ALL_IDS)]
        if not ids:
            return
        target = ids[n % len(ids)]
        entries = len(all_deltas(replica.conn))
        try:
            if kind == "nuke":
                replica.nuke(target)
            else:
                replica.archive(target, archived=kind == "archive")
        except NotFoundError:
            assert len(all_deltas(replica.conn)) == entries  # a refused edit writes nothing


def deliver_or_refuse(receiver: Replica, page: Page) -> None:
    held = version_vector(receiver.conn).get(page.origin, 0)
    if page.after > held:
        event("a page that would leave a gap was refused")
        before = snapshot(receiver.conn)
        with pytest.raises(ProtocolError, match="gap"):
            receiver.apply(page)
        assert_unchanged(before, receiver.conn)
    else:
        fresh = receiver.apply(page)
        assert fresh == sum(d.hlc > held for d in page.deltas)
        event("a page was applied" if fresh else "a page held already was applied again")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    ops_a=operations,
    ops_b=operations,
    skew=st.integers(-2_000, 2_000),
    schedule=schedules,
)
@pytest.mark.slow
def test_any_offline_history_converges_under_any_delivery_schedule(
    tmp_path_factory, ops_a, ops_b, skew, schedule
):
    directory: Path = tmp_path_factory.mktemp("exchange")
    replicas = {
        "a": Replica.open(directory, "a", A, synchronous="NORMAL"),
        "b": Replica.open(directory, "b", B, start=T0 + skew, synchronous="NORMAL"),
        "c": Replica.open(directory, "c", C, synchronous="NORMAL"),
    }
    a, b, c = replicas["a"], replicas["b"], replicas["c"]
    try:
        for op_a, op_b in itertools.zip_longest(ops_a, ops_b):
            if op_a is not None:
                run_operation(a, op_a)
            if op_b is not None:
                run_operation(b, op_b)
        written = all_deltas(a.conn) + all_deltas(b.conn)
        streams = {
            (s, r): page_stream(replicas[s].conn, version_vector(replicas[r].conn), 2)
            for s, r in DIRECTIONS
        }
        for (sender, receiver), index in schedule:
            stream = streams[(sender, receiver)]
            if stream:
                deliver_or_refuse(replicas[receiver], stream[index % len(stream)])
        event("10 or more deltas written" if len(written) >= 10 else "under 10 deltas written")
        sync_until_quiet([(a, b), (b, c), (a, c)])
        assert_converged(a, b, c)
        for replica in (a, b, c):
            assert_lww_winners(replica, written)
    finally:
        for replica in replicas.values():
            replica.close()


# -- refused pages leave everything as it was -----------------------------------------------------


def test_a_page_that_would_leave_a_gap_is_refused_and_changes_nothing(pair):
    a, b = pair
    first, second, *_ = page_stream(a.conn, {}, 2)
    before = snapshot(b.conn)
    with pytest.raises(ProtocolError, match="gap"):
        b.apply(second)
    assert_unchanged(before, b.conn)
    assert b.apply(first) == 2
    assert b.apply(second) == 2


def test_a_stamp_beyond_the_skew_window_is_refused_before_anything_moves(make_replica):
    far = make_replica("far", A, start=T0 + 2 * WINDOW_MS)  # writes at now + 2 windows + 1 ms
    b = make_replica("b", B)
    b.remember("local", "is", "fine")
    far.remember("too", "far", "ahead")
    (page,) = changes_since(far.conn, {})
    before = snapshot(b.conn)
    with pytest.raises(ClockSkewError) as caught:
        run_write(b.conn, apply_page, page, now_ms=T0, max_skew_ms=WINDOW_MS, peer="laptop")
    assert (caught.value.offset_ms, caught.value.window_ms) == (2 * WINDOW_MS + 1, WINDOW_MS)
    assert "laptop" in str(caught.value) and "clock skew" in str(caught.value)
    assert_unchanged(before, b.conn)
    # The refusal did not wedge anything: a page inside the window still applies.
    on_time = make_replica("on_time", C, start=T0 + 2 * WINDOW_MS - 1)  # exactly at the edge
    on_time.remember("just", "inside", "the window")
    assert (
        run_write(
            b.conn, apply_page, changes_since(on_time.conn, {})[0], now_ms=T0, max_skew_ms=WINDOW_MS
        )
        == 1
    )


def test_one_far_future_stamp_refuses_the_whole_page(make_replica):
    a = make_replica("a", A)
    b = make_replica("b", B)
    a.remember("fine", "is", "fine")
    a.time.advance(2 * WINDOW_MS + 10)
    a.remember("too", "far", "ahead")
    (page,) = changes_since(a.conn, {})
    assert len(page.deltas) == 2
    before = snapshot(b.conn)
    with pytest.raises(ClockSkewError):
        b.apply(page)
    assert_unchanged(before, b.conn)


def test_applying_a_page_again_returns_zero_and_changes_nothing(pair):
    a, b = pair
    page = changes_since(a.conn, {}, 2)[0]
    assert b.apply(page) == 2
    before = snapshot(b.conn)
    assert b.apply(page) == 0
    assert_unchanged(before, b.conn)


def test_an_empty_page_at_the_cursor_is_accepted_and_writes_nothing(pair):
    a, b = pair
    before = snapshot(b.conn)
    assert b.apply(Page(A, 0, ())) == 0
    assert_unchanged(before, b.conn)


def valid_raw_page() -> tuple[Page, list]:
    values = (RowId(fact_id("s", "p", "o")), "s", "p", "o", 0.5, None, T0, False)
    delta = Delta("facts", values[0], pack(T0, 1), A, values)
    page = Page(A, 0, (delta,))
    return page, msgpack.unpackb(encode_page(page), raw=False)


def mutate_rest(index: int, value: object) -> Callable[[list], None]:
    def mutate(raw: list) -> None:
        raw[4][0][3][index] = value

    return mutate


def set_entry(index: int, value: object) -> Callable[[list], None]:
    def mutate(raw: list) -> None:
        raw[4][0][index] = value

    return mutate


def drop_last_value(raw: list) -> None:
    raw[4][0][3].pop()


BAD_BYTES = {
    "unknown table code": set_entry(0, 99),
    "table code as text": set_entry(0, "facts"),
    "integer row id": set_entry(2, 12345),
    "text into a REAL column": mutate_rest(3, "0.9"),
    "integer into a REAL column": mutate_rest(3, 1),
    "text into an INTEGER column": mutate_rest(5, "1700000000000"),
    "bool into an INTEGER column": mutate_rest(5, True),
    "integer of 2**63": mutate_rest(5, 1 << 63),
    "bytes into a TEXT column": mutate_rest(0, b"subject"),
    "nested list into a TEXT column": mutate_rest(2, ["nested", ["list"]]),
    "integer into a bool column": mutate_rest(6, 1),
    "NUL inside text": mutate_rest(0, "sub\x00ject"),
    "NaN confidence": mutate_rest(3, float("nan")),
    "a column missing": drop_last_value,
}


@pytest.mark.parametrize("mutate", BAD_BYTES.values(), ids=list(BAD_BYTES))
def test_a_delta_decoded_from_bad_bytes_is_a_schema_error_and_the_database_is_unchanged(
    pair, mutate
):
    _, b = pair
    _, raw = valid_raw_page()
    mutate(raw)
    data = msgpack.packb(raw, use_bin_type=True)
    before = snapshot(b.conn)

    def receive(conn):
        return apply_page(conn, decode_page(data), now_ms=b.time(), max_skew_ms=WINDOW_MS)

    with pytest.raises(SchemaError):
        run_write(b.conn, receive)
    assert_unchanged(before, b.conn)


def test_the_valid_twin_of_the_bad_bytes_applies(pair):
    _, b = pair
    page, raw = valid_raw_page()
    decoded = decode_page(msgpack.packb(raw, use_bin_type=True))
    assert decoded == page
    assert b.apply(decoded) == 1


def good_delta(hlc: int) -> Delta:
    values = (RowId(f"f{hlc}"), "s", "p", "o", 0.5, None, T0, False)
    return Delta("facts", values[0], hlc, A, values)


HOSTILE_TABLES = ['facts"; DROP TABLE facts; --', "facts; --", 'x" ("id', "sqlite_master", "meta"]


@pytest.mark.parametrize("table", HOSTILE_TABLES)
def test_a_table_name_outside_the_registry_never_reaches_sql(pair, table):
    _, b = pair
    values = (RowId("r1"), "s", "p", "o", 0.5, None, T0, False)
    bad = Delta(table, values[0], pack(T0, 2), A, values)
    page = Page(A, 0, (good_delta(pack(T0, 1)), bad))  # the good delta must not land either
    before = snapshot(b.conn)
    with pytest.raises(SchemaError, match="unknown table"):
        b.apply(page)
    assert_unchanged(before, b.conn)


@pytest.mark.parametrize(
    "row_id", ['"; DROP TABLE facts; --', "x'); DELETE FROM facts; --", 'a"b;c--d']
)
def test_an_id_full_of_sql_punctuation_is_stored_as_plain_data(pair, row_id):
    _, b = pair
    values = (RowId(row_id), "s", "p", "o", 0.5, None, T0, False)
    schema = snapshot(b.conn)[0]
    assert b.apply(Page(A, 0, (Delta("facts", RowId(row_id), pack(T0, 1), A, values),))) == 1
    assert snapshot(b.conn)[0] == schema
    assert find_row(b.conn, row_id)[1]["id"] == row_id
    b.archive(row_id)
    assert find_row(b.conn, row_id)[1]["archived"] is True


@pytest.mark.parametrize(
    "page",
    [
        Page(NodeId("A" * 32), 0, ()),
        Page(A, 0, (good_delta(pack(T0, 2)), good_delta(pack(T0, 1)))),
        Page(A, pack(T0, 5), (good_delta(pack(T0, 5)),)),
        Page(A, 0, (Delta("facts", RowId("f1"), pack(T0, 1), B, good_delta(1).values),)),
        Page(A, 0, tuple(good_delta(pack(T0, i)) for i in range(1, MAX_PAGE_DELTAS + 2))),
    ],
    ids=["bad origin", "decreasing stamps", "stamp at the cursor", "mixed origins", "too long"],
)
def test_a_malformed_page_is_a_protocol_error_and_changes_nothing(pair, page):
    _, b = pair
    before = snapshot(b.conn)
    with pytest.raises(ProtocolError):
        b.apply(page)
    assert_unchanged(before, b.conn)
