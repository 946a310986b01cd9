"""Small helpers to read a TOML table strictly: known keys, right types,
and errors that name the file and the dotted key."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .._names import did_you_mean
from ..errors import DatabaseError


_ID = re.compile(r"^[a-z0-9][a-z0-9.\-_]*$")


class Table:
    """A view of one TOML table that reports problems as DatabaseError."""

    def __init__(self, data: Any, file: str, key: str) -> None:
        if not isinstance(data, Mapping):
            raise DatabaseError("expected a table", file=file, key=key or None)
        self.data = data
        self.file = file
        self.key = key

    def where(self, name: str) -> str:
        return f"{self.key}.{name}" if self.key else name

    def error(self, message: str, name: str | None = None) -> DatabaseError:
        return DatabaseError(message, file=self.file, key=self.where(name) if name else (self.key or None))

    def only(self, allowed: Iterable[str]) -> None:
        allowed = list(allowed)
        for name in self.data:
            if name not in allowed:
                raise self.error(f"unknown key{did_you_mean(name, allowed)}", name)

    def text(self, name: str, default: str | None = None, *, required: bool = False) -> str | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise self.error("missing (a string is required)", name)
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.error(f"expected a non-empty string, got {value!r}", name)
        return value

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.text(name, default)
        assert value is not None
        if value not in choices:
            raise self.error(f"{value!r} is not one of {', '.join(choices)}", name)
        return value

    def strings(self, name: str) -> tuple[str, ...]:
        value = self.data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error("expected a list of strings", name)
        return tuple(value)

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.data.get(name, default)
        if not isinstance(value, bool):
            raise self.error(f"expected true or false, got {value!r}", name)
        return value

    def date(self, name: str) -> _dt.date | None:
        value = self.data.get(name)
        if value is None:
            return None
        if isinstance(value, _dt.datetime):
            return value.date()
        if isinstance(value, _dt.date):
            return value
        if isinstance(value, str):
            try:
                return _dt.date.fromisoformat(value)
            except ValueError:
                pass
        raise self.error(f"expected a date such as 2026-10-18, got {value!r}", name)

    def table(self, name: str) -> Table | None:
        value = self.data.get(name)
        if value is None:
            return None
        return Table(value, self.file, self.where(name))

    def tables(self, name: str) -> list[Table]:
        value = self.data.get(name, [])
        if not isinstance(value, list):
            raise self.error("expected an array of tables", name)
        return [Table(v, self.file, f"{self.where(name)}[{i}]") for i, v in enumerate(value)]

    def identifier(self, seen: dict[str, Any] | set[str], what: str) -> str:
        """The table's ``id``: present, well-formed, and not in `seen`."""
        value = self.text("id", required=True)
        assert value is not None
        if not _ID.match(value):
            raise self.error(f"invalid ID {value!r} (lower-case letters, digits, . - _)", "id")
        if value in seen:
            raise self.error(f"duplicate {what} ID {value!r}", "id")
        return value
