"""Credentials as people write them in notes, in several languages: the phrasing detectors of
the secret scan (node/secrets/scan.py; the provider shapes are node/secrets/patterns.py).

A password, wifi key, door or alarm code, PIN or seed phrase is named, then given: ``my
password for bob@gmail.com is Hunter22!``, ``Das WLAN-Passwort ist Tannenbaum77``, ``le code
de la porte est 2580B``, ``mi PIN es 5678``, ``recovery phrase: legal winner thank ...``.
Each detector here is a name (English, German, French, Spanish, and the common Italian,
Portuguese and Dutch words), up to three words saying what it opens (``for the wifi``, ``de
ma boîte mail``), a copula or a colon, and a value; the value's check is what tells a
credential from a sentence *about* one (``my password was compromised``, ``the door code is
on the fridge``): a code or PIN needs digits, a password a word that is no state (no
``-ed``, ``-é``, ``-ado``, ``ge-…-t``), and the weak names (``pass``, ``key``, ``clave``) a
value that mixes letters and digits. Look-alikes have their own excuses: a six-digit Indian
postal PIN next to an address, a card-shaped number after ``order``, ``IMEI`` or ``id``
(node/secrets/patterns.py), a public key (node/secrets/scan.py).

benchmarks/secrets/labelled.jsonl measures them (``python -m benchmarks secrets``).
"""

from __future__ import annotations

import re

from .patterns import Detector

__all__ = ["PHRASE_DETECTORS", "password_like", "postal_pin", "public_key"]

_K = r"(?<![^\W\d_])"
"""Before a name: no letter (``wifi_password`` and ``WLAN-Passwort`` name one too)."""
_STRONG = (
    r"pass(?:word|wd|phrase)|pwd|pw|\w*passwort|\w*kennwort|mot de passe|mdp|"
    r"contrase[ñn]a|senha|wachtwoord|parola d['’]ordine|"
    r"(?:wi-?fi|wlan|wpa2?|network|netzwerk|réseau)[ _-]?"
    r"(?:key|pass|password|code|schlüssel|passwort|kennwort|passphrase)|"
    r"(?:clé|clef|clave|chiave)(?: du| de la| del| de)? (?:wi-?fi|wlan|réseau|red)|"
    r"code (?:du )?wi-?fi"
)
"""Names of a password or wifi key: any word after them that is not a state is the value."""
_WEAK = r"pass|clave|clé|chiave"
"""Names that are also ordinary words: the value must mix letters and digits (and after
``key``, itself too common a word, a colon or copula must come first)."""
_FOR = (
    r"(?:\s+(?:for|to|of|on|at|in|für|vom|von|zum|zur|der|des|meiner|meines|du|de|del|"
    r"d['’]|l['’]|pour|para|per|di|da|do|van|voor|bij)(?:\s*[\w'’.@-]+){1,3}?)?"
)
"""``for the wifi``, ``de ma boîte mail``, ``meiner EC-Karte``: up to three words."""
_ADVERB = r"(?:(?:now|still|jetzt|noch|maintenant|toujours|ahora|todavía|ora|agora|nu)\s+)?"
_IS = (
    r"[\"'`]?(?:\s+(?:is|was|ist|lautet|war|est|était|c['’]est|es|era|fue|está|è|é|"
    r"is now|was set to|changed to|set to)\s*:?\s+|['’]s\s+|\s*[:=]\s*)" + _ADVERB
)
"""The copula or colon between name and value, in each language (``'s``: ``password's X``)."""
_VALUE = r"[\"'`]?\S+"

_STATE_WORDS = frozenset(
    """a an the in on at by for to of not no now also still just only same different new old
    correct incorrect wrong right weak strong long short too very so written saved stored kept
    changed reset expired required needed set shared secret hidden unknown forgotten lost easy
    hard simple complicated something nothing what where here there taped printed under see
    inside behind my your his her our their its this that these those case sensitive missing
    im in auf unter nicht kein keine neu alt falsch richtig schwach stark zu sehr hier dort
    abgelaufen vergessen siehe mein dein sein ihr unser dans sur sous pas nouveau ancien faux
    trop très ici voir mon ton son notre votre le la les un une en el los las no nuevo viejo
    incorrecta incorrecto correcta correcto segura seguro débil fuerte aquí ver mi tu su
    nuestro il lo sul nel non qui vedi o os na no não aqui ver het een op niet hier zie""".split()
)
"""Words after ``password is`` in sentences that give none (``the password is in the drawer``)."""
_STATE = re.compile(
    r"(?:\w+(?:ed|ing|able|ible|ive)|ge\w+(?:t|en)|\w+(?:é|ée|és|ées)|\w+(?:ado|ada|ido|ida)s?"
    r"|\w+(?:ato|ata|ito|ita))",
    re.IGNORECASE,
)
"""A participle or adjective (``compromised``, ``gehackt``, ``expiré``, ``robada``): a state."""


