"""What several output formats share: the report's header and verdict line
and a finding's lines (text, plans, Markdown and GitHub's annotations show
them alike), Markdown's escaping, and a plan's rows. Not a format: the
formats stay independent of each other (the import contract in
pyproject.toml), and each takes these from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.findings import Finding, Report
    from ..engine.plan import Move, OutdatedReport, Plan

__all__ = ["plain", "header", "verdict", "finding_lines", "escape", "code", "title", "move_why", "table_rows",
           "outdated_rows"]


# -- text ----------------------------------------------------------------------------------------

def plain(text: str, **_: object) -> str:
    return text


def header(report: Report, style: Callable[..., str] = plain) -> list[str]:
    """The stack's name, machine and packages."""
    stack = report.stack
    lines = []
    title = stack.path or "<stack>"
    if stack.name:
        title += f" ({stack.name})"
    lines.append(style(title, bold=True))
    system = stack.system
    machine = [f"Python {system.python}", system.platform]
    if system.glibc:
        machine.append(f"glibc {system.glibc}")
    if system.index != "pypi":
        machine.append(f"{system.index} builds")
    if system.cuda:
        machine.append(f"CUDA {system.cuda}")
    if system.rocm:
        machine.append(f"ROCm {system.rocm}")
    if system.driver:
        machine.append(f"driver {system.driver_written or system.driver}")
    hardware = stack.hardware
    if hardware.gpu is not None:
        gpu = hardware.gpu.name
        if hardware.gpu.sm:
            gpu += f" ({hardware.gpu.sm})"
        machine.append(f"{hardware.count}x {gpu}" if hardware.count > 1 else gpu)
    elif hardware.compute_capability is not None:
        machine.append(f"compute capability {hardware.compute_capability}")
    elif hardware.accelerator == "cpu":
        machine.append("CPU only")
    else:
        machine.append(f"{hardware.accelerator} (GPU not named)")
    lines.append("  " + " · ".join(machine))
    if report.packages:
        lines.append("  " + ", ".join(f"{n} {v}" for n, v in report.packages.items()))
    return lines


def verdict(report: Report, style: Callable[..., str] = plain, hidden: int = 0) -> str:
    """``OK: 0 error(s), …`` or ``FAIL: …``, with the number of findings left out of the display."""
    counts = f"{len(report.errors)} error(s), {len(report.warnings)} warning(s), {len(report.infos)} note(s)"
    if report.ok:
        word = style("OK", fg="green", bold=True)
    else:
        why = " (warnings fail under --strict)" if not report.errors else ""
        word = style("FAIL", fg="red", bold=True) + why
    return f"{word}: {counts}" + (f" ({hidden} not shown)" if hidden else "")


def finding_lines(finding: Finding, style: Callable[..., str], colour: str) -> list[str]:
    out = [f"  {style('-', fg=colour)} {finding.message}"]
    meta = f"[{finding.id}]"
    if finding.source is not None:
        meta += f" source: {finding.source.cite()}"
    for also in finding.also:
        meta += f"; and {also.cite()}"
    out.append("    " + style(meta, dim=True))
    if finding.basis is not None:
        out.append("    " + style(f"inferred, not stated by the source: {finding.basis}", dim=True))
    return out


# -- Markdown ------------------------------------------------------------------------------------

# CommonMark lets a backslash escape any ASCII punctuation; these are the
# characters that would otherwise start emphasis, code, links, HTML,
# strikethrough, entities or table cells inside a line.
_SPECIAL = "\\`*_[]<>|~&"


def escape(text: str) -> str:
    """`text` as Markdown shows it literally, on one line.

    >>> escape("requires a>=1,<2 | *b*")
    'requires a\\\\>=1,\\\\<2 \\\\| \\\\*b\\\\*'
    """
    text = "".join(f"\\{c}" if c in _SPECIAL else c for c in text)
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def code(text: str) -> str:
    """`text` as inline code (an ID, a path), safe inside a table cell.

    >>> code("requires:vllm==0.32.0"), code("a|b"), code("odd`name")
    ('`requires:vllm==0.32.0`', '`a\\\\|b`', 'odd\\\\`name')
    """
    if "`" in text or "\n" in text:
        return escape(text)
    return f"`{text.replace('|', chr(92) + '|')}`"


# -- plans -------------------------------------------------------------------------------------------

def title(plan: Plan) -> str:
    """``upgrade examples/a.toml to vllm==0.32.0`` or ``diff a.toml -> b.toml``."""
    old = plan.old.path or "<stack>"
    if plan.kind == "diff":
        return f"diff {old} -> {plan.new.path if plan.new is not None and plan.new.path else '<stack>'}"
    return f"upgrade {old} to {', '.join(plan.targets)}"


def move_why(move: Move) -> str:
    """The why column: a change pip cannot make says so first."""
    if move.by_pip:
        return move.why
    what = "not a pip change" if move.kind != "option" else "a flag of the deployment"
    return f"{what}: {move.why}" if move.why else what


def table_rows(plan: Plan, optional: bool = False) -> list[tuple[str, str, str, str]]:
    """(component, from, to, why) for each change (with `optional`, each
    change nothing requires); a dependency the stack does not name is
    marked as resolved."""
    rows = []
    for move in plan.optional if optional else plan.moves:
        name = f"{move.component} (resolved)" if move.kind == "resolved" else move.component
        rows.append((name, move.old or "(none)", move.new or "(none)", move_why(move)))
    return rows


def outdated_rows(report: OutdatedReport) -> list[tuple[str, str, str, str, str]]:
    """(package, current, fits, newest, what blocks the newest) for each package."""
    rows = []
    for entry in report.entries:
        blocked = entry.note or "; ".join(entry.blocked_by)
        rows.append((entry.name, entry.current, entry.fits or "-", entry.newest or "-", blocked))
    return rows
