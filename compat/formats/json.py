"""The JSON report: one object, as the stack.toml contract specifies; and,
for input compat cannot use, one object that says why."""

from __future__ import annotations

import json as _json
from typing import Any

from ..engine.findings import SEVERITY_ORDER, Report
from ..errors import CompatError


def render(report: Report, *, min_severity: str = "info") -> str:
    """The report as JSON. `min_severity` leaves the findings below it out of
    ``findings`` (``summary`` still counts them all: it is the check's)."""
    data = report.to_dict()
    if min_severity != "info":
        floor = SEVERITY_ORDER[min_severity]
        data["findings"] = [f for f in data["findings"] if SEVERITY_ORDER[f["severity"]] <= floor]
    return _json.dumps(data, indent=2, sort_keys=False) + "\n"


def error_object(error: CompatError) -> dict[str, Any]:
    """What went wrong with the input, field by field (the exit-2 line, taken apart)."""
    return {
        "type": type(error).__name__,
        "message": error.message,
        "file": error.file,
        "key": error.key,
        "line": error.line,
        "column": error.column,
        "text": str(error),
    }


def render_error(error: CompatError) -> str:
    """``{"schema": 1, "error": {...}}``: a CI step that parses standard
    output gets an object on exit 2 too, never an empty stream.

    >>> _json.loads(render_error(CompatError("expected a string", file="s.toml", key="[system] python", line=3)))
    {'schema': 1, 'error': {'type': 'CompatError', 'message': 'expected a string', 'file': 's.toml', 'key': '[system] python', 'line': 3, 'column': None, 'text': 's.toml:3: [system] python: expected a string'}}
    """
    return _json.dumps({"schema": 1, "error": error_object(error)}, indent=2) + "\n"
