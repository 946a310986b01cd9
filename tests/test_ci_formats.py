"""The outputs CI tools display: SARIF (validated against the published
2.1.0 schema), GitHub workflow commands, Markdown; the JSON error object of
exit 2; --quiet and --min-severity; and the stack-file line each finding
points at."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import compat
from compat.cli import cli
from compat.engine.check import check_stack
from compat.errors import StackError
from compat.formats import github, markdown_report, sarif, text
from compat.knowledge.binding import load_stack

from .conftest import EXAMPLES

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)
BROKEN = str(EXAMPLES / "broken-upgrade.toml")  # vllm is on line 14, [system] on line 6

# A stack whose option names carry the characters workflow commands escape.
ODD = """\
[system]
python = "3.12"
cuda = "13.0"

[packages]
vllm = "0.32.0"

[options.vllm]
kv_cache_dtype = "fp9"
"50%,odd:flag" = true

[compat]
ignore = ["vllm.cors-*"]
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def broken():
    return compat.check(BROKEN, ignore=["vllm.removed-*"])


@pytest.fixture(scope="module")
def odd(tmp_path_factory, db):
    path = tmp_path_factory.mktemp("odd") / "odd.toml"
    path.write_text(ODD, encoding="utf-8")
    return check_stack(load_stack(str(path), db), db, suggest_fixes=False)  # the changes that work: not needed here


def results_by_id(document: dict) -> dict[str, dict]:
    return {r["properties"]["id"]: r for r in document["runs"][0]["results"]}


def test_sarif_is_valid_and_puts_each_finding_on_the_line_of_its_key(broken, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)  # the checkout: its files are named relative to it
    document = json.loads(sarif.render(broken))
    VALIDATOR.validate(document)
    results = results_by_id(document)
    where = results["requires-python:vllm==0.32.0"]["locations"][0]["physicalLocation"]
    assert where == {"artifactLocation": {"uri": "examples/broken-upgrade.toml", "uriBaseId": "%SRCROOT%"},
                     "region": {"startLine": 14}}
    assert results["driver:unknown"]["locations"][0]["physicalLocation"]["region"] == {"startLine": 6}
    assert {r["level"] for r in results.values()} == {"error", "note"}


