"""A text that says several facts, cut into its clauses, each parsed alone.

"I live in Lisbon now and my dentist is Dr. Silva" is two facts. Parsed whole, the phrasing
rules read it as one: a city "Lisbon now and my dentist is Dr. Silva", and the dentist lost.
So a text is cut into sentences, and each sentence at ``and``, ``but``, ``;`` or a comma
where what follows opens a clause of its own ("my ...", "I ...", "Bob's ...", "she ...", or a
standing rule: "always ...", "never ...").
A cut is kept only when every piece is a clause (it states something: a phrasing rule reads
it as a fact, or it has a verb) and one piece at least is a fact, so "I like salt and pepper",
"my kids are Ana and my sister's son" and "Tom and I live in Porto" stay whole; and a text
whose every piece is a note stays one note, as written.

Pure and deterministic.
"""

from __future__ import annotations

import re

from .fact_values import PEOPLE
from .phrases import NOTE, USER, Triple, parse_fact

__all__ = ["clauses", "parse_facts", "sentences"]

_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Mx", "Prof", "St")
_SENTENCE_END = re.compile(
    "".join(rf"(?<!\b{t}\.)(?<!\b{t.lower()}\.)(?<!\b{t.upper()}\.)" for t in _TITLES)
    + r"(?<=[.!?])\s+|\n+"
)
"""A full stop ends a sentence, unless it is a title's, in any case ("dr. Silva", "DR. SILVA")."""
_DIRECTIVE = re.compile(r"(?i:always|never|please)\s+[^\W\d_]+\s+\S")
"""A standing rule ("always reply in French", "never book me before 9"): a clause of its own."""
_OPENER = (
    r"(?:(?i:my|i|i['’]m|i['’]ve|i['’]d|we|we['’]re|we['’]ve|our|he|she|they|he['’]s|she['’]s)\b"
    r"|[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){0,3}['’]s\s"
    r"|[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2}\s+(?i:is|was|likes|loves|hates|dislikes|lives|works|"
    r"moved|does|doesn['’]t|has)\b"
    rf"|{_DIRECTIVE.pattern})"
)
_JOINT = re.compile(rf"\s*(?:,?\s+(?i:and|but|and\s+also|while)\s+|;\s*|,\s+)(?={_OPENER})")
_SAME_SUBJECT = re.compile(
    r"\s*,?\s+(?i:and|but)\s+(?=(?i:works?|lives?|moved|relocated|likes?|loves?|hates?|"
    r"dislikes?|enjoys?)\s)"
)
"""A second verb of the same subject: "I live in Porto and work at Acme", "Bob lives in Porto
and works at Acme"."""
_VERBS = frozenset(
    """is are was were am be been has have had do does did like likes love loves hate hates
    live lives work works moved relocated need needs want wants got get gets started stopped
    take takes took use uses go goes went play plays drink drinks eat eats own owns""".split()
)
_WORD = re.compile(r"[\w'’]+")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (not after a title's full stop), blanks dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def clauses(sentence: str) -> list[str]:
    """``sentence`` cut into its clauses, or whole when a cut would not give clauses."""
    pieces = [p.strip() for p in _JOINT.split(sentence.strip()) if p.strip()]
    pieces = [part for piece in pieces for part in _with_subject(piece)]
    if len(pieces) < 2:
        return [sentence.strip()]
    parsed = [parse_fact(piece) for piece in pieces]
    if not any(t[1] != NOTE for t in parsed):
        return [sentence.strip()]
    if not all(_is_clause(p, t) for p, t in zip(pieces, parsed, strict=True)):
        return [sentence.strip()]
    return pieces


def _with_subject(piece: str) -> list[str]:
    """A piece with a second verb of its subject cut in two, the second given the subject
    ("I", or the name a phrasing rule read: "Bob")."""
    first, *more = _SAME_SUBJECT.split(piece)
    if not more:
        return [piece]
    subject = "I" if re.match(r"(?i:i)\s", first) else parse_fact(first)[0]
    if subject == USER:
        return [piece]
    return [first, *(f"{subject} {verb}" for verb in more)]


def _is_clause(piece: str, triple: Triple) -> bool:
    """A piece that states something: a fact, a standing rule, or words with a verb."""
    return triple[1] != NOTE or _DIRECTIVE.match(piece) is not None or _has_verb(piece)


def _has_verb(piece: str) -> bool:
    words = [w.casefold().replace("’", "'") for w in _WORD.findall(piece)]
    return len(words) >= 2 and any(
        w in _VERBS or w.endswith(("'m", "'re", "'ve")) for w in words[1:]
    )


def parse_facts(text: str) -> list[Triple]:
    """The triples a text states, one per clause, each once, in the order said; a text of one
    clause is :func:`~feral.node.absorb.phrases.parse_fact`'s one triple."""
    pieces = [piece for sentence in sentences(text) for piece in clauses(sentence)]
    found: list[Triple] = []
    person: str | None = None
    for piece in pieces:
        said = parse_fact(piece)
        if person is not None and said[1] == NOTE and (named := _PRONOUN.match(piece)):
            said = parse_fact(person + piece[named.end() :])  # "she works at ..."
        person = _who(said)
        for triple in _listed(said):
            if triple not in found:
                found.append(triple)
    if all(triple[1] == NOTE for triple in found):
        return [parse_fact(text)]  # a note stays whole, as written
    return found


_PRONOUN = re.compile(r"(?i:he|she)(?=\s)")
_LIST = re.compile(r"\s+(?i:as\s+well\s+as|and\s+also)\s+")
_LISTED = frozenset(("likes", "dislikes"))


def _who(triple: Triple) -> str | None:
    """Whom a "he" or "she" in the next clause means: the person the clause named ("My wife is
    Ngozi and she works at Access Bank": the wife; "Kwame is a nurse and he ...": Kwame)."""
    subject, predicate, _ = triple
    if subject == USER and predicate.removesuffix("_name") in PEOPLE:
        return f"my {predicate.removesuffix('_name').replace('_', ' ')}"
    return subject if subject not in (USER,) and predicate != NOTE else None


def _listed(triple: Triple) -> list[Triple]:
    """A liking of several things said "X as well as Y" or "X and also Y": one fact each ("I
    like salt and pepper" stays one: a plain "and" may join one thing's name)."""
    subject, predicate, obj = triple
    parts = _LIST.split(obj) if predicate in _LISTED else [obj]
    return [(subject, predicate, part) for part in parts if part] or [triple]
