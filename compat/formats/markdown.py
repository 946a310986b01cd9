"""Plans and outdated reports as GitHub-flavoured Markdown, for a
pull-request comment: a summary line, the change table, then one folded
``<details>`` section for each kind of note.

Every text from a stack or the database goes through `markdown_report`'s
`escape` and `code`, so a specifier such as ``<5.20.0`` shows as written and
a ``|`` cannot break the table.
"""

from __future__ import annotations

from ..engine.plan import CATEGORIES, Crossing, OutdatedReport, Plan
from ._shared import code, escape, outdated_rows, table_rows, title

__all__ = ["render_plan", "render_outdated"]


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    lines.extend("| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows)
    return lines


def _details(summary: str, body: list[str]) -> list[str]:
    """A folded section; the blank lines let GitHub render the Markdown inside it."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def _crossing(crossing: Crossing) -> str:
    line = f"- **{escape(crossing.component)} {escape(str(crossing.old))} → {escape(str(crossing.new))}**: "
    line += escape(crossing.message)
    line += f"<br>{code(crossing.id)} · when: {escape(crossing.conditions)} · releases: {escape(crossing.releases)}"
    if crossing.source is not None:
        line += f" · source: {escape(crossing.source.cite())}"
    if crossing.basis is not None:
        line += f"<br>*inferred, not stated by the source: {escape(crossing.basis)}*"
    return line


def render_plan(plan: Plan) -> str:
    verdict = "✅" if plan.ok else "❌"
    lines = [f"### {verdict} compat {escape(title(plan))}", "", f"**{escape(plan.summary())}**", ""]
    if plan.reason is None:
        if plan.moves:
            lines += [*_table(("component", "from", "to", "why"), table_rows(plan)), ""]
        if plan.optional:
            lines += _details(f"Not required ({len(plan.optional)}): newer releases of dependencies that an upgrade "
                              f"of everything would also take",
                              _table(("component", "from", "to", "why"), table_rows(plan, optional=True)))
        for category, group in plan.by_category():
            lines += _details(f"{escape(CATEGORIES[category])} ({len(group)})", [_crossing(c) for c in group])
        if plan.undecided:
            body = [f"- {escape(c.component)} {code(c.id)}: {escape(c.message)}<br>needs to know: "
                    f"{escape(c.unknown or '')}" for c in plan.undecided]
            lines += _details(f"Undecided: the stack does not say enough ({len(plan.undecided)})", body)
    problems = plan.problems()
    if problems:
        body = [f"- **{f.severity}** {escape(f.message)}<br>{code(f.id)}"
                + (f" · source: {escape(f.source.cite())}" if f.source is not None else "") for f in problems]
        heading = "The check with the targets alone" if plan.reason is not None else "The new stack's errors and warnings"
        lines += _details(f"{heading} ({len(problems)})", body)
    suggestions = plan.report.suggestions if plan.report is not None else []
    if suggestions:
        body = [f"- {escape(s.text())}" for s in suggestions]
        lines += _details(f"Smallest changes that work, each verified by a full check ({len(suggestions)})", body)
    return "\n".join(lines).rstrip("\n") + "\n"


def render_outdated(report: OutdatedReport) -> str:
    stack = report.stack
    moves = sum(1 for e in report.entries if e.status in ("can move", "partly blocked"))
    lines = [f"### compat outdated: {code(stack.path or '<stack>')}", "",
             f"**{moves} of {len(report.entries)} package(s) can move to a newer release without breaking the rest**",
             "", *_table(("package", "current", "fits", "newest", "blocked by"), outdated_rows(report))]
    return "\n".join(lines) + "\n"
