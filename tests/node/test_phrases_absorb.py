"""The phrasing rules the absorb pipeline added (third parties, "now", negation), the
look-alikes that must not match them, and the categories and slots of node/absorb/fact_rules.py."""

from __future__ import annotations

import pytest

from feral.node.absorb.fact_rules import category_of, is_single_valued, opposite, slot
from feral.node.absorb.phrases import parse_fact

PHRASINGS = [
    ("Bob likes green tea", ("Bob", "likes", "green tea")),
    ("Bob loves green tea.", ("Bob", "likes", "green tea")),
    ("Bob Smith lives in Porto", ("Bob Smith", "lives_in", "Porto")),
    ("Dr. Chen works at St. Mary's", ("Dr. Chen", "works_at", "St. Mary's")),
    ("Alice hates cilantro", ("Alice", "dislikes", "cilantro")),
    ("Bob does not like green tea", ("Bob", "dislikes", "green tea")),
    ("Bob doesn't like green tea", ("Bob", "dislikes", "green tea")),
    ("I don't like coffee", ("user", "dislikes", "coffee")),
    ("I do not love mornings", ("user", "dislikes", "mornings")),
    ("my doctor is now Dr. Lee", ("user", "doctor", "Dr. Lee")),
    ("my doctor is Dr. Patel", ("user", "doctor", "Dr. Patel")),
    ("Alice is now a nurse", ("Alice", "is", "a nurse")),
    ("Alice is not a nurse", ("Alice", "is_not", "a nurse")),
    # Look-alikes: no name in front, so they stay notes about the user.
    ("The cat likes fish", ("user", "note", "The cat likes fish")),
    ("It likes me", ("user", "note", "It likes me")),
    ("bob likes green tea", ("user", "note", "bob likes green tea")),
    ("Everyone likes cake", ("user", "note", "Everyone likes cake")),
    ("Bob likes", ("user", "note", "Bob likes")),
]


@pytest.mark.parametrize(("text", "triple"), PHRASINGS)
def test_third_parties_now_and_negation(text, triple):
    assert parse_fact(text) == triple


@pytest.mark.parametrize(
    ("predicate", "obj", "category"),
    [
        ("birthday", "May 4", "identity"),
        ("lives_in", "Porto", "identity"),
        ("likes", "jazz", "preference"),
        ("favourite_colour", "green", "preference"),
        ("doctor_name", "Dr. Chen", "context"),
        ("works_at", "Acme", "context"),
        ("hobby", "chess", "interest"),
        ("goal", "run a marathon", "goal"),
        ("appointment", "Friday", "event"),
        ("note", "always answer in French", "directive"),
        ("note", "Never call after 9pm", "directive"),
        ("note", "buy oat milk", "note"),
        ("kids", "Ana and Rui", "context"),
    ],
)
def test_each_fact_has_a_category(predicate, obj, category):
    assert category_of(predicate, obj) == category


def test_slots_and_opposites():
    assert slot("doctor_name") == "doctor" and slot("cat_name") == "cat_name"
    assert is_single_valued("doctor") and is_single_valued("favourite_food")
    assert all(map(is_single_valued, ("gp", "physio", "accountant", "landlord")))
    assert not is_single_valued("likes") and not is_single_valued("kids")
    assert (opposite("likes"), opposite("dislikes")) == ("dislikes", "likes")
    assert (opposite("is"), opposite("is_not")) == ("is_not", "is")
    assert (opposite("owns"), opposite("not_owns")) == ("not_owns", "owns")
