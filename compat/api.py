"""The library's entry point: `compat.check`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .engine.check import check_stack
from .engine.findings import Report
from .engine.resolver import DEFAULT_MAX_ROUNDS
from .errors import CompatError
from .knowledge.database import Database
from .knowledge.layers import with_overlay
from .knowledge.binding import bind_platform, load_stack
from .sources.stack import check_ignore
from .stack import Stack

if TYPE_CHECKING:
    from .engine.why import WhyReport
    from .engine.matrix import Matrix
    from .engine.plan import OutdatedReport, Plan
    from .sources.axes import Axes

__all__ = ["check", "matrix", "upgrade", "diff", "outdated", "resolve", "Resolved", "why"]


def check(
    stack: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    *,
    database: Database | None = None,
    strict: bool | None = None,
    ignore: tuple[str, ...] | list[str] = (),
    require_known: bool | None = None,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    suggest: bool = True,
) -> Report:
    """Check a stack (a stack.toml path, a mapping of its tables, or a `Stack`).

    Returns a `Report`; raises a `CompatError` subclass for input that cannot
    be used (the command line's exit 2). `strict` makes warnings fail too;
    `ignore` suppresses findings by ID (shell-style patterns allowed; a
    string is one ID; a pattern of wildcards alone, which would suppress
    everything, is a `CompatError` with key ``ignore``);
    `require_known` makes a release the database does not hold an error;
    `max_rounds` is the resolver's budget. With `suggest=False` a failing
    stack's report has no explanation and no suggestions (the search for the
    smallest changes that work costs more than the check itself): for a
    script that wants the verdict and its findings alone. An argument of the
    wrong type is a `TypeError` (a `ValueError` for a `max_rounds` below 1).
    Without `database`, the bundled database is loaded once per process and
    reused while its files are unchanged (`Database.shared`).

    >>> report = check({"system": {"python": "3.12"}, "hardware": {"gpu": "H200"}, "packages": {"vllm": "0.32.0"}})
    >>> report.ok
    True
    """
    if not isinstance(stack, (str, os.PathLike, Mapping, Stack)):
        raise TypeError(f"compat.check: stack must be a path (str or os.PathLike), a mapping or a Stack, "
                        f"not {type(stack).__name__}")
    if database is not None and not isinstance(database, Database):
        raise TypeError(f"compat.check: database must be a Database or None, not {type(database).__name__}")
    for name, value in (("strict", strict), ("require_known", require_known)):
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"compat.check: {name} must be True, False or None, not {type(value).__name__}")
    if not isinstance(suggest, bool):
        raise TypeError(f"compat.check: suggest must be True or False, not {type(suggest).__name__}")
    if not isinstance(max_rounds, int) or isinstance(max_rounds, bool):
        raise TypeError(f"compat.check: max_rounds must be an int, not {type(max_rounds).__name__}")
    if max_rounds < 1:
        raise ValueError(f"compat.check: max_rounds must be 1 or more, not {max_rounds}")
    if not isinstance(ignore, (str, list, tuple)) or not all(isinstance(i, str) for i in ignore):
        raise TypeError("compat.check: ignore must be a finding ID or a list of them (strings)")
    ignore = check_ignore(ignore)
    db = database if database is not None else Database.shared()
    if isinstance(stack, Stack):
        bind_platform(stack, db)  # a Stack made in Python: its platform is the database's platform table's
    else:
        stack = load_stack(stack, db)
    report = check_stack(stack, db, strict=strict, ignore=ignore, require_known=require_known, max_rounds=max_rounds,
                         suggest_fixes=suggest)
    if stack.environment is None:
        return report
    from .engine.installed import with_installed  # a stack read with an installed environment (docs/inputs.md)

    return with_installed(report, ignore)


def matrix(
    axes: str | os.PathLike[str] | Mapping[str, Any] | Axes,
    *,
    database: Database | None = None,
    strength: int | None = None,
    seed: int = 0,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
) -> Matrix:
    """The compatible cells of an axes file (a path, a mapping of its tables, or `Axes`).

    A cell is compatible when its check has no error (docs/matrix.md).
    `strength` (2 for pairwise) keeps only the fewest compatible rows that
    cover every t-tuple of axis values some compatible row holds, chosen
    deterministically (`seed` varies the choice). `progress(done, cells)` is
    called as cells are decided. Bad axes raise a `CompatError` subclass,
    and so does a walk still running after `deadline` seconds (a matrix is
    all its cells or none).

    >>> m = matrix({"base": {"system": {"cuda": "13.0"}, "hardware": {"gpu": "H200"}},
    ...             "axes": {"python": ["3.10", "3.12"], "vllm": ["0.32.0"]}})
    >>> m.to_github()["include"][0]["python"], len(m.rows), m.excluded[0].finding.id
    ('3.12', 1, 'requires-python:vllm==0.32.0')
    """
    from .engine.matrix import build_matrix
    from .knowledge.axes import cell, load_axes
    from .sources.axes import Axes

    if not isinstance(axes, (str, os.PathLike, Mapping, Axes)):
        raise TypeError(f"compat.matrix: axes must be a path (str or os.PathLike), a mapping or Axes, "
                        f"not {type(axes).__name__}")
    if database is not None and not isinstance(database, Database):
        raise TypeError(f"compat.matrix: database must be a Database or None, not {type(database).__name__}")
    for name, value in (("seed", seed), ("max_rounds", max_rounds), ("strength", strength)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise TypeError(f"compat.matrix: {name} must be an int, not {type(value).__name__}")
    if max_rounds < 1:
        raise ValueError(f"compat.matrix: max_rounds must be 1 or more, not {max_rounds}")
    if deadline is not None and (not isinstance(deadline, (int, float)) or isinstance(deadline, bool)
                                 or not 0 < deadline < float("inf")):
        raise ValueError(f"compat.matrix: deadline must be a positive, finite number of seconds, not {deadline!r}")
    db = database if database is not None else Database.shared()
    loaded = axes if isinstance(axes, Axes) else load_axes(axes, db)
    if loaded.overlay is not None:  # [base.compat] overlay: laid once, for every cell
        db = with_overlay(db, loaded.overlay)
    if strength is not None and not 1 <= strength <= len(loaded.axes):
        raise ValueError(f"compat.matrix: strength must be between 1 and the number of axes ({len(loaded.axes)}), "
                         f"not {strength}")

    import time

    started = time.monotonic()

    def check_cell(choice: tuple[int, ...]) -> Report:
        if deadline is not None and time.monotonic() - started > deadline:
            raise CompatError(f"the matrix did not finish within {deadline:g} s (--deadline): narrow the axes "
                              "(fewer values, or ranges of fewer releases), or allow it more time")
        return check_stack(cell(loaded, choice, db), db, max_rounds=max_rounds, suggest_fixes=False)

    return build_matrix(loaded, check_cell, strength=strength, seed=seed, progress=progress)


def _stack_for(caller: str, stack: Any, database: Database | None, ignore: Any) -> tuple[Database, Stack, tuple[str, ...]]:
    """The database with the stack's own overlay over it, the loaded stack and
    the ignore patterns of `upgrade`, `diff`, `outdated`, `resolve` and `why`
    (the command line's too: each command path lays the overlay here once)."""
    if not isinstance(stack, (str, os.PathLike, Mapping, Stack)):
        raise TypeError(f"compat.{caller}: a stack must be a path (str or os.PathLike), a mapping or a Stack, "
                        f"not {type(stack).__name__}")
    if database is not None and not isinstance(database, Database):
        raise TypeError(f"compat.{caller}: database must be a Database or None, not {type(database).__name__}")
    if not isinstance(ignore, (str, list, tuple)) or not all(isinstance(i, str) for i in ignore):
        raise TypeError(f"compat.{caller}: ignore must be a finding ID or a list of them (strings)")
    db = database if database is not None else Database.shared()
    loaded = stack if isinstance(stack, Stack) else load_stack(stack, db)
    if isinstance(stack, Stack):
        bind_platform(stack, db)
    if loaded.overlay is not None:  # [compat] overlay: every step reads the stack's own facts, not only its check
        db = with_overlay(db, loaded.overlay)
    return db, loaded, check_ignore(ignore)


def upgrade(
    stack: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    to: str | list[str] | tuple[str, ...],
    *,
    database: Database | None = None,
    ignore: tuple[str, ...] | list[str] = (),
) -> Plan:
    """Plan the upgrade of `stack` to the targets `to` (``"vllm==0.33.0"``,
    ``"transformers>=5.20"``, ``"vllm"`` for its newest release that can work;
    a string is one target): the fewest changes that reach them and pass a
    check, and what the move crosses that applies to this stack
    (docs/upgrade.md). A target compat cannot read is a `CompatError` with
    key ``--to``.

    >>> plan = upgrade({"system": {"python": "3.12", "cuda": "13.0"}, "hardware": {"gpu": "H200"},
    ...                 "packages": {"vllm": "0.32.0", "torch": "2.13.0"}}, to="vllm==0.33.0")
    >>> plan.ok, [(m.component, m.new) for m in plan.moves][:2]
    (True, [('vllm', '0.33.0'), ('torch', '2.14.0')])
    """
    from .engine.upgrade import parse_targets, upgrade as plan_upgrade

    if isinstance(to, str):
        to = (to,)
    if not isinstance(to, (list, tuple)) or not all(isinstance(t, str) for t in to):
        raise TypeError("compat.upgrade: to must be a target or a list of them (strings)")
    db, loaded, patterns = _stack_for("upgrade", stack, database, ignore)
    return plan_upgrade(loaded, db, parse_targets(to, loaded, db), ignore=patterns)


def diff(
    old: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    new: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    *,
    database: Database | None = None,
    ignore: tuple[str, ...] | list[str] = (),
) -> Plan:
    """What moves from stack `old` to stack `new` and what it changes for `new`
    (the report of `upgrade`, for two stack files)."""
    from .engine.upgrade import diff as plan_diff

    _, before, patterns = _stack_for("diff", old, database, ignore)
    db, after, _ = _stack_for("diff", new, database, ignore)  # what the move changes is told with the new stack's facts
    return plan_diff(before, after, db, ignore=patterns)


def outdated(
    stack: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    *,
    database: Database | None = None,
    ignore: tuple[str, ...] | list[str] = (),
) -> OutdatedReport:
    """For each package of `stack`: the newest release it could move to
    without breaking anything else, and the newest of all with what blocks it."""
    from .engine.upgrade import outdated as find_outdated

    db, loaded, patterns = _stack_for("outdated", stack, database, ignore)
    return find_outdated(loaded, db, ignore=patterns)


@dataclass
class Resolved:
    """`compat.resolve`'s answer: every package pinned, or, when no set of
    versions works, the check's report that says why and what would."""

    stack: Stack
    ok: bool
    packages: dict[str, str]  # the stack's own packages, in its order
    added: dict[str, str]  # the tracked packages they need, by name
    report: Report | None = None  # when not ok

    @property
    def pins(self) -> dict[str, str]:
        return {**self.packages, **self.added}

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, "ok": self.ok, "packages": dict(self.packages), "added": dict(self.added),
                "report": self.report.to_dict() if self.report is not None else None}


