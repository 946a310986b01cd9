"""The check report as GitHub-flavoured Markdown: for a pull-request comment
or a job summary (``compat check stack.toml --format markdown >>
"$GITHUB_STEP_SUMMARY"``).

Every text that comes from a stack or the database is escaped, so that a
message such as ``requires transformers>=5.16.1,<5.20.0`` shows as written
and a ``|`` cannot break a table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..engine.findings import Finding, Report, at_least
from ..errors import CompatError
from ._shared import code, escape, header, verdict

if TYPE_CHECKING:
    from ..knowledge.model import Source

__all__ = ["render", "render_error"]

_HEADINGS = (("error", "Errors"), ("warning", "Warnings"), ("info", "Notes"))
def _source(finding: Finding) -> str:
    if finding.source is None:
        return ""
    return "<br>and ".join(_cite(source) for source in (finding.source, *finding.also))


def _cite(source: Source) -> str:
    cite = escape(source.cite())
    return f"[{cite}](<{source.url}>)" if source.url and not set(source.url) & set("<>\n ") else cite


def _row(report: Report, finding: Finding) -> str:
    where = report.location(finding)
    place = code(f"{where.file}:{where.line}" if where.file and where.line else (where.file or "<stack>"))
    message = escape(finding.message)
    if finding.basis is not None:
        message += f"<br>*inferred, not stated by the source: {escape(finding.basis)}*"
    return f"| {message}<br>{code(finding.id)} | {place} {code(where.key_text)} | {_source(finding)} |"


def _machine(report: Report) -> list[str]:
    """The stack's machine and packages, as the text report's header says them."""
    return [escape(line.strip()) for line in header(report)[1:]]


def _one(report: Report, quiet: bool, min_severity: str) -> list[str]:
    stack = report.stack
    shown = at_least(report.active, report.failing if quiet else min_severity)
    title = code(stack.path or "<stack>") + (f" ({escape(stack.name)})" if stack.name else "")
    lines = [f"### compat: {'OK' if report.ok else 'FAIL'}: {title}", ""]
    if not quiet:
        lines += ["  \n".join(_machine(report)), ""]
    lines += [f"**{escape(verdict(report, hidden=len(report.active) - len(shown)))}**", ""]
    for severity, heading in _HEADINGS:
        group = [f for f in shown if f.severity == severity]
        if not group:
            continue
        lines += [f"#### {heading} ({len(group)})", "", "| Finding | Where | Source |", "| --- | --- | --- |"]
        lines += [_row(report, finding) for finding in group]
        lines.append("")
    if quiet:
        return lines
    if report.explanation is not None:
        lines += ["#### Why it cannot be resolved", ""]
        lines += [escape(line.strip()) + "  " for line in report.explanation.text().splitlines()]
        lines.append("")
    if report.suggestions:
        lines += ["#### Smallest changes that work (each verified by a full check)", ""]
        lines += [f"- {escape(suggestion.text())}" for suggestion in report.suggestions]
        lines.append("")
    suppressed = [f for f in report.findings if f.suppressed]
    if suppressed:
        lines += [f"Suppressed ({len(suppressed)}): " + ", ".join(code(f.id) for f in suppressed), ""]
    return lines


def render(reports: Report | Iterable[Report], *, quiet: bool = False, min_severity: str = "info") -> str:
    """Each stack's verdict, machine, findings (a table per severity, each
    finding with its ID, the file and line of the key it concerns, and its
    source), and, when it fails, why and the smallest changes that work.
    `quiet` keeps the verdict and the errors alone."""
    lines: list[str] = []
    for report in [reports] if isinstance(reports, Report) else reports:
        lines += _one(report, quiet, min_severity)
    return "\n".join(lines).rstrip("\n") + "\n"


def render_error(error: CompatError) -> str:
    """The input error (exit 2), for a job summary that would otherwise stay empty."""
    where = code(error.file + (f":{error.line}" if error.line else "")) + ": " if error.file else ""
    key = f"{code(error.key)}: " if error.key else ""
    return f"### compat: input error\n\n{where}{key}{escape(error.message)}\n"
