"""`compat graph`: the dependency and conflict graph of a checked stack,
as Mermaid (GitHub renders it in Markdown) or Graphviz DOT.

The nodes are the stack, every package the check chose a version for (the
stack's own and the tracked packages they need) and the machine (Python,
CUDA, the driver, ROCm, the GPU). The edges are what each chosen release
requires on this machine, as the resolver saw it: its Requires-Dist whose
markers hold, and the curated requirements and rules of the database; a
bound on the machine is drawn when a rule sets it or when the machine does
not meet it (every release's Requires-Python would bury the rest).

Conflicts are the check's own: every node an error names is drawn in red,
and so is every edge between two nodes one error names; an error whose
nodes no drawn edge joins gets an edge of its own, labelled with its ID.
Output is deterministic: nodes and edges sorted by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from .._versions import spec_text
from ..engine.facts import VIRTUAL_LABELS, VIRTUAL_PREFIX
from ..engine.resolver import Need, StackProvider

if TYPE_CHECKING:
    import networkx as nx

    from ..engine.findings import Report
    from ..knowledge.database import Database

__all__ = ["build_graph", "mermaid", "dot", "render", "FORMATS"]

FORMATS = ("mermaid", "dot")
STACK = VIRTUAL_PREFIX + "stack"  # the root node's key: like a virtual package's, no package name can be it
_MACHINE = {label: name for name, label in VIRTUAL_LABELS.items()}  # "gpu" -> "__compute_capability"
_COLORS = {"conflict": "#c62828", "conflict_fill": "#ffebee", "machine_fill": "#eceff1", "stack_fill": "#e3f2fd"}


def _version(shown: str) -> Version | None:
    """The release a report's shown version stands for (``2.10.0+cu128`` is
    2.10.0, built as cu128); None for a range the check could not pin."""
    try:
        return Version(Version(shown).public)
    except InvalidVersion:
        return None


def build_graph(report: Report, db: Database) -> nx.DiGraph:
    """The graph of `report`'s stack: nodes keyed by package name (machine
    nodes by their virtual name, ``__python``), with ``label``, ``kind``
    (stack, package, dependency, machine) and ``conflict``; edges with
    ``label`` and ``conflict``."""
    import networkx as nx

    stack = report.stack
    graph = nx.DiGraph()
    graph.add_node(STACK, label=stack.name or stack.path or "the stack", kind="stack", conflict=False)
    for name, shown in {**report.packages, **report.resolved}.items():
        kind = "package" if name in stack.packages else "dependency"
        graph.add_node(name, label=f"{name} {shown}", kind=kind, conflict=False, version=_version(shown))
    for name, spec in stack.packages.items():
        graph.add_edge(STACK, name, label=spec_text(spec.specifier) or "any", conflict=False)
    _machine_nodes(graph, report)
    errors = [set(_node_key(c) for c in f.components) for f in report.errors]
    named = set().union(*errors) if errors else set()
    provider = StackProvider(stack, db)
    releases = {}
    for name in sorted(n for n in graph if graph.nodes[n].get("version") is not None):
        component = db.component(name)
        release = component.release(graph.nodes[name]["version"]) if component is not None else None
        if release is not None:
            releases[name] = release
    # a release's own lines first, then those of each extra something asks of it (the stack, or a requirement)
    pending = [(name, "") for name in releases]
    pending += [(name, extra) for name, spec in stack.packages.items() if name in releases for extra in spec.extras]
    done: set[tuple[str, str]] = set()
    while pending:
        name, extra = pending.pop(0)
        if (name, extra) in done:
            continue
        done.add((name, extra))
        needs = provider.dependencies(releases[name], frozenset([extra]) if extra else frozenset())
        for need in _requirement_edges(graph, provider, name, needs[1:] if extra else needs, named):
            pending += [(need.name, e) for e in sorted(need.extras) if need.name in releases]
    _mark_conflicts(graph, report, errors)
    return graph


def _node_key(component: str) -> str:
    """A finding's component as a node key: ``gpu`` is the machine's ``__compute_capability``."""
    return _MACHINE.get(component, component)


def _machine_nodes(graph: nx.DiGraph, report: Report) -> None:
    """The machine the stack gives: Python always, the rest when given."""
    system, hardware = report.stack.system, report.stack.hardware
    gpu = None
    if hardware.gpu is not None or hardware.compute_capability is not None:
        name = hardware.gpu.name if hardware.gpu is not None else "GPU"
        gpu = f"{name} (sm_{str(hardware.compute_capability).replace('.', '')})" if hardware.compute_capability \
            else name
    given = {"__python": f"Python {system.python}", "__cuda": f"CUDA {system.cuda}" if system.cuda else None,
             "__driver": f"driver {system.driver_written}" if system.driver else None,
             "__rocm": f"ROCm {system.rocm}" if system.rocm else None, "__compute_capability": gpu}
    for key, label in given.items():
        if label is not None:
            graph.add_node(key, label=label, kind="machine", conflict=False)


def _add_machine(graph: nx.DiGraph, key: str) -> None:
    """A machine node an edge or an error needs that the stack does not give."""
    if key not in graph:
        graph.add_node(key, label=f"{VIRTUAL_LABELS[key]} (not given)", kind="machine", conflict=False)


def _requirement_edges(graph: nx.DiGraph, provider: StackProvider, package: str, needs: list[Need],
                       named: set[str]) -> list[Need]:
    """Draw `package`'s requirements `needs`; returns those drawn to a package."""
    drawn = []
    for need in needs:
        if need.is_virtual:
            value = provider.facts.version(need.name[len(VIRTUAL_PREFIX):])
            fails = isinstance(value, Version) and not need.specifier.contains(value, prereleases=True)
            if need.origin != "rule" and not fails:
                continue
            _add_machine(graph, need.name)
        elif need.name not in graph:
            if need.name not in named:
                continue  # a package the check did not choose and no error names
            graph.add_node(need.name, label=f"{need.name} (not chosen)", kind="dependency", conflict=False)
        else:
            drawn.append(need)
        extras = f"[{','.join(sorted(need.extras))}]" if need.extras else ""
        label = f"{extras}{spec_text(need.specifier) or 'any'}" + (f" (rule {need.rule})" if need.rule else "")
        if graph.has_edge(package, need.name):
            shown = graph.edges[package, need.name]["label"]
            label = shown if label in shown.split("; ") else f"{shown}; {label}"
        graph.add_edge(package, need.name, label=label, conflict=False)
    return drawn


