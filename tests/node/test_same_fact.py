"""node/absorb/same_fact.py: what may differ between two texts of one fact (contractions, a number
written as a word, a reminder's "remember to", a time said first or last) and what may not
(the order of who does what to whom, a number, a negation)."""

from __future__ import annotations

import pytest

from feral.node.absorb.same_fact import same_fact

REPHRASINGS = [
    ("I don't like olives", "I do not like olives"),
    ("Bob doesn't eat meat", "Bob does not eat meat"),
    ("the lift isn't working", "the lift is not working"),
    ("I can't swim", "I cannot swim"),
    ("I've got three kids", "I have got 3 kids"),
    ("we need two bags of rice", "we need 2 bags of rice"),
    ("call mum on her birthday", "remember to call mum on her birthday"),
    ("water the plants on Friday", "don't forget to water the plants on Friday"),
    ("I drink coffee every morning", "every morning I drink coffee"),
    ("I swim on Saturdays", "on Saturdays I swim"),
    ("the bins go out on Tuesday night", "on Tuesday night the bins go out"),
    ("our anniversary is on June 12", "Our anniversary is on June 12th"),
    ("the tax deadline is April 30", "the tax deadline is 30 April"),
    ("I'm allergic to crème brûlée", "I'm allergic to creme brulee"),
    ("lunch at Café Müller", "lunch at CAFE MÜLLER"),
]

DISTINCT = [
    ("I owe the dentist 80 euros", "the dentist owes me 80 euros"),
    ("Bob owes Alice", "Alice owes Bob"),
    ("I have two cats", "I have 3 cats"),
    ("I don't like olives", "I like olives"),
    ("call mum on her birthday", "don't call mum on her birthday"),
    ("I drink coffee every morning", "every evening I drink coffee"),
    ("I swim on Saturdays", "on Sundays I swim"),
    ("the cat sleeps in the garage", "in the garage sleeps the cat"),
    ("I will call Bob", "I won't call Bob"),
    ("the deadline is April 3", "the deadline is April 30th"),
    ("the deadline is 30 April", "the deadline is April 3"),
    ("flight 30 April 2027", "flight 2027 April 30"),
    ("pick up Chloé at 3", "pick up Zoé at 3"),
]


@pytest.mark.parametrize(("a", "b"), REPHRASINGS)
def test_a_rephrasing_of_the_same_fact_is_the_same(a: str, b: str) -> None:
    assert same_fact(a, b) and same_fact(b, a)


@pytest.mark.parametrize(("a", "b"), DISTINCT)
def test_two_facts_that_differ_in_what_they_say_are_not_the_same(a: str, b: str) -> None:
    assert not same_fact(a, b) and not same_fact(b, a)
