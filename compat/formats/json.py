"""The JSON report: one object, as the stack.toml contract specifies."""

from __future__ import annotations

import json as _json

from ..engine.findings import Report


def render(report: Report) -> str:
    return _json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n"