def _mark_conflicts(graph: nx.DiGraph, report: Report, errors: list[set[str]]) -> None:
    for finding, keys in zip(report.errors, errors):
        for key in keys:
            if key.startswith(VIRTUAL_PREFIX):
                _add_machine(graph, key)
            if key in graph:
                graph.nodes[key]["conflict"] = True
        joined = [(a, b) for a, b in graph.edges if a in keys and b in keys and a != STACK]
        for edge in joined:
            graph.edges[edge]["conflict"] = True
        ends = [_node_key(c) for c in finding.components if _node_key(c) in graph]
        if not joined and len(ends) >= 2 and ends[0] != ends[-1]:
            graph.add_edge(ends[0], ends[-1], label=finding.id.split(":", 1)[0], conflict=True)


def _order(graph: nx.DiGraph) -> list[str]:
    """The stack, its packages, their dependencies, then the machine; by name within each."""
    rank = {"stack": 0, "package": 1, "dependency": 2, "machine": 3}
    return sorted(graph, key=lambda n: (rank[graph.nodes[n]["kind"]], n))


def _ident(key: str) -> str:
    """A node's ID in the output: normalized names hold only [a-z0-9-], so this is one to one."""
    if key == STACK:
        return "stack"
    if key.startswith(VIRTUAL_PREFIX):
        return "m_" + key[len(VIRTUAL_PREFIX):]
    return "p_" + key.replace("-", "_")


def _edges(graph: nx.DiGraph) -> list[tuple[str, str, dict[str, Any]]]:
    position = {n: i for i, n in enumerate(_order(graph))}
    return sorted(graph.edges(data=True), key=lambda e: (position[e[0]], position[e[1]]))


# -- Mermaid ------------------------------------------------------------------------------------------

_MERMAID_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;"}


def _mermaid_text(text: str) -> str:
    """A label inside Mermaid's quotes: its entity codes for the characters
    that would end the string or read as HTML; line breaks as spaces."""
    return "".join(_MERMAID_ENTITIES.get(c, " " if c in "\r\n" else c) for c in text)


