"""Turning what people say into knowledge-graph triples (``feral memory remember TEXT``).

Pure and deterministic. The rules, tried in this order on the stripped text (the first that
matches wins; case does not matter for ``my`` and ``I``):

===================================  ==============================================
text                                 triple
===================================  ==============================================
``my doctor's name is Dr. Chen``     ``("user", "doctor_name", "Dr. Chen")``
``my favourite colour is green``     ``("user", "favourite_colour", "green")``
``Alice's birthday is on May 4``     ``("Alice", "birthday", "May 4")``
``I live in Porto``                  ``("user", "lives_in", "Porto")``
``I moved to Berlin`` (relocated to,  ``("user", "lives_in", "Berlin")``
``I'm now living in``, ``... now``,
``moved from Paris to``, ``reside
in``, ``settled in``, ``I've been
living in``, ``I currently live in``,
``Home is Riga now``, ``Just moved
to``, ``I've lived in Riga since``)
``I have a new dentist, Dr. Costa``  ``("user", "dentist", "Dr. Costa")``
``I started a new job at Acme``      ``("user", "works_at", "Acme")``
``my sister is called Ines``         ``("user", "sister_name", "Ines")``
``my doctor is on holiday``          ``("user", "doctor_state", "on holiday")``
``my doctor is not Dr. Lee``         ``("user", "not_doctor", "Dr. Lee")``
``my dentist isn't Dr. Costa``       ``("user", "not_dentist", "Dr. Costa")``
``my new dentist is Dr. Costa``      ``("user", "dentist", "Dr. Costa")``
``I work at Acme`` / ``for Acme``    ``("user", "works_at", "Acme")`` / ``works_for``
``I like X`` / ``I love X``          ``("user", "likes", "X")``
``I dislike X`` / ``I hate X``       ``("user", "dislikes", "X")``
``I don't like X``                   ``("user", "dislikes", "X")``
``Bob likes X`` / ``Bob loves X``    ``("Bob", "likes", "X")`` (and the other verbs)
``Bob does not like X``              ``("Bob", "dislikes", "X")``
``my sister lives in Bergen``        ``("user", "sister_lives_in", "Bergen")``
``Alice is not a nurse``             ``("Alice", "is_not", "a nurse")``
``Alice is a nurse``                 ``("Alice", "is", "a nurse")``
anything else                        ``("user", "note", text)``
===================================  ==============================================

Details:

* Possessives: ``my ATTRIBUTE is|are|was VALUE`` and ``OWNER's ATTRIBUTE is|are|was VALUE``,
  where ATTRIBUTE is one to five words and OWNER one to four capitalised words, optionally
  after a title (``Dr. Chen's``). An ``on``, ``in`` or ``at`` right after the verb is dropped
  ("is on May 4" gives "May 4"), and so is a ``now`` ("my doctor is now Dr. Lee" gives
  ``("user", "doctor", "Dr. Lee")``: saying what changed is saying the new value). The verbs
  match in any case.
* A possessive's value goes through node/absorb/fact_values.py: "called"/"named" make the attribute
  a ``_name``; a negation makes ``not_``; a value that is not what a single-valued slot (or a
  person) holds is a ``_state`` of it; a trailing "now" goes. A text of several clauses is
  cut by node/absorb/clauses.py before these rules see it.
* A time said first ("these days", "nowadays", "currently", "since March") is left out when
  what follows is a fact: "these days I live in Turin" is ``lives_in / Turin``.
* Third parties: ``OWNER likes|loves|dislikes|hates|lives in|works at|works for VALUE`` with
  OWNER a name as for ``X is Y``, so "Bob likes green tea" is about Bob, not the user.
* Negation: "don't like", "do not like", "doesn't like", "does not like" give ``dislikes``
  (the opposite of ``likes``); ``X is not Y`` gives ``is_not``.
* The predicate is the attribute in snake_case: possessive ``'s`` removed, lower-cased, every
  run of other characters than letters and digits turned into one ``_``, trimmed
  ("doctor's name" gives ``doctor_name``).
* ``X is Y`` needs X to be one to four capitalised words (a title allowed) that do not open
  with a pronoun or article (``It is late`` and ``The bus is late`` stay notes).
* Trailing ``.``, ``!``, ``?``, ``,``, ``;`` and ``:`` are stripped from the object (not from
  a note, which keeps the text as written, apart from surrounding white space). An empty
  object makes the text a note.

Because a fact's id is derived from its normalised content (sync/ids.py), saying the same thing
twice, on any device, in any capitalisation or spacing, is one row.
"""

