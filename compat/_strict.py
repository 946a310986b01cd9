"""Strict checks every reader makes of the values it is given, a database
file's or an input's: a number too long to convert, a list of strings.

A plain helper of every floor (docs/architecture.md): it imports none.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DIGITS", "has_long_number", "is_string_list"]

# Python converts at most 4,300 digits to an integer, and packaging converts
# every number of a version it compares: a longer one in a version, a
# specifier or a requirement would be a ValueError deep inside a check. No
# version needs more than a few digits; a file's strings may hold 100.
MAX_DIGITS = 100
_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * (MAX_DIGITS + 1)


def is_string_list(value: Any) -> bool:
    """Whether `value` is a list of strings (checked by joining them, in C:
    a snapshot header or the names graph lists hundreds).

    >>> is_string_list(["a", "b"]), is_string_list(["a", 1]), is_string_list("ab")
    (True, False, False)
    """
    if not isinstance(value, list):
        return False
    try:
        "".join(value)
    except TypeError:
        return False
    return True


def has_long_number(text: str) -> bool:
    """Whether `text` holds a run of more than MAX_DIGITS ASCII digits.

    (The bytes' digits translated to zeros, and a substring search, in C:
    a regular expression tries a match at every character, ten times slower
    on a database file; so is str.translate on text that is not ASCII.)

    >>> has_long_number("1" * 101), has_long_number("1" * 100 + ".1"), has_long_number("é" + "2" * 101)
    (True, False, True)
    """
    return _LONG_RUN in text.encode("utf-8", "surrogatepass").translate(_AS_ZERO)