def mermaid(graph: nx.DiGraph) -> str:
    """A Mermaid flowchart (```mermaid in Markdown on GitHub)."""
    shapes = {"stack": '(["{}"])', "package": '["{}"]', "dependency": '("{}")', "machine": '{{{{"{}"}}}}'}
    lines = ["flowchart LR"]
    machine = []
    for key in _order(graph):
        node = graph.nodes[key]
        line = f"  {_ident(key)}{shapes[node['kind']].format(_mermaid_text(node['label']))}"
        (machine if node["kind"] == "machine" else lines).append(line)
    if machine:
        lines += ['  subgraph machine ["the machine"]', *("  " + m for m in machine), "  end"]
    conflicted = []
    for index, (a, b, data) in enumerate(_edges(graph)):
        lines.append(f'  {_ident(a)} -->|"{_mermaid_text(data["label"])}"| {_ident(b)}')
        if data["conflict"]:
            conflicted.append(str(index))
    lines.append(f"  classDef root fill:{_COLORS['stack_fill']},stroke-width:2px")
    lines.append(f"  classDef device fill:{_COLORS['machine_fill']}")
    lines.append(f"  classDef conflict fill:{_COLORS['conflict_fill']},stroke:{_COLORS['conflict']},stroke-width:3px")
    for kind, style in (("stack", "root"), ("machine", "device")):
        members = [_ident(k) for k in _order(graph) if graph.nodes[k]["kind"] == kind and not graph.nodes[k]["conflict"]]
        if members:
            lines.append(f"  class {','.join(members)} {style}")
    bad = [_ident(k) for k in _order(graph) if graph.nodes[k]["conflict"]]
    if bad:
        lines.append(f"  class {','.join(bad)} conflict")
    if conflicted:
        lines.append(f"  linkStyle {','.join(conflicted)} stroke:{_COLORS['conflict']},stroke-width:3px,color:{_COLORS['conflict']}")
    return "\n".join(lines) + "\n"


# -- Graphviz DOT -------------------------------------------------------------------------------------


def _dot_text(text: str) -> str:
    """A DOT quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ") + '"'


_DOT_NODES: dict[str, dict[str, str]] = {
    "stack": {"shape": "box", "style": "rounded,filled,bold", "fillcolor": _COLORS["stack_fill"]},
    "package": {"shape": "box", "style": "bold"},
    "dependency": {"shape": "box", "style": "rounded"},
    "machine": {"shape": "hexagon", "style": "filled", "fillcolor": _COLORS["machine_fill"]},
}
_DOT_CONFLICT = {"color": _COLORS["conflict"], "fontcolor": _COLORS["conflict"], "penwidth": "3"}


def _dot_attributes(attributes: dict[str, str]) -> str:
    return ", ".join(f"{k}={_dot_text(v)}" for k, v in attributes.items())


def dot(graph: nx.DiGraph) -> str:
    """A Graphviz digraph (``dot -Tsvg``)."""
    lines = ["digraph compat {", "  rankdir=LR;", '  node [fontname="Helvetica"];', '  edge [fontname="Helvetica"];']
    machine = []
    for key in _order(graph):
        node = graph.nodes[key]
        attributes = {"label": node["label"], **_DOT_NODES[node["kind"]]}
        if node["conflict"]:
            style = attributes["style"]
            attributes.update(_DOT_CONFLICT, fillcolor=_COLORS["conflict_fill"],
                              style=style if "filled" in style else f"{style},filled")
        line = f"  {_ident(key)} [{_dot_attributes(attributes)}];"
        (machine if node["kind"] == "machine" else lines).append(line)
    if machine:
        lines += ["  subgraph cluster_machine {", '    label="the machine";', *("  " + m for m in machine), "  }"]
    for a, b, data in _edges(graph):
        attributes = {"label": data["label"], **(_DOT_CONFLICT if data["conflict"] else {})}
        lines.append(f"  {_ident(a)} -> {_ident(b)} [{_dot_attributes(attributes)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(report: Report, db: Database, fmt: str) -> str:
    """The graph of `report` in `fmt` (one of FORMATS)."""
    graph = build_graph(report, db)
    return mermaid(graph) if fmt == "mermaid" else dot(graph)
