"""Plans (`compat upgrade`, `compat diff`) and outdated reports, as text and JSON."""

from __future__ import annotations

import json as _json
from collections.abc import Callable, Sequence

from ..engine.plan import CATEGORIES, Crossing, OutdatedReport, Plan
from ._shared import finding_lines as _finding, header, outdated_rows, plain as _plain, table_rows, title, verdict

__all__ = ["render_text", "render_json", "render_outdated_text", "render_outdated_json"]


def crossing_meta(crossing: Crossing) -> str:
    """``[id] when: … · source: …`` for one crossing."""
    meta = f"[{crossing.id}] when: {crossing.conditions} · releases: {crossing.releases}"
    if crossing.source is not None:
        meta += f" · source: {crossing.source.cite()}"
    return meta


def _columns(rows: Sequence[tuple[str, ...]], indent: str = "  ") -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1]
            for row in rows]


def render_text(plan: Plan, *, color: bool = False) -> str:
    if color:
        import click

        style: Callable[..., str] = click.style
    else:
        style = _plain
    lines = [style(f"compat {title(plan)}", bold=True)]
    if plan.old_report is not None:
        lines.extend(header(plan.old_report)[1:2])
    if plan.reason is not None:
        lines += ["", style("No plan", fg="red", bold=True), f"  {plan.reason}"]
        if plan.report is not None:
            lines += ["", style("The check with the targets alone", bold=True), *_problems(plan, style)]
        return "\n".join(lines) + "\n"
    outside = f"; {len(plan.outside_pip)} outside pip" if plan.outside_pip else ""
    lines += ["", style(f"Changes ({len(plan.moves)}{outside})", bold=True)]
    if plan.moves:
        lines.extend(_columns([("component", "from", "to", "why"), *table_rows(plan)]))
    else:
        lines.append("  none: the stack already is at its target")
    if plan.optional:
        lines += ["", style(f"Not required ({len(plan.optional)}): newer releases of dependencies that an "
                            f"upgrade of everything would also take", bold=True)]
        lines.extend(_columns([("component", "from", "to", "why"), *table_rows(plan, optional=True)]))
    for category, group in plan.by_category():
        lines += ["", style(f"{CATEGORIES[category]} ({len(group)})", bold=True)]
        for crossing in group:
            lines.extend(_crossing(crossing, style))
    if plan.undecided:
        lines += ["", style(f"Undecided: the stack does not say enough ({len(plan.undecided)})", bold=True)]
        for crossing in plan.undecided:
            lines.append(f"  - {crossing.component} {crossing.old} -> {crossing.new}: {crossing.message}")
            lines.append("    " + style(f"[{crossing.id}] needs to know: {crossing.unknown}", dim=True))
    problems = _problems(plan, style)
    if problems:
        lines += ["", style("The new stack's errors and warnings", bold=True), *problems]
    lines += ["", f"{style('PLAN', fg='green' if plan.ok else 'red', bold=True)}: {plan.summary()}"]
    return "\n".join(lines) + "\n"


def _crossing(crossing: Crossing, style: Callable[..., str]) -> list[str]:
    out = [f"  - {crossing.component} {crossing.old} -> {crossing.new}: {crossing.message}",
           "    " + style(crossing_meta(crossing), dim=True)]
    if crossing.basis is not None:
        out.append("    " + style(f"inferred, not stated by the source: {crossing.basis}", dim=True))
    return out


def _problems(plan: Plan, style: Callable[..., str]) -> list[str]:
    lines = []
    for finding in plan.problems():
        lines.extend(_finding(finding, style, "red" if finding.severity == "error" else "yellow"))
    report = plan.report
    if report is not None and report.suggestions:
        lines.append("  Smallest changes that work (each verified by a full check)")
        lines.extend(f"    - {suggestion.text()}" for suggestion in report.suggestions)
    if report is not None and lines:
        lines.append("  " + verdict(report, style))
    return lines


def render_json(plan: Plan) -> str:
    return _json.dumps(plan.to_dict(), indent=2) + "\n"


# -- outdated ------------------------------------------------------------------------------------

def render_outdated_text(report: OutdatedReport) -> str:
    lines = header(report.report)[:2]
    lines += ["", *_columns([("package", "current", "fits", "newest", "blocked by"), *outdated_rows(report)])]
    if not report.report.ok:
        lines += ["", "the stack fails compat check as it is: no move can pass until that is fixed"]
    return "\n".join(lines) + "\n"


def render_outdated_json(report: OutdatedReport) -> str:
    return _json.dumps(report.to_dict(), indent=2) + "\n"
