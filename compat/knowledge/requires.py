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
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet

from ..errors import DatabaseError
from ._schema import MAX_DIGITS, database_error, has_long_number, one_line


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
        problem = _marker_problem(getattr(requirement.marker, "_markers", []))
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
    common line (or is not valid: packaging then says why)."""
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
    if _marker_problem(marker._markers) is not None:
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


# The marker operators packaging compares without building a specifier; with
# any other (~=, ===) the comparison raises unless the value is a version.
_PLAIN_OPERATORS = frozenset({"in", "not in", "<", "<=", "==", "!=", ">=", ">"})
# The variables a marker of package metadata may name (PEP 508, and `extra`).
# packaging also parses `extras` and `dependency_groups`, which PEP 751 gives
# lock files only: evaluating metadata's markers raises on them.
_METADATA_VARIABLES = frozenset({
    "python_version", "python_full_version", "os_name", "sys_platform", "platform_release", "platform_system",
    "platform_version", "platform_machine", "platform_python_implementation", "implementation_name",
    "implementation_version", "extra",
})
# Those packaging compares as versions, through a specifier: the only ones ~= and === apply to.
_VERSION_VARIABLES = frozenset({"python_version", "python_full_version", "platform_release", "implementation_version"})


def _marker_problem(items: Any) -> str | None:
    """A comparison of a parsed marker that raises when evaluated, with why
    (walks ``Marker._markers`` as sync.py does: packaging has no public
    view). packaging looks up every variable a comparison names, so each
    must be one of package metadata, and one side must be a variable; it
    compares with ~= and === only through a specifier built from the value,
    so the variable must be a version one, on the left, and the value a
    version."""
    if isinstance(items, list):
        for item in items:
            problem = _marker_problem(item)
            if problem is not None:
                return problem
        return None
    if not isinstance(items, tuple) or len(items) != 3:
        return None
    left, op, right = items
    operator = getattr(op, "value", None)
    variables = [side.value for side in (left, right) if _is_variable(side)]
    why = _comparison_problem(left, operator, right, variables)
    if why is None:
        return None
    shown = f"{_shown(left)} {operator} {_shown(right)}"
    return one_line(f"marker: {shown}: {why}", 300)


def _comparison_problem(left: Any, operator: Any, right: Any, variables: list[Any]) -> str | None:
    if not variables:
        return "it compares two strings (one side must be a marker variable)"
    for name in variables:
        if name not in _METADATA_VARIABLES:
            return f"{name} is not a variable of package metadata's markers"
    if operator in _PLAIN_OPERATORS:
        return None
    value = getattr(right, "value", None)
    if not _is_variable(left) or _is_variable(right) or not isinstance(value, str):
        return "write the variable on the left"
    if left.value not in _VERSION_VARIABLES:
        return f"{operator} compares versions, and {left.value} is not one"
    try:
        Specifier(f"{operator}{value}")
    except InvalidSpecifier:
        return f"{operator + value!r} is not a version specifier"
    return None


def _is_variable(node: Any) -> bool:
    return type(node).__name__ == "Variable"


def _shown(node: Any) -> str:
    """A side of a comparison as a message shows it: a variable bare, a string quoted."""
    value = getattr(node, "value", node)
    return str(value) if _is_variable(node) else repr(value)


def long_number(text: str) -> str | None:
    """A number packaging would fail to compare (see `_schema.MAX_DIGITS`)."""
    return f"a number of more than {MAX_DIGITS} digits" if has_long_number(text) else None
