"""GitHub Actions workflow commands: each finding an annotation on its line
of the stack file (``::error file=stack.toml,line=14,title=…::message``).

GitHub reads a workflow command from a line of the job's log. Its values
are escaped as the Actions toolkit escapes them (``@actions/core``,
``command.ts``): in the message ``%``, CR and LF; in a property (file,
title) also ``:`` and ``,``, which would otherwise end the property.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..engine.findings import Finding, Report, at_least
from ..errors import CompatError
from ._shared import verdict

__all__ = ["render", "render_error", "annotation", "escape_data", "escape_property"]

# compat's severities as GitHub's annotation levels.
LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """A command's message: ``%``, CR and LF escaped.

    >>> escape_data("100%\\nsure")
    '100%25%0Asure'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: the message's escapes, and ``:`` and ``,``.

    >>> escape_property("requires:vllm==0.32.0:a,b")
    'requires%3Avllm==0.32.0%3Aa%2Cb'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, *, file: str | None = None, line: int | None = None,
               column: int | None = None, title: str | None = None) -> str:
    """One workflow command, ``::level file=…,line=…,col=…,title=…::message``.

    >>> annotation("error", "bad: value", file="a,b.toml", line=3, title="x:y")
    '::error file=a%2Cb.toml,line=3,title=x%3Ay::bad: value'
    """
    properties = [f"{name}={escape_property(str(value))}"
                  for name, value in (("file", file), ("line", line), ("col", column), ("title", title))
                  if value is not None]
    return f"::{level}{' ' + ','.join(properties) if properties else ''}::{escape_data(message)}"


def _message(finding: Finding) -> str:
    """The finding's message, with its source (and what an inference rests on) on lines of their own."""
    lines = [finding.message]
    if finding.source is not None:
        lines.append(f"source: {finding.source.cite()}" + (f" <{finding.source.url}>" if finding.source.url else ""))
    for also in finding.also:
        lines.append(f"and: {also.cite()}" + (f" <{also.url}>" if also.url else ""))
    if finding.basis is not None:
        lines.append(f"inferred, not stated by the source: {finding.basis}")
    return "\n".join(lines)


def render(reports: Report | Iterable[Report], *, min_severity: str = "info") -> str:
    """An annotation for each finding of `min_severity` or worse (suppressed
    ones are left out), then each stack's verdict as a plain log line."""
    out: list[str] = []
    for report in [reports] if isinstance(reports, Report) else reports:
        shown = at_least(report.active, min_severity)
        for finding in shown:
            where = report.location(finding)
            line = (where.line or 1) if where.file else None
            out.append(annotation(LEVELS[finding.severity], _message(finding), file=where.file, line=line,
                                  title=finding.id))
        name = escape_data(report.stack.path or "<stack>")  # a newline in a path must not start a command line
        out.append(f"compat: {name}: {verdict(report, hidden=len(report.active) - len(shown))}")
    return "\n".join(out) + "\n"


def render_error(error: CompatError) -> str:
    """The input error as an annotation on the line it names (exit 2)."""
    file = error.file if error.file and not error.file.startswith("<") else None
    message = f"{error.key}: {error.message}" if error.key else error.message
    return annotation("error", message, file=file, line=error.line if file else None,
                      column=error.column if file else None, title="compat: input error") + "\n"
