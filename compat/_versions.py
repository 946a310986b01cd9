"""Showing version bounds the way people write them."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet

_ORDER = {"===": 0, "==": 0, "~=": 0, ">": 1, ">=": 1, "!=": 2, "<=": 3, "<": 3}


def spec_text(spec: SpecifierSet | None) -> str:
    """A specifier set with lower bounds first.

    >>> spec_text(SpecifierSet("<5.20.0,>=5.16.1"))
    '>=5.16.1,<5.20.0'
    """
    if spec is None or not str(spec):
        return ""
    return ",".join(str(s) for s in sorted(spec, key=lambda s: (_ORDER.get(s.operator, 9), s.version)))


def overlap(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether some version (released or not) satisfies both sets, by
    packaging's range algebra.

    >>> overlap(SpecifierSet("==2.13.0"), SpecifierSet("==2.14.1"))
    False
    >>> overlap(SpecifierSet(">=5.16"), SpecifierSet("<5.20"))
    True
    """
    return not a.to_range().intersection(b.to_range()).is_empty
