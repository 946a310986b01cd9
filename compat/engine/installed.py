"""The installed environment against its own metadata: what ``pip check``
judges, and a little more.

For every installed distribution (the first of its name on ``sys.path``),
each of its ``Requires-Dist`` whose marker holds on that interpreter (with
no extra, as pip check evaluates them) must be installed, at a version the
specifier admits (pre-releases included, as pip check does):

- ``installed-missing:A==1.0:b``: A requires b, which is not installed;
- ``installed-conflict:A==1.0:b``: A requires a version of b that is not the one installed.

(An ID names a distribution by its version without a build label,
``torch==2.10.0``, as the check's own IDs do.)

These two are pip check's verdicts (and uv pip check's). Beside them, each
saying whether pip check looks:

- ``installed-extra:A==1.0:b`` (warning): A requires ``b[x]``, and a requirement
  that the extra x of b adds is missing or at another version (pip check does
  not look at extras at all);
- ``installed-python:A==1.0``: A's Requires-Python excludes the interpreter
  (installed anyway, with ``--ignore-requires-python`` or ``--no-deps``);
- ``installed-platform:A==1.0``: A's wheel was built for another platform or
  Python (pip check says so too, "is not supported on this platform");
- ``installed-metadata:a``: a distribution whose metadata cannot be judged
  (unreadable, or a Requires-Dist or version that is not PEP 440/508; pip
  check fails on it too); a warning for one pip ignores as invalid (no
  valid name or version, no METADATA: what an interrupted install leaves);
- ``installed-duplicate:a`` (warning): two distributions of one name on
  ``sys.path``; the later one is hidden.

A requirement edge the stack check already judged (``requires:A==1.0:b``:
A is a release the database holds) is not reported twice. The stack names
no extras of an installed distribution (an environment does not say which
were asked for), so the check's ``extras:`` findings between installed
distributions give way to ``installed-extra``, judged on what is installed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .._names import normalize
from ..knowledge.model import Source
from ..sources.environment import Environment, Installed, wheel_tags_bounded
from ..stack import Stack
from .findings import SEVERITY_ORDER, Finding, Report

__all__ = ["installed_findings", "with_installed"]


def with_installed(report: Report, ignore: Sequence[str] = ()) -> Report:
    """`report` with the findings of its stack's installed environment
    added (a stack without one is returned as it is), sorted and
    suppressed as the check's own are."""
    stack = report.stack
    if stack.environment is None:
        return report
    installed = stack.environment.installed
    # An environment does not say which extras were asked for, so the stack
    # names none: whether an extra another distribution names is met is
    # judged from the installed metadata (installed-extra), not as a missing extra.
    kept = [f for f in report.findings if not (f.id.startswith("extras:") and all(c in installed for c in f.components))]
    # a release the database lacks still has its installed requirements judged, below
    kept = [f._replace(message=f"{f.message} (its installed metadata's requirements are checked here)")
            if f.id.startswith("unknown-release:") and f.components and f.components[0] in installed else f
            for f in kept]
    added = installed_findings(stack.environment, stack, {f.id for f in kept})
    report.findings = sorted([*kept, *added], key=lambda f: (SEVERITY_ORDER[f.severity], f.id))
    report.suppress(tuple(stack.ignore) + tuple(ignore))
    return report


def installed_findings(environment: Environment, stack: Stack, judged: Iterable[str] = ()) -> list[Finding]:
    """Every finding of the installed environment against its own metadata,
    less the requirement edges whose finding is in `judged` (IDs)."""
    return _Judge(environment, stack, set(judged)).run()