def test_sarif_rules_carry_help_text_and_the_sources_of_their_results(broken):
    document = json.loads(sarif.render(broken))
    rules = {r["id"]: r for r in document["runs"][0]["tool"]["driver"]["rules"]}
    family = rules["requires-python"]
    assert family["shortDescription"]["text"].startswith("A release requires a Python version")
    assert family["properties"]["sources"] == ["vllm 0.32.0 package metadata (Requires-Python) (2026-10-18)"]
    curated = rules["flashinfer.precompiled-kernels-refresh"]
    assert curated["helpUri"] == "https://github.com/flashinfer-ai/flashinfer/releases"
    assert "Source: FlashInfer 0.7.2 release (d84335d, 2026-10-15)" in curated["help"]["text"]
    for result in document["runs"][0]["results"]:
        assert document["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_marks_suppressed_findings_by_where_they_were_ignored(odd, broken):
    cors = results_by_id(json.loads(sarif.render(odd)))["vllm.cors-default-restricted"]
    assert cors["suppressions"][0]["kind"] == "inSource"
    removed = results_by_id(json.loads(sarif.render(broken)))["vllm.removed-compile-cache-options"]
    assert removed["suppressions"][0]["kind"] == "external"


def test_sarif_of_several_stacks_is_one_valid_run(broken, odd):
    document = json.loads(sarif.render([broken, odd], min_severity="warning"))
    VALIDATOR.validate(document)
    (run,) = document["runs"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert len(uris) == 2 and all(r["level"] != "note" for r in run["results"])


def test_sarif_of_input_compat_cannot_use_is_a_failed_run_at_the_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[system]\npython = 3.10\n')
    result = invoke("check", bad, "--format", "sarif")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    document = json.loads(result.stdout)
    VALIDATOR.validate(document)
    invocation = document["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 2}


def test_github_annotations_escape_properties_and_messages_as_the_toolkit_does(odd):
    lines = github.render(odd).splitlines()
    flag = next(line for line in lines if "option-unknown" in line)
    assert flag.startswith(f"::error file={odd.stack.path},line=10,title=option-unknown%3Avllm%3A50%25%2Codd%3Aflag::")
    # in the message only %, CR and LF are escaped: ":" and "," stay
    assert "::vllm 0.32.0 has no --50%25,odd:flag: its command line refuses it%0Asource: vLLM 0.32.0" in flag
    assert f",line=9,title=option-value%3Avllm%3Akv-cache-dtype::" in lines[1]  # found as the file spells it
    assert lines[-1] == f"compat: {odd.stack.path}: FAIL: 2 error(s), 0 warning(s), 6 note(s)"


def test_github_levels_and_min_severity(broken):
    lines = github.render(broken, min_severity="warning").splitlines()
    assert [line.split(" ", 1)[0] for line in lines[:-1]] == ["::error"] * 3
    assert lines[-1].endswith("FAIL: 3 error(s), 0 warning(s), 5 note(s) (5 not shown)")
    assert any(line.startswith("::notice ") for line in github.render(broken).splitlines())


def test_github_input_error_is_an_annotation_on_its_line():
    error = StackError("unknown key; did you mean 'python'?", file="stacks/a,b.toml", key="[system] pyhton", line=3)
    assert github.render_error(error) == ("::error file=stacks/a%2Cb.toml,line=3,title=compat%3A input error::"
                                          "[system] pyhton: unknown key; did you mean 'python'?\n")


def test_markdown_escapes_what_would_break_a_table(odd, broken):
    text = markdown_report.render([broken, odd])
    row = next(line for line in text.splitlines() if "requires-python:vllm==0.32.0" in line)
    assert row.count(" | ") == 2 and "Python \\>=3.11,\\<3.15" in row and f"`{BROKEN}:14`" in row
    assert "#### Why it cannot be resolved" in text and text.count("### compat: ") == 2


def test_markdown_quiet_keeps_the_verdict_and_the_errors(broken):
    text = markdown_report.render(broken, quiet=True)
    assert "#### Errors (3)" in text and "Notes" not in text and "Why it cannot" not in text
    assert "**FAIL: 3 error(s), 0 warning(s), 5 note(s) (5 not shown)**" in text


def test_json_exit_2_prints_an_error_object_and_the_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[system]\npython = "3.12"\n[hardware]\ngpu = "H9000"\n')
    result = invoke("check", bad, "--format", "json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert (error["type"], error["file"], error["key"], error["line"]) == ("StackError", str(bad), "[hardware] gpu", 4)
    assert result.stderr == f"compat: error: {error['text']}\n"


@pytest.mark.parametrize("fmt", ["markdown", "github"])
def test_every_structured_format_says_why_on_exit_2(tmp_path, fmt):
    result = invoke("check", tmp_path / "missing.toml", "--format", fmt)
    assert result.exit_code == 2 and "no such file" in result.stdout and "no such file" in result.stderr


def test_quiet_text_is_the_errors_and_the_verdict(broken):
    shown = text.render(broken, quiet=True)
    assert shown.startswith("Errors (3)\n") and "Notes" not in shown and "Why" not in shown
    assert shown.endswith("\n\nFAIL: 3 error(s), 0 warning(s), 5 note(s) (5 not shown)\n")
    result = invoke("check", EXAMPLES / "h200-vllm.toml", "-q")
    assert (result.exit_code, result.stdout) == (0, "OK: 0 error(s), 0 warning(s), 3 note(s) (3 not shown)\n")


def test_min_severity_hides_findings_but_not_the_verdict():
    result = invoke("check", EXAMPLES / "h200-vllm.toml", "--min-severity", "warning", "--format", "json")
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["findings"] == [] and data["summary"]["infos"] == 3


def test_json_findings_say_the_file_line_and_key_they_concern(odd):
    findings = {f["id"]: f["location"] for f in odd.to_dict()["findings"]}
    assert findings["option-value:vllm:kv-cache-dtype"] == {
        "file": odd.stack.path, "line": 9, "key": "[options.vllm] kv-cache-dtype"}
    assert findings["vllm.cors-default-restricted"]["line"] == 6  # a rule of vLLM: its pin
    assert findings["glibc:unknown"] == {"file": odd.stack.path, "line": 1, "key": "[system] glibc"}  # not set: the header


def test_a_stack_given_as_a_mapping_has_no_lines():
    report = compat.check({"system": {"python": "3.10"}, "packages": {"vllm": "0.32.0"}})
    location = report.location(report.errors[0])
    assert (location.file, location.line, location.key_text) == (None, None, "[packages] vllm")
    VALIDATOR.validate(json.loads(sarif.render(report)))
    assert "locations" in json.loads(sarif.render(report))["runs"][0]["results"][0]


def test_a_package_from_a_requirements_file_points_at_its_line(broken):
    from compat.stack import Place

    merged = broken.replace(stack=broken.stack.replace(places={"vllm": Place("requirements.txt", 2)}))
    location = merged.location(merged.errors[0])
    assert (location.file, location.line, location.key_text) == ("requirements.txt", 2, "[packages] vllm")


def test_every_finding_family_the_docs_list_has_help_text():
    import re

    from compat.engine.findings import FAMILIES

    doc = (Path(__file__).parent.parent / "docs" / "stack-toml.md").read_text(encoding="utf-8")
    listed = doc[doc.index("Those the engine makes:"):doc.index("A rule of the database has its own ID")]
    families = set(re.findall(r"`([a-z-]+)(?::|`)", listed))
    assert len(families) > 15 and families <= set(FAMILIES), families - set(FAMILIES)
