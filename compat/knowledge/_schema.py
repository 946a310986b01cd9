"""Small helpers to read database files strictly: known keys, right types,
UTF-8 text, and errors that name the file, the line and the dotted key."""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from .._names import did_you_mean
from .._strict import MAX_DIGITS, has_long_number, is_string_list
from .._text import has_joining_escape
from ..errors import DatabaseError, one_line


_ID_FIRST = "abcdefghijklmnopqrstuvwxyz0123456789"
_ID_CHARS = _ID_FIRST + ".-_"


def is_id(value: str) -> bool:
    """Whether `value` is an ID: a lower-case letter or digit, then those and . - _

    >>> is_id("vllm.fa3-fp8_sm90"), is_id("Vllm"), is_id("a b"), is_id("a\\n")
    (True, False, False, False)
    """
    return value[:1] != "" and value[0] in _ID_FIRST and not value.strip(_ID_CHARS)


def _long_number(data: Mapping[str, Any]) -> str | None:
    """The dotted key of a string of `data` holding a number of more than
    MAX_DIGITS digits, or None. The data is searched as JSON first (a walk
    in Python costs more than parsing a small file); the walk, without
    recursion, only names the key."""
    try:
        if not has_long_number(json.dumps(data, default=str, ensure_ascii=False)):
            return None
    except (ValueError, RecursionError):
        pass
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, str):
            if has_long_number(value):
                return where
        elif isinstance(value, Mapping):
            pending.extend((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            pending.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
    return None


def database_error(message: str, *, file: str | None, key: str | None = None, line: int | None = None,
                   column: int | None = None) -> DatabaseError:
    """A DatabaseError that prints as one line of bounded length, whatever
    the file put in the key or the value it quotes."""
    return DatabaseError(one_line(message), file=file, key=one_line(key, 200) if key else None, line=line, column=column)


def decode_text(raw: bytes, file: str, first_line: int = 1) -> str:
    """`raw` as UTF-8 text; a byte that is not UTF-8 is a DatabaseError that
    names its line (counted from `first_line`) and byte column, never a
    UnicodeDecodeError from deep inside a check.

    >>> decode_text(b"a\\nb\\xff", "f.toml")
    Traceback (most recent call last):
    ...
    compat.errors.DatabaseError: f.toml:2:2: not UTF-8 text (invalid start byte)
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = raw.rfind(b"\n", 0, exc.start) + 1
        raise DatabaseError(
            f"not UTF-8 text ({exc.reason})", file=file, line=first_line + raw.count(b"\n", 0, exc.start),
            column=exc.start - start + 1,
        ) from None


def read_text(path: str) -> str:
    """The text of a database file that a line scan reads, with universal
    newlines as `open` gives them (so line numbers agree with the TOML
    parser's), read as the TOML reader reads a file (`_toml.read_raw`: an
    overlay's gpus.toml that links to /dev/zero is no endless read). A
    missing file is FileNotFoundError: what it means is the caller's."""
    from .._toml import read_raw

    if not os.path.lexists(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    text = decode_text(read_raw(path, error=DatabaseError), path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class Table:
    """A view of one TOML table that reports problems as DatabaseError.

    The root table of a file (`key` empty) checks every string of the file
    once for a number too long to convert (`MAX_DIGITS`): given the `text`
    the data was parsed from, only when the text could hold one (a run of
    that many digits, or a \\u escape or line-ending backslash, through
    which digits of a string can meet).
    """

    def __init__(self, data: Any, file: str, key: str, *, text: str | None = None) -> None:
        if not isinstance(data, Mapping):
            raise DatabaseError("expected a table", file=file, key=key or None)
        self.data = data
        self.file = file
        self.key = key
        if not key:
            self.refuse_long_numbers(text)

    def refuse_long_numbers(self, text: str | None = None) -> None:
        """A DatabaseError at the first string of the table holding a number
        of more than MAX_DIGITS digits; walked only where the `text` it was
        parsed from could hold one (a run of that many digits, or a \\u
        escape or line-ending backslash, through which digits of a string
        can meet), or when the text is not known."""
        # what in TOML text can make digits meet in a string that the text does not show side by side:
        # a \u or \U escape, or a line-ending backslash
        if text is None or has_joining_escape(text) or has_long_number(text):
            long = _long_number(self.data)
            if long is not None:
                raise self.error(f"a number of more than {MAX_DIGITS} digits", long)

    def where(self, name: str) -> str:
        return f"{self.key}.{name}" if self.key else name

    def error(self, message: str, name: str | None = None) -> DatabaseError:
        return database_error(message, file=self.file, key=self.where(name) if name else (self.key or None))

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
        if not is_string_list(value):
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

    def identifier(self, seen: dict[str, Any] | set[str], what: str, key: str = "id") -> str:
        """The table's `key` (its ``id``): present, well-formed, and not in `seen`."""
        value = self.text(key, required=True)
        assert value is not None
        if not is_id(value):
            raise self.error(f"invalid {'ID' if key == 'id' else key} {value!r:.80} (lower-case letters, digits, . - _)",
                             key)
        if value in seen:
            raise self.error(f"duplicate {what} {'ID' if key == 'id' else key} {value!r}", key)
        return value
