"""Findings and the report that carries them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .._record import Fields, Record

if TYPE_CHECKING:
    from ..knowledge.model import Source
    from ..stack import Stack

__all__ = ["Finding", "Report", "SEVERITY_ORDER", "FAMILIES", "Location", "family", "locate", "at_least"]

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

# What each family of finding IDs the engine makes means (the part of an ID
# before its first colon). A rule of the database is a family of its own: its
# ID has no colon, and its message and source say what it means.
FAMILIES = {
    "requires-python": "A release requires a Python version the stack does not run.",
    "requires": "A release requires a version of a package (or of CUDA, the driver or the GPU) that the stack does "
                "not have.",
    "extras": "A release needs an extra of a package that the stack installs without it.",
    "conflict": "Two packages require versions of a third that no release satisfies at once.",
    "unresolvable": "No set of versions satisfies every requirement of the stack.",
    "pre-release": "A package of the stack is a pre-release, not a final release.",
    "yanked": "A release was yanked from the package index.",
    "unknown-release": "The database holds no record of a release (or of its build): the checks that need it are "
                       "skipped.",
    "unknown-metadata": "The index does not state a release's requirements (an sdist with dynamic metadata): they "
                        "are not checked.",
    "missing": "A release does not exist on the package index, or only a release that does not exist meets a "
               "requirement.",
    "wheel": "A release has no wheel for the stack's Python, platform or glibc, and no sdist to build (or builds "
             "are forbidden: --only-binary).",
    "source-build": "A release has no wheel for the stack's Python, platform or glibc: pip and uv build its sdist, "
                    "which needs compilers (and the CUDA toolkit for CUDA code) on the machine, or, for a wheel_stub "
                    "sdist, a wheel on the other index it downloads from.",
    "sdist-build": "A release has no wheel for the stack's Python, platform or glibc, and pip cannot build its sdist: "
                   "no release on the index meets a requirement of its build system.",
    "glibc": "The wheels need a GNU C library at least as new as the one named; the stack does not give its glibc.",
    "build": "The database does not know the build (CUDA, ROCm or CPU variant) the stack installs.",
    "build-requires": "The requirements of the build the stack installs (another index's) are not all known: "
                      "what is not known is not checked.",
    "build-cuda": "The build a package installs targets another CUDA major version than the stack.",
    "build-platform": "The build a package installs has no wheels for the stack's platform.",
    "passed-over": "pip and uv would install a newer release that the stack's range admits, whose build cannot run "
                   "on the machine; the check judged the newest release that can.",
    "driver": "The NVIDIA driver is older than the CUDA version of the stack or of a build needs (or not given).",
    "arch": "The build a package installs carries no kernels for the GPU's architecture (compute capability).",
    "accelerator": "The build a package installs runs on another kind of device than the stack's GPU.",
    "gap": "A requirement names a release the database does not hold: it is not checked.",
    "untracked": "The database does not track a package: it is checked only against other packages' requirements.",
    "unknown-option": "The database knows no such option of the package: it is not checked.",
    "option-value": "An option's value is not one the package accepts.",
    "option-removed": "The release the stack installs does not have the option (removed, renamed, or added later).",
    "option-unknown": "The release's command line has no such option.",
    "model": "A property of the served model that rules test is unknown: the stack's [model] does not give it.",
    "platform": "The GPU goes only into hosts of another platform than the stack's (a Grace superchip or a Jetson "
                "module has an Arm CPU).",
    "parallel": "The engine's parallel sizes (tensor x pipeline x data parallel) need more GPUs than the stack has.",
    "suggestions": "No change within reach makes the stack work (the note says what was tried and why it failed).",
    "installed-missing": "An installed distribution requires a package that is not installed (as pip check says).",
    "installed-conflict": "An installed distribution requires another version of an installed package (as pip "
                          "check says).",
    "installed-extra": "An installed distribution requires an extra of a package whose extra's requirements are "
                       "not all installed.",
    "installed-python": "An installed distribution requires a Python version other than the environment's.",
    "installed-platform": "An installed distribution was built for another platform than the environment's.",
    "installed-metadata": "An installed distribution's metadata cannot be read or parsed.",
    "installed-duplicate": "Two installed copies of one distribution: the first on sys.path is the one imported.",
    "snapshot": "The newest package snapshot a check read is older than 30 days: releases and yanks since are "
                "unknown to it.",
}


# The kinds of finding whose warnings predict a failure (Finding.predicts_failure):
# a refusal (an inferred requirement, a build whose kernels are not expected to
# serve the GPU, an extra not installed). Not those that say a fact is unknown
# (unknown-release, unverified, untracked, unknown-option), a release's status
# (pre-release, yanked), the snapshot's age, or a known issue, which an upgrade
# plan lists among the rules it crosses.
FAILURE_KINDS = frozenset({"requirement", "conflict", "existence", "lockstep", "build", "platform",
                           "option-removed", "option-value", "parallel"})


def family(finding_id: str) -> str:
    """The family of a finding ID: the engine's prefix (``requires`` of
    ``requires:vllm==0.32.0:transformers``), or the whole ID of a rule of the
    database, which names one fact.

    >>> family("requires-python:vllm==0.32.0"), family("vllm.cors-default-restricted")
    ('requires-python', 'vllm.cors-default-restricted')
    """
    return finding_id.split(":", 1)[0]


def at_least(findings: Iterable[Finding], severity: str) -> list[Finding]:
    """The findings of `severity` or worse (``info`` keeps them all).

    >>> [f.id for f in at_least([Finding("a", "info", "", (), "", ""), Finding("b", "error", "", (), "", "")], "warning")]
    ['b']
    """
    floor = SEVERITY_ORDER[severity]
    return [f for f in findings if SEVERITY_ORDER[f.severity] <= floor]


class Finding(Record):
    """One thing a check found about a stack.

    `id` is stable: the same fact about the same stack gives the same ID, so
    it can be listed in ``[compat] ignore``. `layer` says where the fact came
    from: ``metadata`` (the release's own Requires-Dist / Requires-Python),
    ``curated`` (a rule of the database), ``local`` (a fact of the user's own
    overlay: knowledge/layers.py), or ``stack`` (the stack file itself).
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
    also: tuple[Source, ...] = ()  # further sources the fact rests on (the code that refuses: model.Rule.also)

    @property
    def predicts_failure(self) -> bool:
        """Whether the finding says the stack fails, not only that something
        is unknown or worth knowing: every error, and a warning of a kind
        that names a refusal (FAILURE_KINDS). A plan passes only without any."""
        return self.severity == "error" or (self.severity == "warning" and self.kind in FAILURE_KINDS)

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
        if self.also:
            data["also"] = [source.to_dict() for source in self.also]
        if self.details:
            data["details"] = self.details
        return data


_REPORT_FIELDS = ("stack", "findings", "packages", "resolved", "strict", "resolution_ok", "explanation", "suggestions")


class Report(Fields):
    """The result of checking one stack (`replace`, equality and repr: see `Fields`)."""

    _fields = _REPORT_FIELDS

    def __init__(
        self,
        stack: Stack,
        findings: list[Finding],
        packages: dict[str, str],
        resolved: dict[str, str] | None = None,
        strict: bool = False,
        resolution_ok: bool = True,
        explanation: Any = None,  # an explain.Derivation when the stack cannot be resolved
        suggestions: list[Any] | None = None,  # suggest.Suggestion, smallest first
    ) -> None:
        self.stack = stack
        self.findings = findings
        self.packages = packages
        self.resolved = {} if resolved is None else resolved
        self.strict = strict
        self.resolution_ok = resolution_ok
        self.explanation = explanation
        self.suggestions = [] if suggestions is None else suggestions

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

    @property
    def failing(self) -> str:
        """The lowest severity that fails the stack: what --quiet keeps."""
        return "warning" if self.strict else "error"

    def location(self, finding: Finding) -> Location:
        """Where `finding` points in the stack file (see `locate`)."""
        return locate(finding, self.stack, self._spelled)

    @cached_property
    def _spelled(self) -> Mapping[str, Any] | None:
        """The stack's tables as its file spells them (for `locate`), read once."""
        if self.stack.text is None:
            return None
        from .. import _toml
        from ..errors import CompatError

        try:
            return _toml.loads(self.stack.text, file=self.stack.path or "<stack>")
        except CompatError:  # pragma: no cover - the text was parsed once already
            return None

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
            "findings": [{**f.to_dict(), "location": self.location(f).to_dict()} for f in self.findings],
            "explanation": self.explanation.to_dict() if self.explanation is not None else None,
            "suggestions": [s.to_dict() for s in self.suggestions],
        }