def _value(match: str) -> str:
    """The value at the end of a match, unquoted and without the sentence's punctuation."""
    closers = "\"'`.,;:!?()[]{}"
    return re.split(r"[\s:=\"'`]+", match.rstrip(closers))[-1].strip(closers)


def password_like(word: str) -> bool:
    """At least six characters mixing letters and digits: a value, whatever named it."""
    return len(word) >= 6 and any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def _password_value(match: str) -> bool:
    if re.search(r"[\s:=][\"'`][^\s\"'`]{3,}", match):  # my password is "correct horse ..."
        return True
    word = _value(match)
    if password_like(word) or any(not c.isalnum() and c not in "-'’" for c in word):
        return len(word) >= 4
    return (
        len(word) >= 4
        and word.lower() not in _STATE_WORDS
        and not (word.isalpha() and _STATE.fullmatch(word))
    )


def _weak_value(match: str) -> bool:
    return password_like(_value(match))


def _code_value(match: str) -> bool:
    word = _value(match)
    return 3 <= sum(c.isdigit() for c in word) and len(word) <= 20


def _seed_words(match: str) -> bool:
    """Twelve or more short lower-case words with at most one common word among them."""
    seed = _SEED_AT_END.search(match)
    words = seed.group(0).split() if seed else []
    common = sum(w in _STATE_WORDS or w in _COMMON for w in words)
    return common <= 1


_COMMON = frozenset("and the with from that this are were has have had but you".split())

_OPENS = (
    r"(?:(?:front |back |main |bike |storage |haus|vorder|garagen)?(?:door|gate|garage|alarm|"
    r"safe|lock|padlock|locker|keypad|building|entrance|entry|flat|apartment|house|unit|lockbox|"
    r"intercom|buzzer|card|porte|portail|immeuble|entrée|alarme|coffre|cadenas|carte|puerta|"
    r"portal|alarma|garaje|candado|caja fuerte|entrada|tarjeta|tür|tor|haus|tresor|schloss|"
    r"alarmanlage|karte|portone|cancello|porta|cartão|deur)(?:s|e|n|en)?)"
)
"""What a code opens: a door, a gate, an alarm, a safe, a lock, a card."""
_CODE_WORD = r"(?:code|combination|combo|código|codice|combinaison|combinación|kombination)"
_CODE_NAME = (
    r"(?:" + _OPENS + r"[ _-]?" + _CODE_WORD + r"|(?:haus|vorder|garagen)?(?:tür|tor|tresor|"
    r"alarm|zugangs|schloss)(?:code|kombination)|digicode|deurcode|"
    r"(?:entry|access|security|unlock)[ _]code|"
    + _CODE_WORD
    + r"(?:\s+(?:for|to|of|on|at|de la|de l['’]|del|de|du|d['’]|des|für die|für den|für das|"
    r"für|vom|von|zur|zum|di|do|da|van)\s*(?:[\w'’.-]+\s+){0,3}?" + _OPENS + r"(?:\s+[^\W\d_]+)?))"
)
_CODE_DIGITS = r"[\"'`]?[#*]?\d[\w#*-]*"
_PIN_NAME = (
    r"(?:pin(?:[ _-]?code|[ _]number|-nummer)?|pincode|passcode|pass code|puk(?: code)?|"
    r"code pin|código pin|geheimzahl)"
)
_SEED_NAME = (
    r"(?:(?:seed|recovery|backup|mnemonic|secret recovery|wallet)[ _-]?(?:phrase|words|sentence)|"
    r"(?:\d+-word )?seed|mnemonic|wiederherstellungsphrase|seed-phrase|"
    r"phrase (?:de récupération|secrète|mnémonique)|frase (?:semilla|de recuperación|secreta|"
    r"de respaldo))"
)
_SEED = r"(?:[a-z]{3,8}[\s,]+){11,}[a-z]{3,8}"
_SEED_AT_END = re.compile(_SEED + "$")

_POSTAL_CONTEXT = re.compile(
    r"(?i:address|postal|post office|courier|deliver|shipping|send it to|office|city|district|"
    r"state|india|road|street|nagar|colony|sector|layout|lane|marg|bengaluru|bangalore|mumbai|"
    r"delhi|chennai|kolkata|hyderabad|pune|ahmedabad|jaipur|lucknow|kochi|noida|gurgaon)"
)