from __future__ import annotations

import re

from .changes import parse_change
from .fact_rules import is_single_valued
from .fact_values import PEOPLE, refine

__all__ = ["NOTE", "USER", "Triple", "parse_fact", "snake_case"]

Triple = tuple[str, str, str]

USER = "user"
NOTE = "note"

_VERB = r"(?i:is|are|was)(?P<negated>(?i:n['’]t))?"
"""The possessive's verb; "isn't" says the value is not so ("my dentist isn't Dr. Costa")."""
_TITLE = r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof|St)\.\s+)"
_CAP_WORD = r"[^\W\d_][\w'’.-]*"
_PROPER = rf"{_TITLE}?{_CAP_WORD}(?:\s+{_CAP_WORD}){{0,3}}"

_ATTRIBUTE = r"(?P<attr>\S+(?:\s+\S+){0,4}?)"
"""One to five words: a longer "attribute" is a sentence, not a predicate."""
_MY = re.compile(rf"(?i:my)\s+{_ATTRIBUTE}\s+{_VERB}\s+(?P<value>.+)", re.S)
_OWNER = re.compile(rf"(?P<owner>{_PROPER})['’]s\s+{_ATTRIBUTE}\s+{_VERB}\s+(?P<value>.+)", re.S)
_NEGATED = r"(?i:do\s+not|don['’]t|does\s+not|doesn['’]t)\s+(?:(?i:really)\s+)?"
_MOVED = (
    r"(?i:(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)(?:\s+house)?(?:\s+back)?"
    r"(?:\s+(?:from|out\s+of)\s+\S.*?)?\s+to)"
)
"""A move names where to: "I moved to Rome", "I moved from Paris to Rome" (never "from" alone)."""
_VERBS = (
    (
        r"(?i:(?:now\s+)?(?:live|reside)\s+in)",
        r"(?i:(?:now\s+)?(?:lives|resides)\s+in)",
        "lives_in",
    ),
    (rf"(?i:(?:have\s+|['’]ve\s+)?{_MOVED})", rf"(?i:(?:has\s+)?{_MOVED})", "lives_in"),
    (r"(?i:(?:now\s+)?work\s+at)", r"(?i:(?:now\s+)?works\s+at)", "works_at"),
    (r"(?i:work\s+for)", r"(?i:works\s+for)", "works_for"),
    (r"(?i:like|love|enjoy|adore)", r"(?i:likes|loves|enjoys|adores)", "likes"),
    (r"(?i:dislike|hate)", r"(?i:dislikes|hates)", "dislikes"),
)
"""Each verb: its first-person form, its third-person form, its predicate."""
_I_AM = r"(?i:i\s+am|i['’]m|we\s+are|we['’]re)\s+"
_HAVE_BEEN = r"(?i:(?:i|we)\s+have|i['’]ve|we['’]ve)\s+(?i:been)\s+"
"""A state that started and holds now: "I've been living in Riga since May" lives there."""
_STILL = r"(?:(?i:really|currently|still)\s+)?"
"""An adverb between "I" and its verb that changes nothing: "I currently live in Ghent"."""
_HAVE = r"(?i:(?:i|we)\s+have|i['’]ve|we['’]ve)\s+"
_FIRST_PERSON: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"(?i:just|recently)\s+{_MOVED}\s+(?P<value>.+)", re.S), "lives_in"),
    (
        re.compile(rf"{_HAVE}(?i:lived)\s+in\s+(?P<value>\S.*?\s(?i:since|for)\s.+)", re.S),
        "lives_in",
    ),
    (
        re.compile(
            rf"(?:{_I_AM}|(?i:i)\s+)?(?:(?i:just)\s+)?(?i:started|got|took|began)\s+"
            r"(?i:a\s+new\s+job\s+(?:at|with))\s+(?P<value>.+)",
            re.S,
        ),
        "works_at",
    ),
    (re.compile(rf"(?i:i)\s+{_NEGATED}(?i:like|love)\s+(?P<value>.+)", re.S), "dislikes"),
    (
        re.compile(
            rf"(?i:i|i['’]ve|i\s+have|we['’]ve|we)\s+(?:{_MOVED}|(?i:settled\s+in))\s+(?P<value>.+)",
            re.S,
        ),
        "lives_in",
    ),
    (
        re.compile(
            rf"(?:{_I_AM}|{_HAVE_BEEN})(?i:now\s+)?(?i:living|based|settled)\s+in\s+(?P<value>.+)",
            re.S,
        ),
        "lives_in",
    ),
    (re.compile(rf"(?:{_I_AM}(?i:called|named)|(?i:call\s+me))\s+(?P<value>.+)", re.S), "name"),
    (
        re.compile(rf"{_I_AM}(?P<value>\d{{1,3}})(?:\s+(?i:years?\s+old))?(?:\s+(?i:now))?\.?"),
        "age",
    ),
    *(
        (re.compile(rf"(?i:i)\s+{_STILL}{verb}\s+(?P<value>.+)", re.S), predicate)
        for verb, _, predicate in _VERBS
    ),
)
_HOME_IS = re.compile(r"(?i:home\s+is)\s+(?:(?i:now)\s+)?(?P<value>.+)", re.S)
_NEW_PERSON = re.compile(
    rf"{_HAVE}(?:(?i:got)\s+)?(?i:a\s+new)\s+(?P<attr>[^\W\d_]+)\s*[,:]\s*(?P<value>.+)", re.S
)
_THIRD_PERSON: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(rf"(?P<subject>{_PROPER})\s+{_NEGATED}(?i:like|love)\s+(?P<value>.+)", re.S),
        "dislikes",
    ),
    *(
        (
            re.compile(
                rf"(?P<subject>{_PROPER})\s+(?:(?i:really)\s+)?{verb}\s+(?P<value>.+)", re.S
            ),
            predicate,
        )
        for _, verb, predicate in _VERBS
    ),
)
_IS = re.compile(
    rf"(?P<subject>{_PROPER})\s+(?i:is)\s+(?P<negated>(?i:not)\s+)?(?:(?i:now)\s+)?"
    r"(?P<value>.+)",
    re.S,
)
_WHEN = re.compile(
    r"(?i:these\s+days|nowadays|currently|at\s+the\s+moment|since\s+\w+(?:\s+\w+)?),?\s+"
    r"(?=(?i:i|we|my)\b)"
)
"""A time said first ("these days I live in Turin"): the fact is what follows it."""
_RELATIVE = re.compile(
    r"(?i:my)\s+(?P<who>(?:[^\W\d_]+\s+)?(?P<kin>[^\W\d_]+))\s+(?P<rest>(?i:does|doesn|do|"
    r"likes|loves|enjoys|adores|dislikes|hates|lives|resides|has|moved|relocated|just|recently|"
    r"finally|now|works|really)\b.+)",
    re.S,
)
"""A relative or someone of the user's ("my sister", "my best friend") doing something: the
third-person verbs, read as about the user's ``sister``."""
_CHANGED = re.compile(r"(?i:new|current|present)\s+(?=\S)")
"""An attribute's "new" is a new value of the slot: "my new dentist is Dr. Costa" fills
``dentist``."""
_ATTRIBUTE_WHEN = re.compile(
    r"\s+(?i:these\s+days|nowadays|now|currently|at\s+the\s+moment|at\s+present)$"
)
"""A time said after the attribute ("my favourite film these days is Arrival"): not part of it."""
_NOT_NAMES = frozenset(
    """a an the this that these those it its he she they we you i there here what who which
    where when why how my our your his her their everything nothing something everyone
    someone nobody today tomorrow yesterday""".split()
)
_TRAILING = ".!?,;: \t\r\n"


