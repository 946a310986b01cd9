"""PEP 508 markers held to what evaluates on every machine: packaging
parses markers it then fails to evaluate (``extras``, a comparison of two
strings, ``~=`` on a variable that is not a version), and a check must
never meet one deep inside a resolution. The snapshot reader, the check's
parser of Requires-Dist lines (knowledge/requires.py) and the input readers
(sources/requirements.py) all hold markers to this.

A plain helper of every floor (docs/architecture.md): it imports none.
"""

from __future__ import annotations

from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, Specifier

from .errors import one_line

__all__ = ["comparison_problem", "marker_problem"]


def marker_problem(text: str) -> str | None:
    """Why the marker `text` cannot be evaluated on every machine, or None:
    it must parse as a requirement's marker does, and every comparison must
    be one packaging can make with package metadata's variables.

    >>> marker_problem("sys_platform == 'linux'") is None
    True
    >>> marker_problem("python_version ~= '3'")
    "marker: python_version ~= '3': '~=3' is not a version specifier"
    >>> marker_problem('"x" in extras')
    "marker: 'x' in extras: extras is not a variable of package metadata's markers"
    """
    try:
        requirement = Requirement(f"name; {text}")
        return comparison_problem(getattr(requirement.marker, "_markers", []))
    except InvalidRequirement as exc:
        return one_line(str(exc).split("\n", 1)[0], 300)
    except RecursionError:
        return "a marker nested too deeply"


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


def comparison_problem(items: Any) -> str | None:
    """A comparison of a parsed marker that raises when evaluated, with why
    (walks ``Marker._markers`` as sync.py does: packaging has no public
    view). packaging looks up every variable a comparison names, so each
    must be one of package metadata, and one side must be a variable; it
    compares with ~= and === only through a specifier built from the value,
    so the variable must be a version one, on the left, and the value a
    version."""
    if isinstance(items, list):
        for item in items:
            problem = comparison_problem(item)
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