class _Judge:
    def __init__(self, environment: Environment, stack: Stack, judged: set[str]) -> None:
        self.environment = environment
        self.stack = stack
        self.judged = judged
        self.findings: list[Finding] = []

    def run(self) -> list[Finding]:
        named = [(i, f"{i.distribution.name} {i.distribution.version}".strip())
                 for i in self.environment.installed.values()]
        for installed, who in [*named, *((i, i.name) for i in self.environment.unnamed)]:  # those by their folder
            if installed.problem is not None:
                # one pip ignores too (an interrupted install's ~orch-2.0.dist-info): a warning, since pip check
                # passes; one pip reads but cannot judge (a Requires-Dist that does not parse): an error
                severity = "warning" if installed.distribution.invalid else "error"
                self.add(f"installed-metadata:{installed.name}", severity,
                         f"{who}: {installed.problem}; its requirements are not checked", (installed.name,),
                         "status", installed, "METADATA")
                continue
            self.requirements(installed)
            self.python(installed)
            self.platform(installed)
        for shown, hidden in self.environment.duplicates:
            self.add(f"installed-duplicate:{shown.name}", "warning",
                     f"{shown.name} is installed twice: {shown.version} at {shown.distribution.metadata} imports, "
                     f"{hidden.version} at {hidden.metadata} is hidden", (shown.name,), "status", shown,
                     "sys.path")
        return self.findings

    def add(self, id: str, severity: str, message: str, components: tuple[str, ...], kind: str,
            installed: Installed, field: str, **details: str) -> None:
        dist = installed.distribution
        source = Source(id=f"installed:{installed.name}=={dist.version}", project=installed.name,
                        title=f"{dist.name} {dist.version} installed metadata ({field})", kind="environment",
                        item=dist.metadata)
        self.findings.append(Finding(id=id, severity=severity, message=message, components=components, kind=kind,
                                     layer="metadata", source=source, details=details or None))

    def requirements(self, installed: Installed) -> None:
        """Each requirement that applies here, against what is installed (pip check)."""
        environment = self.environment
        who = f"{installed.distribution.name} {installed.version}"
        edge = _edge(installed)
        for requirement in installed.requirements:
            if not environment.applies(requirement):
                continue
            target = normalize(requirement.name)
            there = environment.installed.get(target)
            wanted = _text(requirement)
            if there is None:
                self.add(f"installed-missing:{edge}:{target}", "error",
                         f"{who} requires {wanted}, which is not installed", (installed.name, target),
                         "requirement", installed, "Requires-Dist", requirement=wanted)
                continue
            if there.version is None:
                continue  # reported as installed-metadata
            if not requirement.specifier.contains(there.version, prereleases=True):
                if f"requires:{edge}:{target}" not in self.judged:
                    self.add(f"installed-conflict:{edge}:{target}", "error",
                             f"{who} requires {wanted}; the environment has {there.distribution.name} {there.version}",
                             (installed.name, target), "requirement", installed, "Requires-Dist",
                             requirement=wanted, found=str(there.version))
                continue
            if requirement.extras:
                self.extras(installed, requirement, there)

    def extras(self, installed: Installed, requirement: Requirement, there: Installed) -> None:
        """What the extras a requirement names add, against what is installed."""
        environment = self.environment
        unmet = []
        for extra in sorted(requirement.extras):
            if normalize(extra) not in {normalize(e) for e in there.distribution.extras}:
                continue  # an extra the distribution does not have adds nothing (pip and uv warn and go on)
            for added in environment.extra_requirements(there, extra):
                if environment.meets(added):
                    continue
                have = environment.installed.get(normalize(added.name))
                found = f"{have.distribution.name} {have.version}" if have is not None else "not installed"
                unmet.append(f"{_text(added)} ({found})")
        if unmet:
            target = there.name
            self.add(f"installed-extra:{_edge(installed)}:{target}", "warning",
                     f"{installed.distribution.name} {installed.version} requires {_text(requirement)}; the extra "
                     f"needs {', '.join(unmet)}", (installed.name, target), "requirement", installed,
                     "Requires-Dist", requirement=_text(requirement))

    def python(self, installed: Installed) -> None:
        written = installed.distribution.requires_python
        if not written:
            return
        try:
            allowed = SpecifierSet(written)
        except InvalidSpecifier:
            return  # as pip and uv: an unreadable Requires-Python of an installed distribution is not judged
        python = self.environment.python_release
        if not allowed.contains(python, prereleases=True):
            edge = _edge(installed)
            if f"requires-python:{edge}" in self.judged:
                return
            self.add(f"installed-python:{edge}", "error",
                     f"{installed.distribution.name} {installed.version} requires Python {written}; the interpreter "
                     f"is {python}", (installed.name, "python"), "requirement", installed, "Requires-Python",
                     requirement=written, found=str(python))

    def platform(self, installed: Installed) -> None:
        """The tags the wheel was built for, against the interpreter (pip check's "not supported")."""
        tags = installed.distribution.tags
        if not tags:
            return
        from .builds import Platform

        # read_environment refuses more (one that is not read so, a Distribution made by hand, too)
        wheel_tags_bounded(tags, installed.distribution.metadata)
        platform = Platform(self.stack.system)
        parsed = [t for tag in tags for t in _expand(tag)]
        if not parsed or any(platform.accepts(*t) is not False for t in parsed):
            return
        self.add(f"installed-platform:{_edge(installed)}", "error",
                 f"{installed.distribution.name} {installed.version} was built for {', '.join(tags)}, not for "
                 f"CPython {self.stack.system.python} on {self.stack.system.platform}", (installed.name, "python"),
                 "platform", installed, "WHEEL", found=", ".join(tags))


def _expand(tag: str) -> list[tuple[str, str, str]]:
    """The (interpreter, abi, platform) triples of a wheel tag, a compressed
    one included, as packaging.tags.parse_tag gives them (whose module costs
    a check more to import than this).

    >>> _expand("py2.py3-none-any")
    [('py2', 'none', 'any'), ('py3', 'none', 'any')]
    """
    parts = tag.strip().lower().split("-")
    if len(parts) != 3:
        return []
    interpreters, abis, platforms = (p.split(".") for p in parts)
    return [(i, a, p) for i in interpreters for a in abis for p in platforms]


def _edge(installed: Installed) -> str:
    """A distribution as finding IDs name a release: ``torch==2.10.0``, as the
    check's own IDs do, without the build label (the message shows it)."""
    assert installed.version is not None
    return f"{installed.name}=={installed.version.public}"


def _text(requirement: Requirement) -> str:
    """A requirement as a report shows it: without its marker, which held."""
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{requirement.specifier}"