def resolve(
    stack: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    *,
    database: Database | None = None,
    pre: bool = False,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> Resolved:
    """Pin every package of `stack`, and the tracked packages they need, to
    the newest versions that work on its machine (`compat resolve`). `pre`
    allows pre-releases everywhere. When none work, `ok` is False and
    `report` is the check's report (why, and the smallest changes that work).

    >>> pins = resolve({"system": {"python": "3.12", "cuda": "13.0"}, "hardware": {"gpu": "H200"},
    ...                 "packages": {"vllm": "0.32.0", "transformers": ">=5.16,<5.21"}})
    >>> pins.ok, pins.packages
    (True, {'vllm': '0.32.0', 'transformers': '5.19.0'})
    """
    if not isinstance(pre, bool):
        raise TypeError(f"compat.resolve: pre must be True or False, not {type(pre).__name__}")
    if not isinstance(max_rounds, int) or isinstance(max_rounds, bool):
        raise TypeError(f"compat.resolve: max_rounds must be an int, not {type(max_rounds).__name__}")
    if max_rounds < 1:
        raise ValueError(f"compat.resolve: max_rounds must be 1 or more, not {max_rounds}")
    from .engine.resolver import resolve as run_resolve

    db, loaded, _ = _stack_for("resolve", stack, database, ())
    resolution = run_resolve(loaded, db, max_rounds=max_rounds, pre=pre, closure=True)
    if not resolution.ok:
        return Resolved(loaded, False, {}, {}, check_stack(loaded, db, max_rounds=max_rounds))
    chosen = {k: str(c.version) for k, c in sorted(resolution.versions.items())
              if not k.startswith("__") and c.version is not None}
    packages = {n: chosen[n] for n in loaded.packages if n in chosen}
    return Resolved(loaded, True, packages, {n: v for n, v in chosen.items() if n not in loaded.packages})


def why(
    name: str,
    stack: str | os.PathLike[str] | Mapping[str, Any] | Stack | None = None,
    *,
    database: Database | None = None,
) -> WhyReport:
    """Every constraint on `name` (a package, or ``python``, ``cuda``,
    ``driver``, ``rocm``, ``gpu``), and with `stack`, which bind it, the
    stack's own, and what stops each newer release it admits (`compat why`).
    A name the database does not know is a `CompatError`.

    >>> report = why("transformers", {"system": {"python": "3.12"}, "packages": {"vllm": "0.32.0"}})
    >>> report.chosen, report.stopped[0].errors[0][0]
    ('5.19.0', 'requires:vllm==0.32.0:transformers')
    """
    from ._names import normalize
    from .engine.why import constraints_on

    if not isinstance(name, str):
        raise TypeError(f"compat.why: name must be a str, not {type(name).__name__}")
    if stack is None:
        if database is not None and not isinstance(database, Database):
            raise TypeError(f"compat.why: database must be a Database or None, not {type(database).__name__}")
        return constraints_on(normalize(name), database if database is not None else Database.shared())
    db, loaded, _ = _stack_for("why", stack, database, ())
    return constraints_on(normalize(name), db, loaded)

