"""Shapes of short strings, each one `re` pattern named for what it tells.

Each pattern is compiled at its first use, once per process: a check
matches a few thousand short strings against six of them (wheel tags above
all), and compiling all six costs under half a millisecond. (They were
once told with str methods instead, to spare the compiling; measured, that
saved nothing, and it was a second reading of each shape to keep exact.)
"""

from __future__ import annotations

import functools
import re

__all__ = ["dotted_identifiers", "dotted_numbers", "dotted_words", "has_joining_escape", "lower_words", "quoted"]


def dotted_numbers(text: str) -> list[str] | None:
    r"""The parts of `text` if it is ``[0-9]+(\.[0-9]+)*`` (ASCII digits), else None.

    >>> dotted_numbers("2.28"), dotted_numbers("2..28"), dotted_numbers("\u0663")
    (['2', '28'], None, None)
    """
    return text.split(".") if _re(r"[0-9]+(?:\.[0-9]+)*").fullmatch(text) else None


def dotted_words(text: str) -> bool:
    r"""Whether `text` is ``[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*``."""
    return _re(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*").fullmatch(text) is not None


def dotted_identifiers(text: str) -> bool:
    r"""Whether `text` is ``[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*``."""
    return _re(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*").fullmatch(text) is not None


def lower_words(text: str) -> list[str]:
    """``re.findall(r"[a-z0-9]+", text)``: the runs of lower-case ASCII letters and digits.

    >>> lower_words("nvidia geforce rtx-4090 ti")
    ['nvidia', 'geforce', 'rtx', '4090', 'ti']
    """
    return _re(r"[a-z0-9]+").findall(text)


def quoted(text: str) -> list[str]:
    """``re.findall(r'"([^"]+)"', text)``: the non-empty double-quoted strings
    (an empty pair's closing quote opens the next, as the pattern reads it).

    >>> quoted('name = "H100", aliases = ["H100 SXM", "GH100"]')
    ['H100', 'H100 SXM', 'GH100']
    >>> quoted('["", "x"]')
    [', ']
    """
    return _re(r'"([^"]+)"').findall(text)


def has_joining_escape(text: str) -> bool:
    r"""Whether `text` holds ``\\[uU\s]``: a backslash before u, U or whitespace."""
    return _re(r"\\[uU\s]").search(text) is not None


_re = functools.cache(re.compile)  # each pattern compiled at its first use
