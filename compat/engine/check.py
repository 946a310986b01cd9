"""`check`: a stack's verdict, as `compat check` and `compat.check` give it.

The findings are judged in judge.py. A stack that fails also gets, here,
why it cannot be resolved (explain.py, when the resolution fails) and the
smallest changes that make it work (suggest.py, whose search judges each
candidate stack in judge.py): the composition sits above the three, so
none of them calls back up into it.
"""

from __future__ import annotations

from ..knowledge.database import Database
from ..stack import Stack
from .findings import SEVERITY_ORDER, Report
from .judge import judge
from .resolver import DEFAULT_MAX_ROUNDS

__all__ = ["check_stack"]


def check_stack(
    stack: Stack,
    db: Database,
    *,
    strict: bool | None = None,
    ignore: tuple[str, ...] | list[str] = (),
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    suggest_fixes: bool = True,
    require_known: bool | None = None,
) -> Report:
    """Check `stack` against `db` and return the report (nothing is printed).

    When the stack fails, the report also explains why it cannot be resolved
    (if it cannot) and suggests the smallest changes that make it work.
    """
    judged = judge(stack, db, strict=strict, ignore=ignore, max_rounds=max_rounds, require_known=require_known)
    report, resolution, db = judged.report, judged.resolution, judged.db
    if report.errors and suggest_fixes:
        if not resolution.ok:
            from .explain import explain

            report.explanation = explain(stack, resolution, db)
            # what keeps the releases the conflict needs off this machine (a build without its GPU's kernels)
            report.explanation.facts.extend(f for f in judged.blocking if f not in report.explanation.facts)
        from .suggest import search

        outcome = search(stack, db, report.errors, ignore=ignore, warned=[f.id for f in report.warnings])
        report.suggestions = outcome.suggestions
        if outcome.unfixed is not None:  # nothing within the search's reach: say so, and why
            report.findings = sorted([*report.findings, outcome.unfixed],
                                     key=lambda f: (SEVERITY_ORDER[f.severity], f.id))
    return report