class Location(Record):
    """Where a finding points in the stack file: the key it concerns, and its
    line, so that CI annotations (SARIF, GitHub) land on that line."""

    file: str | None
    table: tuple[str, ...]
    key: str | None
    line: int | None

    @property
    def key_text(self) -> str:
        """The key as errors show it: ``[packages] vllm``, ``[system]``."""
        head = f"[{'.'.join(self.table)}]"
        return f"{head} {self.key}" if self.key else head

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "key": self.key_text}


# The stack's virtual components (engine/facts.py's VIRTUAL_LABELS) and the keys that set them.
_VIRTUAL_KEYS = {"python": ("system", "python"), "cuda": ("system", "cuda"), "driver": ("system", "driver"),
                 "rocm": ("system", "rocm")}
_OPTION_FAMILIES = ("option-value", "option-removed", "option-unknown", "unknown-option")


def subject(finding: Finding, stack: Stack) -> tuple[tuple[str, ...], str | None]:
    """The table and key of the stack file that `finding` concerns.

    A finding about a package points at its entry in [packages] (the first of
    its components the stack lists: a requirement vLLM breaks points at
    vllm's pin); one about an option, at the option; one about the machine,
    at [system] or [hardware].
    """
    head, _, rest = finding.id.partition(":")
    if head in _OPTION_FAMILIES:
        package, _, option = rest.partition(":")
        return ("options", package), option or None
    if head == "model":
        return ("model",), "name" if stack.model.name else ("repo" if stack.model.repo else None)
    if head == "glibc":
        return ("system",), "glibc"
    if head == "driver" and (rest == "unknown" or rest.startswith("cuda-")):
        return ("system",), "driver"
    for component in finding.components:
        if component in stack.packages:
            return ("packages",), component
    for component in finding.components:
        if component in _VIRTUAL_KEYS:
            table, key = _VIRTUAL_KEYS[component]
            return (table,), key
        if component == "gpu":
            return ("hardware",), "gpu" if stack.hardware.gpu is not None else "compute_capability"
    return (("packages",) if stack.packages else ("system",)), None


