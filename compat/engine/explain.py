"""Why a stack cannot be resolved, as a short derivation in plain English.

From resolvelib's causes (the requirements that could not be met together)
and the dependency edges the provider saw, a graph gives each cause its
shortest chain back to the stack file. Steps that say the same thing twice
are dropped; virtual packages read as facts about the machine ("the A100
80GB's compute capability is 8.0").

The graph is the few hundred releases one resolution looked at, and the
chain a breadth-first walk of it: a failing check is where compat must be
fastest, and importing networkx for one shortest path would cost more than
the rest of the explanation and the suggestions together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from .._versions import spec_text
from ..knowledge.conditions import LABELS
from ..knowledge.database import Database
from ..stack import Stack
from .facts import VIRTUAL_PREFIX
from .resolver import Need, Resolution

__all__ = ["Derivation", "Step", "explain"]

ROOT = "the stack"


@dataclass(frozen=True)
class Step:
    """One "because": `who` requires `what` (and why, when a rule says it)."""

    who: str
    what: str
    origin: str
    rule: str | None = None
    source: str | None = None

    def text(self) -> str:
        return f"{self.who} requires {self.what}"

    def to_dict(self) -> dict[str, Any]:
        data = {"who": self.who, "requires": self.what, "origin": self.origin}
        if self.rule:
            data["rule"] = self.rule
        if self.source:
            data["source"] = self.source
        return data


@dataclass
class Derivation:
    """Chains of steps, one per unmet requirement, and the conclusion."""

    chains: list[list[Step]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    conclusion: str = ""

    def text(self) -> str:
        lines = []
        for index, chain in enumerate(self.chains):
            lead = "Because" if index == 0 else "and because"
            lines.append(f"{lead} " + ", and ".join(step.text() for step in chain) + ",")
        for fact in self.facts:
            lines.append(f"and {fact},")
        lines.append(f"we can conclude that {self.conclusion}.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "chains": [[s.to_dict() for s in chain] for chain in self.chains],
            "facts": list(self.facts),
            "conclusion": self.conclusion,
            "text": self.text(),
        }


def _label(name: str) -> str:
    return LABELS.get(name[len(VIRTUAL_PREFIX):], name) if name.startswith(VIRTUAL_PREFIX) else name


def _what(need: Need) -> str:
    if need.is_virtual:
        return f"{_label(need.name)} {spec_text(need.specifier)}"
    extras = f"[{','.join(sorted(need.extras))}]" if need.extras else ""
    return f"{need.name}{extras}{spec_text(need.specifier)}"


def _step(need: Need, db: Database | None = None) -> Step:
    who = need.parent or ROOT
    what = _what(need)
    if need.rule and db is not None:
        component = db.component(need.parent.split(" ", 1)[0]) if need.parent else None
        rule = next((r for r in component.rules if r.id == need.rule), None) if component else None
        if rule is not None and not rule.when.is_empty:
            what += f" when {rule.when.describe()} (rule {rule.id})"
    return Step(who=who, what=what, origin=need.origin, rule=need.rule, source=need.source)


def _machine_fact(stack: Stack, name: str) -> str:
    system, hardware = stack.system, stack.hardware
    if name == "__python":
        return f"the stack runs Python {system.python}"
    if name == "__cuda":
        return f"the stack's CUDA is {system.cuda}" if system.cuda else "the stack has no CUDA"
    if name == "__driver":
        return f"the stack's NVIDIA driver is {system.driver_written}" if system.driver else "the stack names no driver"
    if name == "__rocm":
        return f"the stack's ROCm is {system.rocm}" if system.rocm else "the stack has no ROCm"
    if hardware.gpu is not None and hardware.compute_capability is not None:
        return f"the {hardware.gpu.name}'s compute capability is {hardware.compute_capability}"
    if hardware.compute_capability is not None:
        return f"the stack's compute capability is {hardware.compute_capability}"
    return "the stack has no GPU"


def explain(stack: Stack, resolution: Resolution, db: Database | None = None) -> Derivation:
    """The derivation of a failed resolution."""
    from .facts import StackFacts

    facts = StackFacts(stack, {})

    # node -> {next node: the requirement on that edge, or None}
    graph: dict[str, dict[str, Need | None]] = {ROOT: {}}
    for package, version, needs in resolution.provider.tried():
        parent = f"{package} {version}"
        graph.setdefault(package, {}).setdefault(parent, None)  # a package, then the release of it that was tried
        for need in needs:
            graph.setdefault(parent, {})[need.name] = need
    for spec in stack.packages.values():
        graph[ROOT][spec.name] = Need(spec.name, spec.specifier, spec.extras)

    derivation = Derivation()
    seen: set[str] = set()
    targets: list[str] = []
    for cause in resolution.causes:
        need = cause.requirement
        if need.is_virtual:
            value = facts.version(need.name[len(VIRTUAL_PREFIX):])
            if isinstance(value, Version) and need.specifier.contains(value, prereleases=True):
                continue  # met by the machine: not part of the conflict
        chain: list[Step] = []
        parent = need.parent
        if parent is not None and parent in graph:
            path = _shortest_path(graph, ROOT, parent)
            for a, b in zip(path, path[1:]):
                step_need = graph[a][b]
                if step_need is not None:
                    chain.append(_step(step_need, db))
        chain.append(_step(need, db))
        key = " | ".join(s.text() for s in chain)
        if key in seen:
            continue
        seen.add(key)
        derivation.chains.append(_collapse(chain))
        if need.name not in targets:
            targets.append(need.name)
    for name in targets:
        if name.startswith(VIRTUAL_PREFIX):
            derivation.facts.append(_machine_fact(stack, name))
    names = [_label(t) if t.startswith(VIRTUAL_PREFIX) else t for t in targets]
    if len(derivation.chains) > 1 and len(targets) == 1 and not targets[0].startswith(VIRTUAL_PREFIX):
        derivation.conclusion = f"no version of {names[0]} satisfies all of these, so the stack cannot be resolved"
    elif targets and all(t.startswith(VIRTUAL_PREFIX) for t in targets):
        derivation.conclusion = "this machine cannot run the stack as written"
    else:
        derivation.conclusion = f"no set of versions of {', '.join(names)} satisfies these together, so the stack cannot be resolved"
    return derivation


def _shortest_path(graph: dict[str, dict[str, Need | None]], source: str, target: str) -> list[str]:
    """The nodes of a shortest path from `source` to `target` (breadth first,
    edges in the order they were seen), or [] when there is none."""
    before: dict[str, str] = {source: source}
    frontier = [source]
    while frontier and target not in before:
        reached = []
        for node in frontier:
            for following in graph.get(node, ()):
                if following not in before:
                    before[following] = node
                    reached.append(following)
        frontier = reached
    if target not in before:
        return []
    path = [target]
    while path[-1] != source:
        path.append(before[path[-1]])
    return path[::-1]


def _collapse(chain: list[Step]) -> list[Step]:
    """Drop a step that repeats the one before it (a package reached twice)."""
    out: list[Step] = []
    for step in chain:
        if out and out[-1].text() == step.text():
            continue
        out.append(step)
    return out
