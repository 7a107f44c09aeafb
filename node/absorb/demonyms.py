"""Words that say where a person is from or what they believe ("Brazilian", "Korean-American",
"Muslim"): said after "my doctor is", such a word describes the doctor and never names a new
one. Capitalised, they look like a name to the person-slot check (node/absorb/fact_values.py),
so they are listed, with the first word of a two-word one ("South African", "Sri Lankan").
Words that are as often given names are left out ("Christian", "Roman", "Norman", "Jordan",
"Sierra", "Costa"): a name read as a state archives nothing, but a listed name would never
fill its slot.

Pure and deterministic.
"""

from __future__ import annotations

from .same_fact import fold

__all__ = ["DEMONYMS", "is_demonym"]

DEMONYMS = frozenset(
    """afghan albanian algerian american andorran angolan argentine argentinian armenian
    australian austrian azerbaijani bahraini bangladeshi barbadian belarusian belgian belizean
    beninese bhutanese bolivian bosnian botswanan brazilian british bruneian bulgarian burkinabe
    burmese burundian cambodian cameroonian canadian chadian chilean chinese colombian
    congolese croatian cuban cypriot czech danish djiboutian dominican dutch ecuadorian
    egyptian emirati english eritrean estonian ethiopian fijian filipino filipina finnish
    french gabonese gambian georgian german ghanaian greek grenadian guatemalan guinean
    guyanese haitian honduran hungarian icelandic indian indonesian iranian iraqi irish
    israeli italian ivorian jamaican japanese jordanian kazakh kenyan korean kosovar kuwaiti
    kyrgyz lao laotian latvian lebanese liberian libyan lithuanian luxembourgish macedonian
    malagasy malawian malaysian maldivian malian maltese mauritanian mauritian mexican
    moldovan monegasque mongolian montenegrin moroccan mozambican namibian nepalese nepali
    nicaraguan nigerian nigerien norwegian omani pakistani palestinian panamanian
    paraguayan persian peruvian polish portuguese qatari romanian russian rwandan
    salvadoran samoan saudi scottish senegalese serbian singaporean slovak slovakian
    slovenian somali south spanish sri sudanese surinamese swazi swedish swiss syrian
    taiwanese tajik tanzanian thai tibetan togolese tongan trinidadian tunisian turkish
    turkmen ugandan ukrainian uruguayan uzbek venezuelan vietnamese welsh yemeni zambian
    zimbabwean african asian european caribbean latin latina latino latinx hispanic arab
    arabic scandinavian nordic balkan slavic celtic basque catalan galician flemish walloon
    kurdish tamil punjabi bengali gujarati sikh yoruba igbo hausa zulu xhosa maori inuit
    amish aboriginal indigenous muslim jewish catholic protestant buddhist hindu mormon
    atheist agnostic orthodox evangelical quaker anglican lutheran methodist baptist
    black white mixed-race biracial""".split()
)
"""Nationalities, peoples and faiths, accents left out ("Māori" is ``maori``)."""


def is_demonym(word: str) -> bool:
    """Whether ``word`` (any case, accents, "Korean-American" joined) says where someone is
    from or what they believe."""
    parts = fold(word).strip(".,;:!?").split("-")
    return all(part in DEMONYMS for part in parts) and bool(parts[0])
