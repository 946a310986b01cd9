"""Versions as compat reads them, and version bounds shown the way people write them."""

from __future__ import annotations

import functools

from packaging.specifiers import SpecifierSet
from packaging.version import Version

@functools.lru_cache(maxsize=65536)
def parse_version(text: str) -> Version:
    """Version(text), made once per process for each text: the snapshots of
    one check list the same versions (1.0.0, 2.1.0) package after package.
    A ValueError (InvalidVersion) when it is not one."""
    return Version(text)


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
    if any(a.contains(v, prereleases=True) and b.contains(v, prereleases=True) for v in _witnesses(a, b)):
        return True
    return not a.to_range().intersection(b.to_range()).is_empty


def admits_some(spec: SpecifierSet) -> bool:
    """Whether some version (released or not) satisfies `spec`.

    >>> admits_some(SpecifierSet(">=5.16,<5.21")), admits_some(SpecifierSet(">5.16,<5.16.1"))
    (True, True)
    >>> admits_some(SpecifierSet(">=2.0,<1.0")), admits_some(SpecifierSet("==1.0,!=1.0"))
    (False, False)
    """
    if any(spec.contains(v, prereleases=True) for v in _witnesses(spec)):
        return True
    return not spec.to_range().is_empty


def _witnesses(*specs: SpecifierSet) -> list[Version]:
    """The versions the specifiers name: one of them satisfies most sets that
    are not empty, which then need not import packaging.ranges (the public
    range algebra, which `to_range` imports on first use: about a
    millisecond that a check otherwise never spends)."""
    out = []
    for spec in specs:
        for one in spec:
            if not one.version.endswith(".*"):
                try:
                    out.append(Version(one.version))
                except ValueError:  # an arbitrary (===) string, or a number past int()'s digit limit
                    pass
    return out