_SPELLINGS = {
    "favorite": "favourite",
    "color": "colour",
    "neighbor": "neighbour",
    "mum": "mother",
    "mom": "mother",
    "dad": "father",
}
"""One spelling per attribute, so "my favorite color" fills "my favourite colour"'s slot."""
_SLOT_NAMES = {"phone_number": "phone", "mobile_number": "phone", "email_address": "email"}
"""Attributes said in more words than their slot's name: "my phone number" is ``phone``."""


def snake_case(text: str) -> str:
    """``"doctor's name"`` to ``"doctor_name"``: the predicate form of an attribute."""
    text = re.sub(r"['’]s\b", "", text.casefold())
    words = re.sub(r"[\W_]+", "_", text).strip("_").split("_")
    return "_".join(_SPELLINGS.get(word, word) for word in words)


def parse_fact(text: str) -> Triple:
    """The triple for ``text`` (see the module docstring for the rules)."""
    text = text.strip()
    if (when := _WHEN.match(text)) is not None:
        rest, lead = text[when.end() :], when[0].strip(" ,")
        found = _parsed(rest)
        if found is None and lead.casefold().startswith("since"):
            found = _parsed(f"{rest} {lead}")  # "Since May I've lived in Riga"
        if found is not None:
            return found
    return _parsed(text) or (USER, NOTE, text)