def _fold(key: str) -> str:
    """How a key is matched against the file's spelling: ``Flash_Infer.Python``
    is ``flashinfer-python``, ``kv_cache_dtype`` is ``kv-cache-dtype``."""
    return "".join(c for c in key.lower() if c not in "-_.")


def _spell(data: Mapping[str, Any] | None, path: tuple[str, ...]) -> tuple[str, ...]:
    """`path` (normalized names) as the file wrote each part, as far as it can be followed."""
    spelled: list[str] = []
    node: Any = data
    for part in path:
        written = part
        if isinstance(node, Mapping):
            written = next((k for k in node if isinstance(k, str) and _fold(k) == _fold(part)), part)
            node = node.get(written)
        spelled.append(written)
    return tuple(spelled)


def locate(finding: Finding, stack: Stack, spelled: Mapping[str, Any] | None = None) -> Location:
    """The key `finding` concerns (`subject`) and its line in the stack's text.

    `spelled` is the parsed text (so that a key is found as the file wrote
    it). A key the file does not set points at its table's header, or at the
    table above it; a stack without text (a mapping) has no lines.
    """
    from .. import _toml

    table, key = subject(finding, stack)
    place = stack.places.get(key) if table == ("packages",) and key else None
    if place is not None:  # a package of a merged stack: the requirements, pyproject or lock line that gave it
        return Location(place.file, table, key, place.line)
    path = _spell(spelled, (*table, key) if key else table)
    line = None
    if stack.text is not None:
        line = _toml.locate(stack.text, path[:-1], path[-1]) if key else None
        for cut in range(len(path) - (1 if key else 0), 0, -1):
            if line is not None:
                break
            line = _toml.locate(stack.text, path[:cut])
    file = stack.path if stack.path not in ("-", "/dev/stdin") else None
    return Location(file, table, key, line)
