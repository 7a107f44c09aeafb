"""Realistic, seeded text for the benchmarks: facts, episodes and search queries.

Real memories are short, repetitive and full of names, so every generator draws phrases from
small pools (people, places, projects, chores) with a long tail of numbers: FTS5 then meets
common words matching many rows and rare ones matching few, as it does in use. The same seed
always gives the same text, so two runs (or two machines) measure the same work.
"""

from __future__ import annotations

import random

from feral.sync.ids import fact_id

__all__ = ["SEED", "Triple", "make_queries", "make_episodes", "make_triples"]

SEED = 7_2014
MIN_LEN, MAX_LEN = 5, 40
"""Each part of a fact is 5 to 40 characters long."""

Triple = tuple[str, str, str]


# -- facts -----------------------------------------------------------------------------------


def _pool(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split("|"))


# Each role: heads (what a phrase starts with) and tails (what may follow, to the target length).
_SUBJECTS = (
    _pool(
        "Maria Okafor|Priya|Dr. Chen|Grandma Ingrid|the Berlin office|project Halcyon|"
        "Kestrel release 3.2|my laptop|the team wiki|the kitchen router|our landlord|"
        "Jonas Rahman|Aisha|the billing service|Miso the cat|the old Volvo|Acme GmbH|"
        "the book club|Tomás Nakamura|the Lindqvists|my dentist|Sam's school|the NAS|"
        "the backend on-call|Uncle Femi|the allotment|Leipzig flat|the VPN"
    ),
    _pool(
        "at work|(sister)|from accounting|in Oslo|since 2021|'s phone|on staging|"
        "next door|the younger one|in the spring|for the move|at home|on weekends"
    ),
)
_PREDICATES = (
    _pool(
        "prefers|works at|lives in|is allergic to|owns|uses|depends on|was born in|moved to|"
        "usually orders|has a deadline on|reports to|meets with|speaks|likes|dislikes|"
        "was recommended|is scheduled for|runs on|costs|expires on|wants|is married to|"
        "plays|drives|reads|subscribes to|visited|is learning|manages"
    ),
    _pool(
        "every Friday|since 2019|at weekends|when travelling|in the morning|most days|"
        "for work|reluctantly|again|twice a week|according to Maria|by default"
    ),
)
_OBJECTS = (
    _pool(
        "oat milk flat white|Lisbon|penicillin|peanuts|PostgreSQL 16|Rust|the k8s cluster|"
        "a blue ceramic mug|Portuguese|Japanese jazz on vinyl|cilantro|a standing desk|"
        "€1,200 per month|the quarterly review|sourdough bread|hiking boots size 43|"
        "a window seat|green tea|Thursday at 14:00|Slack huddles|dark mode|Vim keybindings|"
        "Oslo|March 2024|the 7:40 train|Dr. Chen|Tuesday standups|an e-bike|SQLite"
    ),
    _pool(
        "and oat milk|with no sugar|in winter|on Fridays|v2|(confirmed)|before 9am|"
        "for the kids|over email|when it rains|at the latest|if possible|this quarter"
    ),
)


