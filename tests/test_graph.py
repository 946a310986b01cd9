"""compat graph: the dependency and conflict graph, as Mermaid and as DOT."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from compat.cli import cli
from compat.engine.check import check_stack
from compat.formats.graph import build_graph, dot, mermaid
from compat.knowledge.binding import load_stack

from .conftest import EXAMPLES

MERMAID_EDGE = re.compile(r'^  (\w+) -->\|"([^"]*)"\| (\w+)$')
MERMAID_NODE = re.compile(r'^ +(\w+)[\[\(\{]+"([^"]*)"[\]\)\}]+$')
DOT_EDGE = re.compile(r"^  (\w+) -> (\w+) \[(.*)\];$")
DOT_NODE = re.compile(r'^ +(\w+) \[label="([^"]*)", (.*)\];$')


@pytest.fixture(scope="module")
def broken(db):
    """examples/broken-upgrade.toml: vllm 0.32.0 against Python 3.10, transformers 5.20.1 and flashinfer 0.7.2."""
    return build_graph(check_stack(load_stack(EXAMPLES / "broken-upgrade.toml", db), db, suggest_fixes=False), db)


@pytest.fixture(scope="module")
def working(db):
    return build_graph(check_stack(load_stack(EXAMPLES / "h200-vllm.toml", db), db, suggest_fixes=False), db)


def mermaid_parts(text):
    lines = text.splitlines()
    nodes = dict(m.groups() for m in map(MERMAID_NODE.match, lines) if m)
    edges = [m.groups() for m in map(MERMAID_EDGE.match, lines) if m]
    styled = set()
    for line in lines:
        if line.startswith("  linkStyle "):
            styled |= {int(i) for i in line.split()[1].split(",")}
    conflict = next((set(line.split()[1].split(",")) for line in lines if line.endswith(" conflict")
                     and line.startswith("  class ")), set())
    return nodes, edges, styled, conflict


def test_mermaid_draws_every_package_and_styles_the_conflict_edges(broken):
    nodes, edges, styled, conflict = mermaid_parts(mermaid(broken))
    labels = set(nodes.values())
    assert {"vllm 0.32.0", "transformers 5.20.1", "flashinfer-python 0.7.2", "Python 3.10"} <= labels
    assert [(a, b) for a, _, b in edges][:3] == [("stack", "p_flashinfer_python"), ("stack", "p_transformers"),
                                                ("stack", "p_vllm")]
    red = {(edges[i][0], edges[i][2]) for i in styled}
    # the check's three errors: vllm's requirements on transformers, flashinfer-python and Python
    assert red == {("p_vllm", "p_transformers"), ("p_vllm", "p_flashinfer_python"), ("p_vllm", "m_python")}
    assert ("p_vllm", "#gt;=5.16.1,#lt;5.20.0", "p_transformers") in edges  # < and > as Mermaid's entity codes
    assert conflict == {"p_vllm", "p_transformers", "p_flashinfer_python", "m_python"}


def test_dot_marks_the_same_conflicts(broken):
    text = dot(broken)
    assert text.startswith("digraph compat {\n") and text.endswith("}\n")
    lines = text.splitlines()
    edges = {(m.group(1), m.group(2)): m.group(3) for m in map(DOT_EDGE.match, lines) if m}
    red = {edge for edge, attributes in edges.items() if "penwidth" in attributes}
    assert red == {("p_vllm", "p_transformers"), ("p_vllm", "p_flashinfer_python"), ("p_vllm", "m_python")}
    assert edges[("p_vllm", "p_transformers")].startswith('label=">=5.16.1,<5.20.0"')
    nodes = {m.group(1): (m.group(2), m.group(3)) for m in map(DOT_NODE.match, lines) if m}
    assert nodes["m_python"][0] == "Python 3.10" and "penwidth" in nodes["m_python"][1]
    assert "penwidth" not in nodes["m_cuda"][1]


def test_a_working_stack_draws_its_dependencies_and_no_conflict(working, db):
    nodes, edges, styled, conflict = mermaid_parts(mermaid(working))
    report_names = {"vllm", "transformers", "torch", "flashinfer-python", "triton"}
    assert {label.split()[0] for label in nodes.values()} >= report_names
    assert not styled and not conflict and "linkStyle" not in mermaid(working)
    # vllm asks mistral-common[image]: the lines of that extra are drawn too (it asks for [opencv])
    assert any(a == b == "p_mistral_common" and "[opencv]" in label for a, label, b in edges)
    # every edge joins two drawn nodes, and the output is the same each time
    assert all(a in nodes and b in nodes for a, _, b in edges)
    assert mermaid(working) == mermaid(build_graph(check_stack(load_stack(EXAMPLES / "h200-vllm.toml", db), db,
                                                               suggest_fixes=False), db))


def test_cli_writes_the_graph_and_refuses_a_bad_stack(tmp_path):
    target = tmp_path / "graph.dot"
    result = CliRunner().invoke(cli, ["graph", str(EXAMPLES / "transformers-too-new.toml"), "--format", "dot",
                                      "-o", str(target)])
    assert result.exit_code == 0, result.output  # drawn, whatever the verdict
    text = target.read_text()
    assert 'p_transformers [label="transformers 5.20.1"' in text and "penwidth" in text
    bad = tmp_path / "bad.toml"
    bad.write_text('[system]\npython = 3.12\n')
    result = CliRunner().invoke(cli, ["graph", str(bad)])
    assert result.exit_code == 2 and "bad.toml:2: [system] python" in result.stderr and not result.stdout


def test_the_command_line_imports_networkx_only_to_draw():
    code = "import sys, compat.cli; print('networkx' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
