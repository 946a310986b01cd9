"""SARIF locations relative to the repository, as code scanning wants them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import compat
from compat.formats import sarif

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
STACK = '[system]\npython = "3.12"\ncuda = "13.0"\n'


# -- SARIF ---------------------------------------------------------------------


def _sarif_of(stack: Path) -> dict:
    log = json.loads(sarif.render(compat.check(str(stack))))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def _uris(log: dict) -> set[tuple[str, str | None]]:
    return {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["artifactLocation"].get("uriBaseId"))
            for r in log["runs"][0]["results"] if r["locations"]}


def test_sarif_names_a_file_of_the_repository_relative_to_its_root(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy" / "prod stacks").mkdir(parents=True)
    stack = repo / "deploy" / "prod stacks" / "stack.toml"
    stack.write_text(STACK + '[packages]\nvllm = "0.32.0"\n', encoding="utf-8")
    monkeypatch.chdir(repo / "deploy")  # below the root: the URI is still the root's
    log = _sarif_of(Path("prod stacks") / "stack.toml")
    assert _uris(log) == {("deploy/prod%20stacks/stack.toml", "%SRCROOT%")}
    assert log["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(STACK + '[packages]\nvllm = "0.32.0"\n', encoding="utf-8")
    assert _uris(_sarif_of(outside)) == {(outside.as_uri(), None)}


def test_sarif_without_a_repository_is_relative_to_the_working_folder(tmp_path, monkeypatch):
    if any((parent / ".git").exists() for parent in tmp_path.parents):
        pytest.skip("the temporary folder is inside a repository")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "bad.toml").write_text("[system]\npython = 3.10\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(compat.StackError) as info:
        compat.load_stack("ci/bad.toml")
    log = json.loads(sarif.render_error(info.value))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    [note] = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "ci/bad.toml",
                                                                            "uriBaseId": "%SRCROOT%"}
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
