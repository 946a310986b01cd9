"""Findings and the report that carries them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ..knowledge.model import Source
    from ..sources.stack import Stack

__all__ = ["Finding", "Report", "SEVERITY_ORDER"]

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


class Finding(NamedTuple):
    """One thing a check found about a stack.

    `id` is stable: the same fact about the same stack gives the same ID, so
    it can be listed in ``[compat] ignore``. `layer` says where the fact came
    from: ``metadata`` (the release's own Requires-Dist / Requires-Python),
    ``curated`` (a rule of the database), or ``stack`` (the stack file itself).
    """

    id: str
    severity: str
    message: str
    components: tuple[str, ...]
    kind: str
    layer: str
    source: Source | None = None
    suppressed: bool = False
    details: dict[str, Any] | None = None
    basis: str | None = None  # set when the fact is inferred, not stated by its source: what it rests on

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "severity": self.severity,
            "message": self.message,
            "components": list(self.components),
            "source": self.source.cite() if self.source else None,
            "kind": self.kind,
            "layer": self.layer,
            "suppressed": self.suppressed,
            "inferred": self.basis is not None,
        }
        if self.basis is not None:
            data["basis"] = self.basis
        if self.source is not None:
            data["source_detail"] = self.source.to_dict()
        if self.details:
            data["details"] = self.details
        return data


@dataclass
class Report:
    """The result of checking one stack."""

    stack: Stack
    findings: list[Finding]
    packages: dict[str, str]
    resolved: dict[str, str] = field(default_factory=dict)
    strict: bool = False
    resolution_ok: bool = True
    explanation: Any = None  # an explain.Derivation when the stack cannot be resolved
    suggestions: list[Any] = field(default_factory=list)  # suggest.Suggestion, smallest first

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if not f.suppressed]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.active if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.active if f.severity == "warning"]

    @property
    def infos(self) -> list[Finding]:
        return [f for f in self.active if f.severity == "info"]

    @property
    def ok(self) -> bool:
        """No error-level finding (and, under strict, no warning either)."""
        return not self.errors and not (self.strict and self.warnings)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def suppress(self, patterns: tuple[str, ...] | list[str]) -> None:
        """Mark findings whose ID matches one of `patterns` (shell-style) as suppressed."""
        if not patterns:
            return
        import fnmatch  # only when something is ignored

        self.findings = [
            f._replace(suppressed=True) if any(fnmatch.fnmatchcase(f.id, p) for p in patterns) else f
            for f in self.findings
        ]

    def to_dict(self) -> dict[str, Any]:
        stack = self.stack
        return {
            "schema": 1,
            "ok": self.ok,
            "strict": self.strict,
            "stack": {
                "name": stack.name,
                "path": stack.path,
                "python": str(stack.system.python),
                "platform": stack.system.platform,
                "cuda": str(stack.system.cuda) if stack.system.cuda else None,
                "driver": stack.system.driver_written,
                "gpu": stack.hardware.gpu.name if stack.hardware.gpu else None,
                "compute_capability": (
                    str(stack.hardware.compute_capability) if stack.hardware.compute_capability else None
                ),
                "accelerator": stack.hardware.accelerator,
                "packages": dict(self.packages),
                "resolved": dict(self.resolved),
            },
            "summary": {
                "errors": len(self.errors),
                "warnings": len(self.warnings),
                "infos": len(self.infos),
                "suppressed": sum(1 for f in self.findings if f.suppressed),
            },
            "findings": [f.to_dict() for f in self.findings],
            "explanation": self.explanation.to_dict() if self.explanation is not None else None,
            "suggestions": [s.to_dict() for s in self.suggestions],
        }
