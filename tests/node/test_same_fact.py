"""node/absorb/same_fact.py: what may differ between two texts of one fact (contractions, a number
written as a word, a reminder's "remember to", a time said first or last) and what may not
(the order of who does what to whom, a number, a negation)."""

from __future__ import annotations

import pytest

from feral.node.absorb.same_fact import same_fact, same_value

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
    ("I take 20mg of fluoxetine", "I take 20 mg of fluoxetine"),
    ("I walk 10,000 steps a day", "I walk 10000 steps a day"),
    ("the school run is at 8 am", "the school run is at 08:00"),
    ("choir practice is at 7:30 pm", "choir practice is at 19:30"),
    ("I apologise too much", "I apologize too much"),
    ("the flavour of the neighbourhood", "the flavor of the neighborhood"),
    ("I swim on Mondays and Fridays", "I swim on Fridays and Mondays"),
    ("I've got a season ticket", "I have a season ticket"),
    ("the clinic is on St. John's Road", "the clinic is on Saint John's Road"),
    ("I volunteer at Caritas Romana", "I VOLUNTEER AT CARITAS ROMANA"),
    ("I swim on Mondays", "I swim on Monday"),
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
    ("choir practice is at 7:30 pm", "choir practice is at 7:30 am"),
    ("the train leaves at 8:05", "the train leaves at 8:50"),
    ("I swim on Mondays and Fridays", "I swim on Mondays and Thursdays"),
    ("I take 20mg of fluoxetine", "I take 2 mg of fluoxetine"),
    ("I walk 10,000 steps a day", "I walk 10 steps a day"),
    ("I run four km", "I run for km"),
    ("Bob owes Ana and Tom", "Ana owes Bob and Tom"),
    ("my dentist is Dr. Adams", "my dentist is Dr. Adam"),
]

SAME_VALUES = [
    ("grey-blue", "gray-blue"),
    ("the 9th of July", "July 9"),
    ("3 March", "March 3rd"),
    ("Anne-Marie", "Anne Marie"),
    ("Jürgen", "Juergen"),
    ("Dr. Schröder", "dr schroeder"),
    ("São Paulo", "SAO PAULO"),
]

OTHER_VALUES = [
    ("Dr. Adams", "Dr. Adam"),
    ("July 9", "July 19"),
    ("Dr. Lee", "Dr. Li"),
    ("Juergen", "Jurgen Smit"),
    ("grey", "green"),
]


@pytest.mark.parametrize(("a", "b"), SAME_VALUES)
def test_a_value_spelled_or_dated_another_way_is_the_same_value(a: str, b: str) -> None:
    assert same_value(a, b) and same_value(b, a)


@pytest.mark.parametrize(("a", "b"), OTHER_VALUES)
def test_another_name_or_number_is_another_value(a: str, b: str) -> None:
    assert not same_value(a, b) and not same_value(b, a)


@pytest.mark.parametrize(("a", "b"), REPHRASINGS)
def test_a_rephrasing_of_the_same_fact_is_the_same(a: str, b: str) -> None:
    assert same_fact(a, b) and same_fact(b, a)


@pytest.mark.parametrize(("a", "b"), DISTINCT)
def test_two_facts_that_differ_in_what_they_say_are_not_the_same(a: str, b: str) -> None:
    assert not same_fact(a, b) and not same_fact(b, a)