def postal_pin(text: str, start: int, end: int) -> bool:
    """An Indian postal PIN (six digits, not starting 0 or 9) beside an address, or written
    ``pincode``: a place, not a secret."""
    found = text[start:end]
    digits = re.findall(r"\d+", found)
    if not digits or not re.fullmatch(r"[1-8]\d{5}", digits[-1]):
        return False
    return "pincode" in found.lower() or bool(_POSTAL_CONTEXT.search(text))


_PUBLIC_BEFORE = re.compile(r"(?i:public|pub|publique|pública|öffentliche[rn]?)[ _-]?$")
_PUBLIC_VALUE = re.compile(r"(?:ssh-|ecdsa-|sk-ssh-|age1|npub1)")


def public_key(text: str, start: int, end: int) -> bool:
    """``public key: ...`` or a key type as the value (``key is ssh-ed25519 ...``): shared by
    design (node/secrets/scan.py leaves the key itself out of the random-token check)."""
    value = _value(text[start:end])
    return bool(_PUBLIC_BEFORE.search(text, max(0, start - 12), start)) or bool(
        _PUBLIC_VALUE.match(value)
    )


PHRASE_DETECTORS: tuple[Detector, ...] = (
    Detector(
        "password",
        "a wallet seed phrase",
        _K + r"(?i:" + _SEED_NAME + _FOR + _IS + r")" + _SEED,
        _seed_words,
        ("~seed", "~phrase", "~frase", "~mnemonic", "~words"),
    ),
    Detector(
        "password",
        "a passcode or PIN",
        _K
        + r"(?i:(?:"
        + _CODE_NAME
        + "|"
        + _PIN_NAME
        + r")s?"
        + _FOR
        + r"(?:"
        + _IS
        + r"|\s+)"
        + _CODE_DIGITS
        + ")",
        _code_value,
        ("~pin", "~pass", "~puk", "~code", "~códi", "~codi", "~combi", "~kombi", "~geheim"),
        postal_pin,
    ),
    Detector(
        "password",
        "a passcode or PIN",
        r"(?i:" + _OPENS + r"\s+(?:has|hat|tiene|a|ha|tem|heeft)\s+(?:(?:the|a|den|einen|el|le|il|o"
        r"|de)\s+)?" + _CODE_WORD + r"\s*:?\s*" + _CODE_DIGITS + ")",
        _code_value,
        ("~code", "~códi", "~codi", "~combi", "~kombi"),
    ),
    Detector(
        "password",
        "a password",
        _K + r"(?i:(?:" + _STRONG + r")s?" + _FOR + _IS + _VALUE + ")",
        _password_value,
        (
            "~pw",
            "~pass",
            "~pwd",
            "~mdp",
            "~contrase",
            "~senha",
            "~wachtwoord",
            "~kennwort",
            "~wort",
            "~parola",
            "~key",
            "~schlüssel",
            "~clé",
            "~clef",
            "~clave",
            "~chiave",
            "~code",
        ),
    ),
    Detector(
        "password",
        "a password",
        _K
        + r"(?i:(?:(?:"
        + _STRONG
        + "|"
        + _WEAK
        + r")"
        + _FOR
        + r"(?:"
        + _IS
        + r"|\s+)|key"
        + _FOR
        + _IS
        + ")"
        + _VALUE
        + ")",
        _weak_value,
        (
            "~pw",
            "~pass",
            "~mdp",
            "~contrase",
            "~senha",
            "~wachtwoord",
            "~kennwort",
            "~key",
            "~clave",
            "~clé",
            "~chiave",
        ),
        public_key,
    ),
    Detector(
        "password",
        "a password",
        r"(?i:(?:changed|set|reset|updated|changé|cambié|geändert)\s+(?:\w+\s+){0,2}?(?:"
        + _STRONG
        + r")\s+(?:to|auf|en|à|a|zu|in|naar)\s+"
        + _VALUE
        + ")",
        _weak_value,
        ("~pass", "~pw", "~mdp", "~contrase", "~wort"),
    ),
    Detector(
        "password",
        "a password",
        r"(?i:[\w.+-]+@[\w-]+\.[\w.-]+|(?:login|user ?name|usuario|utilisateur|identifiant|"
        r"benutzer(?:name)?|zugangsdaten)\b[^\n/]{0,40}?\S+)\s*/\s*" + _VALUE,
        _weak_value,
        (
            "@",
            "~login",
            "~name",
            "~usuario",
            "~utilisateur",
            "~identifiant",
            "~benutzer",
            "~zugangsdaten",
        ),
    ),
)
"""Credentials in notes, tried after the provider shapes (node/secrets/patterns.py)."""
