"""Shapes of short strings, told with str methods.

The re module compiles a pattern in Python the first time a process uses
it, 100 to 300 microseconds apiece: a check of a stack compiled a score of
them, a tenth of its own run. The shapes it tests on every run are told
here instead, each exactly as the pattern in its docstring matches it
(tests/test_text.py holds each to that pattern over generated strings).
"""

from __future__ import annotations

__all__ = ["dotted_identifiers", "dotted_numbers", "dotted_words", "has_joining_escape", "lower_words", "quoted"]


def dotted_numbers(text: str) -> list[str] | None:
    r"""The parts of `text` if it is ``[0-9]+(\.[0-9]+)*`` (ASCII digits), else None.

    >>> dotted_numbers("2.28"), dotted_numbers("2..28"), dotted_numbers("\u0663")
    (['2', '28'], None, None)
    """
    parts = text.split(".")
    return parts if text.isascii() and all(part.isdigit() for part in parts) else None


def dotted_words(text: str) -> bool:
    r"""Whether `text` is ``[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*``."""
    return text.isascii() and all(part.replace("_", "a").isalnum() for part in text.split("."))


def dotted_identifiers(text: str) -> bool:
    r"""Whether `text` is ``[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*``."""
    return text.isascii() and all(part.isidentifier() for part in text.split("."))


def lower_words(text: str) -> list[str]:
    """``re.findall(r"[a-z0-9]+", text)``: the runs of lower-case ASCII letters and digits.

    >>> lower_words("nvidia geforce rtx-4090 ti")
    ['nvidia', 'geforce', 'rtx', '4090', 'ti']
    """
    return "".join(c if c in _LOWER_ALNUM else " " for c in text).split()


_LOWER_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def quoted(text: str) -> list[str]:
    """``re.findall(r'"([^"]+)"', text)``: the non-empty double-quoted strings
    (an empty pair's closing quote opens the next, as the pattern reads it).

    >>> quoted('name = "H100", aliases = ["H100 SXM", "GH100"]')
    ['H100', 'H100 SXM', 'GH100']
    >>> quoted('["", "x"]')
    [', ']
    """
    out = []
    start = text.find('"')
    while start != -1:
        end = text.find('"', start + 1)
        if end == -1:
            break
        if end == start + 1:
            start = end
            continue
        out.append(text[start + 1:end])
        start = text.find('"', end + 1)
    return out


def has_joining_escape(text: str) -> bool:
    r"""Whether `text` holds ``\\[uU\s]``: a backslash before u, U or whitespace."""
    at = text.find("\\")
    while at != -1:
        after = text[at + 1:at + 2]
        if after in ("u", "U") or after.isspace():
            return True
        at = text.find("\\", at + 1)
    return False
