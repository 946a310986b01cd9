"""Requires-Dist lines as a check reads them: parsed by `packaging`, and
refused (a ValueError saying why) when they cannot be used.

A line must parse (PEP 508), name no number too long to compare
(`_schema.MAX_DIGITS`), and carry a marker that evaluates on every machine.
The snapshot reader validates every line of a release this way when asked
to (`db lint`, `db sync`: snapshot.requirement_problem, which skips the
parse for the common shapes); a check parses only the lines it uses, and
validates each as it parses it (model.Release.requirement).
"""

from __future__ import annotations

import functools

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from ..errors import DatabaseError
from .._markers import comparison_problem
from .._strict import MAX_DIGITS, has_long_number
from ._schema import database_error, one_line


def parse_requirement(text: str) -> Requirement:
    """The line parsed, or a ValueError saying why it cannot be used.

    >>> str(parse_requirement("torch>=2.9; sys_platform == 'linux'"))
    'torch>=2.9; sys_platform == "linux"'
    >>> parse_requirement('numpy; "x" in extras')
    Traceback (most recent call last):
    ...
    ValueError: marker: 'x' in extras: extras is not a variable of package metadata's markers
    """
    long = long_number(text)
    if long is not None:
        raise ValueError(long)
    fast = _common(text)
    if fast is not None:
        return fast
    try:
        requirement = Requirement(text)
        problem = comparison_problem(getattr(requirement.marker, "_markers", []))
    except InvalidRequirement as exc:
        raise ValueError(one_line(str(exc).split("\n", 1)[0], 300)) from None
    except RecursionError:
        raise ValueError("a marker nested too deeply") from None
    if problem is not None:
        raise ValueError(problem)
    return requirement


# Most lines are a name, extras, version bounds and a marker shared by many
# lines (platform_system == "Linux"): those are built as packaging builds
# them (Requirement.__new__ and its five attributes), from the specifier set
# and the marker each parsed once; any other line, or one these steps
# refuse, is parsed by packaging, which says what is wrong with it.
# tests/test_fuzz_db.py and test_db_readers.py hold the two to the same result.
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_OPERATOR_START = frozenset("=!<>~")


def _common(text: str) -> Requirement | None:
    """`text` parsed without packaging's parser, or None when it is not a
    common line (or is not valid: packaging then says why). Measured (both
    example checks, 20 paired runs in fresh processes): packaging's parser
    for each of the 529 to 725 lines a check parses costs 8.8 to 10 ms more
    CPU a check, about 3% of it."""
    if "@" in text or not text.replace("\t", " ").isprintable():
        return None  # a URL (or an @ in a marker's string); a character packaging does not skip as it does " \t"
    body, semicolon, marker_text = text.partition(";")
    body = body.strip()
    end = 0
    while end < len(body) and body[end] in _NAME_CHARS:
        end += 1
    name = body[:end]
    if not name or not name[0].isalnum() or not name[-1].isalnum():
        return None
    rest = body[end:].lstrip()
    extras: list[str] = []
    if rest.startswith("["):
        close = rest.find("]")
        if close == -1:
            return None
        inner = rest[1:close].strip()
        extras = [extra.strip() for extra in inner.split(",")] if inner else []
        if not all(extra and extra[0].isalnum() and extra[-1].isalnum() and _NAME_CHARS.issuperset(extra)
                   for extra in extras):
            return None
        rest = rest[close + 1:].strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1].strip()
    if rest and not all(part.strip()[:1] in _OPERATOR_START for part in rest.split(",")):
        return None  # not a list of specifiers: an empty one, a stray character
    try:
        specifier = parse_specifier(rest)
        marker = _marker(marker_text.strip()) if semicolon else None
    except (ValueError, RecursionError):  # InvalidSpecifier, InvalidMarker, a marker that cannot be evaluated
        return None
    requirement = Requirement.__new__(Requirement)
    requirement.name = name
    requirement.url = None
    requirement.extras = set(extras)
    requirement.specifier = specifier
    requirement.marker = marker
    return requirement


@functools.lru_cache(maxsize=4096)
def _marker(text: str) -> Marker:
    """Marker(text), once per process for each text, refused (a ValueError)
    where it cannot be evaluated. (Shared: a marker is never changed.)"""
    marker = Marker(text)
    if comparison_problem(marker._markers) is not None:
        raise ValueError(text)
    return marker


@functools.lru_cache(maxsize=16384)
def parse_specifier(text: str) -> SpecifierSet:
    """SpecifierSet(text), made once per process for each text: releases
    repeat their Requires-Python (>=3.10) one after another, and the reader
    checks each before the release parses it again. (Shared: nothing sets
    a specifier set's pre-release policy in compat.) InvalidSpecifier when
    it is not one."""
    return SpecifierSet(text)


def requirement_error(text: str, problem: str, file: str | None, number: int | None, index: int,
                      key: str = "requires_dist") -> DatabaseError:
    """What is wrong with Requires-Dist line `index` of a release line (or line `index` of its list `key`)."""
    return database_error(one_line(f"invalid requirement {text[:200]!r}: {problem}"), file=file, line=number,
                          key=f"{key}[{index}]")


def long_number(text: str) -> str | None:
    """A number packaging would fail to compare (see `_schema.MAX_DIGITS`)."""
    return f"a number of more than {MAX_DIGITS} digits" if has_long_number(text) else None
