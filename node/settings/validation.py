"""One JSON parser and one validator, shared by ``settings.json`` and the HTTP API's bodies.

:func:`parse_json` refuses what :mod:`json` would let through silently: a key repeated in one object
(the last would win), ``NaN`` and the infinities (not JSON, RFC 8259 §6), and nesting deep enough to
exhaust the stack. :func:`convert` hands the decoded value to :func:`msgspec.convert`, which checks
it against the declared types (node/settings/limits.py, node/settings/config.py,
node/recall/search.py), then runs the checks the types carry in ``Meta.extra``. msgspec says *where*
a value failed (``$.sync.peers[0].url``); the wording people read comes from the type declared
there, so a limit is written once and the message follows it: ``sync.max_clock_skew_ms must be a
positive integer, got "abc"``. Of msgspec's own messages only the path and two shapes (a missing and
an unknown field) are read; tests/node/test_validation.py and tests/node/test_config.py pin them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import msgspec
from msgspec import inspect as mi

__all__ = [
    "Invalid",
    "JsonRefused",
    "convert",
    "key_path",
    "one_of",
    "parse_json",
    "requirement",
    "show",
]

T = TypeVar("T")
Path = tuple[str | int, ...]
TOP_LEVEL = "the top level"
_AT = re.compile(r"^(?P<text>.*?)(?: - at `\$(?P<path>.*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_MISSING = re.compile(r"^Object missing required field `(.+)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(.+)`$")
_Object = (mi.StructType, mi.DataclassType)
"""The types decoded from a JSON object with declared keys."""


class JsonRefused(ValueError):
    """Bytes that are not one acceptable JSON document; the message says why and where."""


class Invalid(ValueError):
    """A decoded value that does not fit its declared type; ``str()`` names the key path."""

    def __init__(self, message: str, path: Path = ()) -> None:
        super().__init__(message)
        self.path = path

    @classmethod
    def value(cls, path: Path, requirement: str, value: object, top: str = TOP_LEVEL) -> Invalid:
        """``<key path> <requirement>, got <value>``; ``top`` names the document itself."""
        return cls(f"{key_path(path) or top} {requirement}, got {show(value)}", path)


def parse_json(raw: bytes) -> object:
    """Decode UTF-8 JSON (a byte-order mark is tolerated), refusing repeats, NaN and deep nesting.

    Raises:
        JsonRefused: ``not UTF-8 text (byte 3)``, ``invalid JSON at line 4, column 3: ...``, ...
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JsonRefused(f"not UTF-8 text (byte {exc.start})") from exc
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        raise JsonRefused(message) from exc
    except RecursionError as exc:
        raise JsonRefused("JSON nested too deeply") from exc


def _no_constant(name: str) -> NoReturn:
    raise JsonRefused(f"invalid JSON: {name} is not a JSON number")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JsonRefused(f"the key {json.dumps(key)} appears twice in one object")
        result[key] = value
    return result


def convert(data: object, type_: type[T], *, from_strings: bool = False, top: str = TOP_LEVEL) -> T:
    """``data`` as ``type_``, checked against every declared limit and check.

    Args:
        from_strings: accept numbers and booleans written as strings (query parameters).
        top: what to call the document itself in messages (``the body must be a JSON object``).

    Raises:
        Invalid: the first value that does not fit, named by its key path.
    """
    _refuse_unknown(_info(type_), data, (), top)
    try:
        result = msgspec.convert(data, type_, strict=not from_strings)
    except msgspec.ValidationError as exc:
        raise _explain(str(exc), data, _info(type_), top) from exc
    _run_checks(_info(type_), result, (), top)
    return result


_INFO: dict[object, mi.Type] = {}


def _info(type_: object) -> mi.Type:
    """msgspec's description of ``type_``, made once per type."""
    info = _INFO.get(type_)
    if info is None:
        info = _INFO[type_] = mi.type_info(type_)
    return info


def one_of(choices: tuple[str, ...]) -> str:
    """The requirement for a choice, in the order declared (msgspec sorts a ``Literal``'s)."""
    return f"must be one of {', '.join(json.dumps(c) for c in choices)}"


def key_path(path: Path) -> str:
    """``("sync", "peers", 0, "url")`` as ``sync.peers[0].url``."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else step
    return text


def show(value: object) -> str:
    """A short JSON rendering of a bad value for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, so the message can be printed
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _explain(error: str, data: object, root: mi.Type, top: str) -> Invalid:
    """Turn msgspec's ``Expected `int` >= 1 - at `$.top_k``` into our wording."""
    match = _AT.match(error)
    assert match is not None  # the pattern matches any text
    text, path = match["text"], _parse_path(match["path"] or "")
    if missing := _MISSING.match(text):
        full = (*path, missing[1])
        return Invalid(f"{key_path(full)} is required", full)
    if _UNKNOWN.match(text):
        return _unknown_keys(path, _value_at(data, path), _type_at(root, path), top)
    value = _value_at(data, path)
    return Invalid.value(path, requirement(_type_at(root, path), value), value, top)


def _parse_path(text: str) -> Path:
    return tuple(int(m[2]) if m[2] is not None else m[1] for m in _STEP.finditer(text))


