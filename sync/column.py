"""One replicated column and the values it may hold: the checks every delta's values pass
(sync/schema.py's tables are made of these)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .errors import SchemaError

__all__ = ["MAX_INT", "MAX_TEXT_BYTES", "MIN_INT", "Column", "Kind", "Value"]

Value = str | int | float | bool | None
"""A value a replicated column can hold."""

Kind = Literal["text", "int", "real", "bool"]

_PY_TYPE: dict[Kind, type] = {"text": str, "int": int, "real": float, "bool": bool}
"""The one Python type of each kind (a ``bool`` is no ``int`` here, as in :meth:`Column.check`)."""
_NONE_TYPE = type(None)
_PLAIN_TYPES = frozenset({*_PY_TYPE.values(), _NONE_TYPE})
"""The exact types :meth:`Column.accepts_all` answers for itself; other types go to ``check``."""

MAX_TEXT_BYTES = 65_536
MIN_INT = -(1 << 63)
MAX_INT = (1 << 63) - 1


@dataclass(frozen=True)
class Column:
    """One replicated column.

    Attributes:
        name: the SQL column name (checked against this registry, then quoted).
        kind: the value type; ``bool`` is stored as an INTEGER 0/1.
        nullable: whether ``None`` is allowed.
        max_bytes: cap on a text value's UTF-8 length.
        added_in: the schema version that appended this column to its table (``None``: there
            from the start). Such a column is nullable, and a row from a node of an older
            schema may leave it out (sync/unknown.py).
    """

    name: str
    kind: Kind
    nullable: bool = False
    max_bytes: int = MAX_TEXT_BYTES
    added_in: int | None = None

    def check(self, value: object) -> None:
        """Raise :class:`SchemaError` unless ``value`` fits this column exactly (never coerced)."""
        if value is None:
            if not self.nullable:
                raise SchemaError(f"column {self.name!r} may not be null")
            return
        if self.kind == "text":
            self._check_text(value)
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise SchemaError(f"column {self.name!r} expects a bool")
        elif self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise SchemaError(f"column {self.name!r} expects an integer")
            if not MIN_INT <= value <= MAX_INT:
                raise SchemaError(f"column {self.name!r}: integer out of 64-bit range")
        elif not isinstance(value, float) or not math.isfinite(value):
            raise SchemaError(f"column {self.name!r} expects a finite float")

    def _check_text(self, value: object) -> None:
        if not isinstance(value, str):
            raise SchemaError(f"column {self.name!r} expects text")
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise SchemaError(f"column {self.name!r}: text is not valid Unicode") from exc
        if size > self.max_bytes:
            raise SchemaError(
                f"column {self.name!r}: text of {size} bytes exceeds {self.max_bytes}"
            )
        if "\x00" in value:
            raise SchemaError(f"column {self.name!r}: text contains a NUL character")

    def accepts_all(self, values: Sequence[object]) -> bool:
        """Whether :meth:`check` accepts every one of ``values``: the same verdict, for a batch.

        Each step is one loop in C over the whole column (type set, min/max, one join), where
        :meth:`check` costs a Python call per value; that saving is why the rules are written
        twice, and the property tests in tests/sync/test_fast_paths.py hold the two to the same
        verdict for values of every type. A value of an unusual type (a subclass of ``str``,
        say) gets :meth:`check`'s own verdict. On ``False`` the caller checks value by value,
        which names the first problem.
        """
        types = set(map(type, values))
        if _NONE_TYPE in types:
            if not self.nullable:
                return False
            types.discard(_NONE_TYPE)
            values = [v for v in values if v is not None]
        if not types:
            return True  # no values, or only nulls where null is allowed
        if types == {_PY_TYPE[self.kind]}:
            return self._values_fit(values)
        if types <= _PLAIN_TYPES:
            return False  # a value of another plain type, which check refuses
        return all(map(self._passes, values))

    def _values_fit(self, values: Sequence[object]) -> bool:
        """:meth:`check`'s range rules for values that all have the kind's exact type."""
        if self.kind == "text":
            return self._texts_fit(values)  # type: ignore[arg-type]
        if self.kind == "int":
            return MIN_INT <= min(values) and max(values) <= MAX_INT  # type: ignore[type-var,operator]
        if self.kind == "real":
            return all(map(math.isfinite, values))  # type: ignore[arg-type]
        return True  # bool: the type is the whole check

    def _texts_fit(self, texts: Sequence[str]) -> bool:
        joined = "".join(texts)
        if "\x00" in joined:
            return False
        longest = max(map(len, texts))
        if joined.isascii():
            return longest <= self.max_bytes
        try:
            if longest * 4 <= self.max_bytes:  # UTF-8 spends at most 4 bytes on a character
                joined.encode("utf-8")  # fails on a lone surrogate anywhere (joining pairs none up)
                return True
            return max(map(len, map(str.encode, texts))) <= self.max_bytes
        except UnicodeEncodeError:
            return False

    def _passes(self, value: object) -> bool:
        try:
            self.check(value)
        except SchemaError:
            return False
        return True
