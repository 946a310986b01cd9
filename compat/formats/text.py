"""The report for people: grouped by severity, coloured only when asked."""

from __future__ import annotations

from collections.abc import Callable

from ..engine.findings import Finding, Report, at_least

_HEADINGS = (("error", "Errors", "red"), ("warning", "Warnings", "yellow"), ("info", "Notes", "cyan"))


def _plain(text: str, **_: object) -> str:
    return text


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


def header(report: Report, style: Callable[..., str] = _plain) -> list[str]:
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


def verdict(report: Report, style: Callable[..., str] = _plain, hidden: int = 0) -> str:
    """``OK: 0 error(s), …`` or ``FAIL: …``, with the number of findings left out of the display."""
    counts = f"{len(report.errors)} error(s), {len(report.warnings)} warning(s), {len(report.infos)} note(s)"
    if report.ok:
        word = style("OK", fg="green", bold=True)
    else:
        why = " (warnings fail under --strict)" if not report.errors else ""
        word = style("FAIL", fg="red", bold=True) + why
    return f"{word}: {counts}" + (f" ({hidden} not shown)" if hidden else "")


def _finding(finding: Finding, style: Callable[..., str], colour: str) -> list[str]:
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