def _value_at(data: object, path: Path) -> object:
    for step in path:
        data = data[step] if isinstance(data, list | tuple | dict) else None  # type: ignore[index]
    return data


def _type_at(t: mi.Type, path: Path) -> mi.Type:
    for step in path:
        t = _bare(t)
        if isinstance(step, int) and isinstance(t, mi.VarTupleType | mi.ListType):
            t = t.item_type
        elif isinstance(t, _Object):
            t = next(f.type for f in t.fields if f.encode_name == step)
    return t


def _bare(t: mi.Type) -> mi.Type:
    """``t`` without its metadata and without ``| None``."""
    while True:
        if isinstance(t, mi.Metadata):
            t = t.type
        elif isinstance(t, mi.UnionType):
            t = next(m for m in t.types if not isinstance(m, mi.NoneType))
        else:
            return t


def _refuse_unknown(t: mi.Type, data: object, path: Path, top: str) -> None:
    """Refuse keys no field declares, naming them all (msgspec ignores them for dataclasses).

    A dataclass always refuses them (settings: a misspelt key must not pass unnoticed); a
    msgspec ``Struct`` only when declared with ``forbid_unknown_fields``.
    """
    if data is None:
        return
    t = _bare(t)
    refuses = isinstance(t, mi.DataclassType) or (
        isinstance(t, mi.StructType) and t.forbid_unknown_fields
    )
    if isinstance(t, _Object) and isinstance(data, dict):
        fields = {f.encode_name: f for f in t.fields}
        data = data if refuses else {k: v for k, v in data.items() if k in fields}
        if any(key not in fields for key in data):
            raise _unknown_keys(path, data, t, top)
        for key, value in data.items():
            _refuse_unknown(fields[key].type, value, (*path, key), top)
    elif isinstance(t, mi.VarTupleType | mi.ListType) and isinstance(data, list):
        for index, item in enumerate(data):
            _refuse_unknown(t.item_type, item, (*path, index), top)


def _unknown_keys(path: Path, value: object, t: mi.Type, top: str) -> Invalid:
    """Every unknown key of the object at ``path``, not only the first one met."""
    struct = _bare(t)
    assert isinstance(struct, _Object) and isinstance(value, dict)
    known = [f.encode_name for f in struct.fields]
    paths = ", ".join(key_path((*path, str(k))) for k in value if k not in known)
    verb = "is not a known key" if len(paths.split(", ")) == 1 else "are not known keys"
    return Invalid(f"{paths} {verb}; {key_path(path) or top} takes {', '.join(known)}", path)


def _extra(t: mi.Type) -> dict[str, Any]:
    """The ``Meta.extra`` on ``t`` (through ``| None``)."""
    while isinstance(t, mi.Metadata | mi.UnionType):
        if isinstance(t, mi.Metadata):
            return t.extra or {}
        t = next(m for m in t.types if not isinstance(m, mi.NoneType))
    return {}


def requirement(t: mi.Type, value: object) -> str:
    """What a value of type ``t`` must be, worded for ``value`` (``must be at most 64 ...``)."""
    bare = _bare(t)
    if isinstance(bare, mi.StrType) and isinstance(value, str):
        if bare.max_length is not None and len(value) > bare.max_length:
            return f"must be at most {bare.max_length} characters"
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(bare, mi.IntType) and is_int and bare.le is not None and value > bare.le:  # type: ignore[operator]
        return f"must be at most {bare.le}"
    wording = _extra(t).get("requirement")
    return str(wording) if wording else _wording(bare, value)


def _wording(t: mi.Type, value: object) -> str:
    if isinstance(t, mi.BoolType):
        return "must be true or false"
    if isinstance(t, mi.IntType):
        return "must be a positive integer" if t.ge == 1 else "must be an integer"
    if isinstance(t, mi.FloatType):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "must be a number"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be a finite number"
        if t.gt is not None:
            return f"must be a number greater than {t.gt:g} and at most {t.le:g}"
        return f"must be a number from {t.ge:g} to {t.le:g}"
    if isinstance(t, mi.LiteralType):
        return one_of(tuple(str(v) for v in t.values))
    if isinstance(t, mi.StrType):
        return "must be a non-empty string" if t.min_length else "must be a string"
    if isinstance(t, _Object):
        return "must be a JSON object"
    if isinstance(t, mi.VarTupleType | mi.ListType):
        return "must be a list"
    return "is not valid"


Check = Callable[[object], "str | None"]


def _run_checks(t: mi.Type, value: object, path: Path, top: str) -> None:
    """Run each ``Meta.extra["check"]`` under ``t`` on the converted ``value``."""
    if value is None:
        return
    if isinstance(t, mi.Metadata):
        check: Check | None = (t.extra or {}).get("check")
        if check is not None and (problem := check(value)) is not None:
            raise Invalid.value(path, problem, value, top)
        _run_checks(t.type, value, path, top)
    elif isinstance(t, mi.UnionType):
        for member in t.types:
            _run_checks(member, value, path, top)
    elif isinstance(t, _Object):
        for f in t.fields:
            _run_checks(f.type, getattr(value, f.name), (*path, f.encode_name), top)
    elif isinstance(t, mi.VarTupleType | mi.ListType) and isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _run_checks(t.item_type, item, (*path, index), top)
