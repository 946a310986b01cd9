"""compat: check AI-inference deployment stacks before you upgrade.

>>> import compat
>>> report = compat.check({"system": {"python": "3.12"}, "hardware": {"gpu": "H200"}, "packages": {"vllm": "0.32.0"}})
>>> report.ok
True

The names below are imported on first use, so that ``import compat`` (and
the command line, which needs only some of them) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "check": "compat.api",
    "matrix": "compat.api",
    "Matrix": "compat.engine.matrix",
    "upgrade": "compat.api",
    "diff": "compat.api",
    "outdated": "compat.api",
    "resolve": "compat.api",
    "Resolved": "compat.api",
    "why": "compat.api",
    "WhyReport": "compat.engine.why",
    "loads_stack": "compat.knowledge.binding",
    "Plan": "compat.engine.plan",
    "OutdatedReport": "compat.engine.plan",
    "load_stack": "compat.knowledge.binding",
    "Stack": "compat.stack",
    "load_inputs": "compat.knowledge.inputs",
    "Inputs": "compat.knowledge.inputs",
    "Database": "compat.knowledge.database",
    "Report": "compat.engine.findings",
    "Finding": "compat.engine.findings",
    "CompatError": "compat.errors",
    "StackError": "compat.errors",
    "DatabaseError": "compat.errors",
    "ResolutionTooComplex": "compat.errors",
    "PackageIndexError": "compat.errors",
}

__all__ = [
    "check",
    "matrix",
    "Matrix",
    "upgrade",
    "diff",
    "outdated",
    "resolve",
    "Resolved",
    "why",
    "WhyReport",
    "loads_stack",
    "Plan",
    "OutdatedReport",
    "load_stack",
    "Stack",
    "load_inputs",
    "Inputs",
    "Database",
    "Report",
    "Finding",
    "CompatError",
    "StackError",
    "DatabaseError",
    "ResolutionTooComplex",
    "PackageIndexError",
    "__version__",
]

if TYPE_CHECKING:
    from .api import check, matrix
    from .engine.matrix import Matrix
    from .api import diff, outdated, upgrade
    from .api import Resolved, resolve, why
    from .engine.why import WhyReport
    from .engine.plan import OutdatedReport, Plan
    from .engine.findings import Finding, Report
    from .errors import CompatError, DatabaseError, PackageIndexError, ResolutionTooComplex, StackError
    from .knowledge.database import Database
    from .knowledge.inputs import Inputs, load_inputs
    from .knowledge.binding import load_stack, loads_stack
    from .stack import Stack


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'compat' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
