"""Text from a stack, an overlay or the database, in the CI formats: shown
as written, never read as markup or as a workflow command."""

from __future__ import annotations

import json
import re

import pytest

import compat
from compat.engine.check import check_stack
from compat.engine.findings import Finding
from compat.formats import github, markdown_report, sarif
from compat.knowledge.model import Source
from compat.knowledge.binding import load_stack

STACK = """\
[system]
python = "3.12"
cuda = "13.0"

[packages]
vllm = "0.32.0"
"""

ODD = "needs *x* <b>|y</b> and `z`\n::error::forged"
SOURCE = Source(id="local.odd", project="vllm", title="notes on *x* | <b>", kind="release",
                url="https://example.org/notes")
FINDING = Finding(id="local.odd-rule", severity="warning", message=ODD, components=("vllm",), kind="option",
                  layer="local", source=SOURCE)


@pytest.fixture(scope="module")
def report(tmp_path_factory, db):
    path = tmp_path_factory.mktemp("odd") / "stack.toml"
    path.write_text(STACK, encoding="utf-8")
    checked = check_stack(load_stack(str(path), db), db, suggest_fixes=False)
    return checked.replace(findings=[FINDING])


def test_sarif_help_markdown_escapes_the_rule_text(report):
    [rule] = json.loads(sarif.render(report))["runs"][0]["tool"]["driver"]["rules"]
    markdown = rule["help"]["markdown"]
    assert markdown.splitlines()[0] == markdown_report.escape(ODD)
    unescaped = re.sub(r"\\[\\`*_\[\]<>|~&]", "", markdown.split("\n- <")[0]).replace("<br>", "")
    assert not set(unescaped) & set("`*_[]<>|~&"), unescaped
    assert f"- Source: {markdown_report.escape(SOURCE.cite())}" in markdown
    assert "- <https://example.org/notes>" in markdown  # the link itself stays a link
    # the plain-text help and the message keep the text as written
    assert rule["help"]["text"].startswith(ODD)
    [result] = json.loads(sarif.render(report))["runs"][0]["results"]
    assert result["message"]["text"] == ODD


def test_github_annotation_cannot_start_a_second_command(report):
    out = github.render(report)
    assert not any(line.startswith("::error::forged") for line in out.splitlines())
    [annotation] = [line for line in out.splitlines() if line.startswith("::")]
    assert annotation.startswith("::warning file=") and "title=local.odd-rule::" in annotation
    assert "%0A::error::forged" in annotation


def test_markdown_report_row_keeps_its_three_columns(report):
    out = markdown_report.render(report)
    [row] = [line for line in out.splitlines() if "local.odd-rule" in line]
    assert row.replace("\\|", "").count("|") == 4
    assert "<b>" not in row and "::error::forged" in row


def test_a_stack_path_with_a_newline_starts_no_workflow_command(tmp_path):
    path = tmp_path / "a\n::error::forged.toml"
    path.write_text('[system]\npython = "3.12"\n')
    report = compat.check(str(path))
    assert not any(line.startswith("::error::forged") for line in github.render(report).splitlines())