def _phrase(rng: random.Random, role: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    """A head and then tails, 5–40 characters in all, aiming at a length drawn uniformly."""
    heads, tails = role
    target = rng.randint(MIN_LEN, MAX_LEN)
    text = rng.choice(heads)
    while len(text) < target:
        tail = rng.choice(tails) if rng.random() < 0.8 else str(rng.randint(1, 9999))
        if len(text) + 1 + len(tail) > MAX_LEN:
            break
        text = f"{text} {tail}"
    return text


def make_triples(count: int, seed: int = SEED) -> list[Triple]:
    """``count`` triples distinct by :func:`feral.sync.ids.fact_id`, the same for one seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    triples: list[Triple] = []
    while len(triples) < count:
        triple = (
            _phrase(rng, _SUBJECTS),
            _phrase(rng, _PREDICATES),
            _phrase(rng, _OBJECTS),
        )
        row_id = fact_id(*triple)
        if row_id not in seen:
            seen.add(row_id)
            triples.append(triple)
    return triples


# -- episodes --------------------------------------------------------------------------------

_SLOTS: dict[str, tuple[str, ...]] = {
    "person": _pool(
        "Maria Okafor|Priya|Dr. Chen|Grandma Ingrid|Jonas Rahman|Aisha|Tomás Nakamura|"
        "Uncle Femi|Sam|Lena Fischer|Kwame Mensah|Yuki Tanaka|Olivia|Mateo Silva|Fatima|"
        "Ben from accounting|the Lindqvists|Noor|Hannah Berg|Ravi Patel|our landlord|"
        "the plumber|my manager|the recruiter|Coach Davies"
    ),
    "place": _pool(
        "Lisbon|Oslo|the Berlin office|Leipzig|the allotment|the Riverside clinic|"
        "Baker Street|the gym near the office|the airport|Sam's school|the garden centre|"
        "the Italian restaurant|Kyoto|the coworking space|the train station|Porto"
    ),
    "topic": _pool(
        "the quarterly review|the kitchen renovation|project Halcyon|the Kestrel 3.2 release|"
        "the billing service outage|the VPN migration|the mortgage renewal|the summer holiday|"
        "the school trip|the book club pick|the car insurance|the tax return|"
        "the wedding seating plan|the PostgreSQL 16 upgrade|the team offsite|the budget for Q3|"
        "the new hire onboarding|the leaking boiler|the birthday party|the marathon training plan|"
        "the job offer|the flat viewing|the conference talk|the backup strategy"
    ),
    "action": _pool(
        "booked|cancelled|rescheduled|paid|confirmed|drafted|reviewed|postponed|ordered|"
        "fixed|sent|signed|returned|renewed|compared quotes for|asked for a refund on"
    ),
    "object": _pool(
        "flights to Lisbon|the dentist appointment|the electricity bill|a table for four|"
        "the contract|new brake pads|hiking boots size 43|the passport renewal|"
        "the gym membership|a standing desk|the invoice for March|train tickets to Oslo|"
        "the insurance policy|a birthday present for Priya|the plumber's visit|"
        "the hotel in Kyoto|the school fees|the laptop repair|concert tickets|the vet visit"
    ),
    "when": _pool(
        "on Friday|next Tuesday at 14:00|before the end of the month|in two weeks|"
        "on May 4th|tomorrow morning|after the holidays|by 2024-09-30|this weekend|"
        "before 9am|on Thursday evening|in early March"
    ),
    "outcome": _pool(
        "she was happy with it|it is still blocked on legal|we agreed to revisit it next week|"
        "nothing is decided yet|the cost came to €{n}|it needs a second opinion|"
        "the ticket is #{n}|he will call back|it went better than expected|"
        "we are waiting for a quote|the deadline moved again|it is done"
    ),
    "preference": _pool(
        "an oat milk flat white|a window seat|green tea|dark mode|vegetarian food|"
        "early meetings|email over phone calls|the 7:40 train|aisle seats|quiet hotels"
    ),
}

_NAMED = ("person", "place")
_TEMPLATES = _pool(
    "{person} and I went over {topic}; {outcome}.|"
    "I {action} {object} {when}.|"
    "{person} asked about {topic} and mentioned {place}.|"
    "Reminder from {person}: {object} {when}.|"
    "We moved {topic}: the new date is {when}, and {outcome}.|"
    "{person} prefers {preference}, especially at {place}.|"
    "Talked to {person} at {place} about {topic}.|"
    "Looked into {topic} again {when}; {outcome}.|"
    "{person} {action} {object} and said {outcome}."
)


def _fill(rng: random.Random, template: str, names: list[str] | None = None) -> str:
    """``template`` with every ``{slot}`` drawn from its pool (and ``{n}`` a number); each
    person or place drawn that starts with a capital is added to ``names``."""
    text = template
    for slot, pool in _SLOTS.items():
        while "{" + slot + "}" in text:
            choice = rng.choice(pool)
            if names is not None and slot in _NAMED and choice[0].isupper():
                names.append(choice)
            text = text.replace("{" + slot + "}", choice, 1)
    while "{n}" in text:
        text = text.replace("{n}", str(rng.randint(10, 99_999)), 1)
    return text


def _episode(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    names: list[str] = []
    sentences = [_fill(rng, rng.choice(_TEMPLATES), names) for _ in range(rng.randint(1, 4))]
    return " ".join(s[0].upper() + s[1:] for s in sentences), tuple(dict.fromkeys(names))


def make_episodes(count: int, seed: int = SEED) -> list[tuple[str, tuple[str, ...]]]:
    """``count`` episodes as ``(summary, entities)``: one to four sentences, as a session's
    summary reads, and the people and places they name (what the node's entity extraction
    finds in them, without its cost: the build of a large store stays short)."""
    rng = random.Random(seed)
    return [_episode(rng) for _ in range(count)]


# -- queries ---------------------------------------------------------------------------------

_QUESTIONS = _pool(
    "what did {person} say about {topic}|when is {object}|{topic}|{person} {topic}|"
    "did I pay {object}|where does {person} like to meet|{object} {when}|"
    "what does {person} prefer|notes on {topic} at {place}"
)
_PARAPHRASES = _pool(
    "physician visit|vacation travel plans|money owed for power|vehicle maintenance|"
    "home loan|house repairs|employment opportunity|coffee order|running race|"
    "relocating to a new apartment|computer broken|flight reservations abroad|"
    "gift ideas for a friend|software deployment problems|annual performance appraisal"
)


def make_queries(count: int, seed: int = SEED) -> list[str]:
    """``count`` search queries: keywords, questions and paraphrases sharing no word with the
    stored text (found only by meaning), in the mix a person types them."""
    rng = random.Random(seed + 1)
    queries: list[str] = []
    for _ in range(count):
        if rng.random() < 0.2:
            queries.append(rng.choice(_PARAPHRASES))
        else:
            queries.append(_fill(rng, rng.choice(_QUESTIONS)))
    return queries
