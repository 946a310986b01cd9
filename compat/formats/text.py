"""The report for people: grouped by severity, coloured only when asked."""

from __future__ import annotations

from collections.abc import Callable

from ..engine.findings import Report, at_least
from ._shared import finding_lines as _finding, header, plain as _plain, verdict

_HEADINGS = (("error", "Errors", "red"), ("warning", "Warnings", "yellow"), ("info", "Notes", "cyan"))


def render(report: Report, *, color: bool = False, verbose: bool = False, quiet: bool = False,
           min_severity: str = "info") -> str:
    """Render the report; `color` adds ANSI styles (the CLI decides when).

    `min_severity` leaves out the findings below it; `quiet` shows what
    fails the stack (its errors; under strict, its warnings too) and the
    verdict alone (for a hook or a CI log that only needs to know what
    broke). Neither changes the verdict.
    """
    if color:
        import click

        style: Callable[..., str] = click.style
    else:
        style = _plain
    if quiet:
        min_severity = report.failing
    shown = {f.id for f in at_least(report.active, min_severity)}
    lines = [] if quiet else header(report, style)
    for severity, heading, colour in _HEADINGS:
        group = [f for f in report.findings if f.severity == severity and f.id in shown]
        if not group:
            continue
        if lines:
            lines.append("")
        lines.append(style(f"{heading} ({len(group)})", fg=colour, bold=True))
        for finding in group:
            lines.extend(_finding(finding, style, colour))
    if not quiet:
        lines.extend(_explanation(report, style))
    if lines:
        lines.append("")
    lines.append(verdict(report, style, hidden=len(report.active) - len(shown)))
    return "\n".join(lines) + "\n"


def _explanation(report: Report, style: Callable[..., str]) -> list[str]:
    """Why the stack cannot be resolved, the changes that work, what was suppressed."""
    lines: list[str] = []
    if report.explanation is not None:
        lines.append("")
        lines.append(style("Why it cannot be resolved", bold=True))
        lines.extend("  " + line for line in report.explanation.text().splitlines())
    if report.suggestions:
        lines.append("")
        lines.append(style("Smallest changes that work (each verified by a full check)", bold=True))
        lines.extend(f"  - {suggestion.text()}" for suggestion in report.suggestions)
    suppressed = [f for f in report.findings if f.suppressed]
    if suppressed:
        lines.append("")
        lines.append(style(f"Suppressed ({len(suppressed)}): " + ", ".join(f.id for f in suppressed), dim=True))
    return lines