def _parsed(text: str) -> Triple | None:
    return (
        _possessive(text)
        or _home_is(text)
        or _new_person(text)
        or parse_change(text)
        or _first_person(text)
        or _third_person(text)
        or _relatives(text)
        or _is(text)
    )


def _value(raw: str) -> str | None:
    value = " ".join(raw.split()).rstrip(_TRAILING)
    return value or None


def _possessive(text: str) -> Triple | None:
    match = _MY.fullmatch(text)
    subject = USER
    if match is None:
        match = _OWNER.fullmatch(text)
        if match is None or not _is_name(match["owner"]):
            return None
        subject = " ".join(match["owner"].split())
    attribute = _CHANGED.sub("", match["attr"], count=1) if subject == USER else match["attr"]
    attribute = _ATTRIBUTE_WHEN.sub("", attribute)  # "my favourite film these days"
    predicate, value = snake_case(attribute), _value(match["value"])
    predicate = _SLOT_NAMES.get(predicate, predicate)
    if not predicate or value is None or "," in match["attr"]:
        return None  # "my doctor, Dr. Chen, is ...": an aside, not an attribute
    if match["negated"]:
        value = f"not {value}"
    return refine(subject, predicate, value)  # a state, a negation, "called" (fact_values.py)


def _home_is(text: str) -> Triple | None:
    """ "Home is Tbilisi now": where the user lives (a place: capitalised, so "home is where
    the heart is" is not one)."""
    match = _HOME_IS.fullmatch(text)
    if match is None or not match["value"][:1].isupper():
        return None
    value = _value(match["value"])
    return refine(USER, "lives_in", value) if value else None


def _new_person(text: str) -> Triple | None:
    """ "I have a new dentist, Dr. Nowak": the person slot's new value, as "my new dentist is
    Dr. Nowak" says it."""
    match = _NEW_PERSON.fullmatch(text)
    if match is None or match["attr"].casefold() not in PEOPLE:
        return None
    value = _value(match["value"])
    return refine(USER, snake_case(match["attr"]), value) if value else None


def _first_person(text: str) -> Triple | None:
    for pattern, predicate in _FIRST_PERSON:
        match = pattern.fullmatch(text)
        if match is not None and (value := _value(match["value"])) is not None:
            return _slot_value(USER, predicate, value)
    return None


def _third_person(text: str) -> Triple | None:
    for pattern, predicate in _THIRD_PERSON:
        match = pattern.fullmatch(text)
        subject = None if match is None else _without_adverb(match["subject"])
        if match is None or subject is None or not _is_name(subject):
            continue
        if (value := _value(match["value"])) is not None:
            return _slot_value(" ".join(subject.split()), predicate, value)
    return None


_ADVERB = re.compile(r"\s+(?:now|still|currently|also)$")


def _without_adverb(subject: str) -> str:
    """A name without the adverb the pattern read into it: "Joon now works at Kakao" is Joon's."""
    return _ADVERB.sub("", subject)


def _relatives(text: str) -> Triple | None:
    """ "my sister lives in Bergen": ``user / sister_lives_in / Bergen``, a fact about the user's
    sister, never the user's own ``lives_in``."""
    match = _RELATIVE.fullmatch(text)
    if match is None or match["kin"].casefold() not in PEOPLE:
        return None
    found = _third_person(f"Relative {match['rest']}")
    if found is None:
        return None
    _, predicate, value = found
    return (USER, f"{snake_case(match['who'])}_{predicate}", value)


def _slot_value(subject: str, predicate: str, value: str) -> Triple | None:
    """A single-valued slot's value checked as a possessive's is ("I live in Lisbon now" is
    Lisbon; "I work at home" is a state of where one works: node/absorb/fact_values.py)."""
    return (
        refine(subject, predicate, value)
        if is_single_valued(predicate)
        else (subject, predicate, value)
    )


def _is(text: str) -> Triple | None:
    match = _IS.fullmatch(text)
    if match is None or not _is_name(match["subject"]):
        return None
    value = _value(match["value"])
    predicate = "is_not" if match["negated"] else "is"
    return (" ".join(match["subject"].split()), predicate, value) if value else None


def _is_name(words: str) -> bool:
    """Capitalised words that do not open with a pronoun or an article."""
    parts = words.split()
    return all(p[0].isupper() for p in parts) and parts[0].casefold() not in _NOT_NAMES
