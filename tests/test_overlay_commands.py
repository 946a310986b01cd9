"""A user's overlay holds in every command that reads a stack, not only in
check: upgrade, diff, outdated and matrix (and their library functions) lay
a stack's ``[compat] overlay`` (an axes file's ``[base.compat] overlay``),
``--db-overlay`` and ``COMPAT_DB_OVERLAY`` over the database, and a stack
written back keeps its ``[compat]`` keys (knowledge/layers.py)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import compat
from compat import Database
from compat.cli import cli
from compat.formats.pinned import stack_toml
from compat.knowledge.layers import OVERLAY_ENV
from compat.knowledge.binding import load_stack

from .conftest import ROOT
from .test_layers import ACME_SOURCES, overlay

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = str(ROOT / "data")
AUDIT = "acme.vllm.033-audit"  # the overlay's rule: it fires on vLLM 0.33 and later

ORG = {
    "constraints/_sources.toml": ACME_SOURCES,
    "constraints/vllm.toml": f"""\
        schema = 1

        [component]
        name = "vllm"

        [[rule]]
        id = "{AUDIT}"
        kind = "known-issue"
        severity = "warning"
        releases = ">=0.33"
        message = "ACME has not audited vLLM 0.33 yet"
        source = "acme-policy"
        """,
    # a private service the bundled database does not know: each release follows one vLLM API
    "constraints/acme-router.toml": """\
        schema = 1

        [component]
        name = "acme-router"
        kind = "application"

        [[release]]
        version = "3.2.0"
        date = 2026-11-02
        requires = ["vllm>=0.31,<0.33"]
        reason = "3.2.0 speaks the OpenAI server API of vLLM 0.31 and 0.32"
        source = "acme-policy"

        [[release]]
        version = "3.3.0"
        date = 2026-11-20
        requires = ["vllm>=0.33,<0.34"]
        reason = "3.3.0 speaks the OpenAI server API of vLLM 0.33"
        source = "acme-policy"
        """,
}

MACHINE = """\
[system]
python = "3.12"
cuda = "13.0"
driver = "580.95.05"
glibc = "2.35"

[hardware]
gpu = "H200"
"""
LAYERED = '\n[compat]\noverlay = "../org"\n'  # from deploy/ to the overlay beside it


@pytest.fixture
def org(tmp_path: Path) -> Path:
    return overlay(tmp_path / "org", ORG)


def stack_file(path: Path, packages: str, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MACHINE + "\n[packages]\n" + textwrap.dedent(packages) + tail)
    return path


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, [*args, "--db", DATA], env={OVERLAY_ENV: None, **(env or {})})


def local(findings: list[dict]) -> list[str]:
    return [f["id"] for f in findings if f["layer"] == "local"]


def chosen(org: Path) -> list[tuple[list[str], dict[str, str]]]:
    """No overlay, then the two ways of choosing one on the command line."""
    return [([], {}), (["--db-overlay", str(org)], {}), ([], {OVERLAY_ENV: str(org)})]


# -- upgrade ------------------------------------------------------------------------------------

def test_upgrade_moves_the_overlay_packages_and_crosses_its_rules(tmp_path, org):
    stack = stack_file(tmp_path / "deploy" / "stack.toml", 'vllm = "0.32.0"\nacme-router = "3.2.0"\n', LAYERED)
    result = run("upgrade", str(stack), "--to", "vllm==0.33.0", "--format", "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    moves = {m["component"]: (m["from"], m["to"], m["why"]) for m in plan["changes"]}
    assert moves["acme-router"][:2] == ("3.2.0", "3.3.0")
    assert "acme-router 3.2.0 requires vllm>=0.31,<0.33" in moves["acme-router"][2]
    assert [(c["id"], c["category"], c["layer"]) for c in plan["crossings"] if c["id"] == AUDIT] == \
        [(AUDIT, "introduced", "local")]
    assert all(c["layer"] == "curated" for c in plan["crossings"] if c["id"] != AUDIT)
    assert local(plan["check"]["findings"]) == [AUDIT]
    text = run("upgrade", str(stack), "--to", "vllm==0.33.0").stdout
    assert "  - vllm 0.32.0 -> 0.33.0: [local] " in text  # the crossed rule is marked in the text as in the check
    # a target the overlay alone holds releases of
    result = run("upgrade", str(stack), "--to", "acme-router", "--format", "json")
    assert result.exit_code == 0, result.output
    assert {m["component"]: m["to"] for m in json.loads(result.stdout)["changes"]}["acme-router"] == "3.3.0"
    plan = compat.upgrade(stack, "vllm==0.33.0", database=Database.load(DATA))
    assert plan.ok and AUDIT in [c.id for c in plan.crossings]


def test_upgrade_with_an_overlay_chosen_on_the_command_line(tmp_path, org):
    stack = stack_file(tmp_path / "stack.toml", 'vllm = "0.32.0"\n')
    for (args, env), crossed in zip(chosen(org), (False, True, True)):
        result = run("upgrade", str(stack), "--to", "vllm==0.33.0", "--format", "json", *args, env=env)
        assert result.exit_code == 0, result.output
        plan = json.loads(result.stdout)
        assert (AUDIT in [c["id"] for c in plan["crossings"]]) is crossed
        assert local(plan["check"]["findings"]) == ([AUDIT] if crossed else [])


# -- diff ---------------------------------------------------------------------------------------

def test_diff_reads_the_overlay_of_the_stacks(tmp_path, org):
    old = stack_file(tmp_path / "deploy" / "old.toml", 'vllm = "0.32.0"\nacme-router = "3.2.0"\n', LAYERED)
    new = stack_file(tmp_path / "deploy" / "new.toml", 'vllm = "0.33.0"\nacme-router = "3.3.0"\n', LAYERED)
    result = run("diff", str(old), str(new), "--format", "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert [c["id"] for c in plan["crossings"] if c["id"] == AUDIT] == [AUDIT]
    assert local(plan["check"]["findings"]) == [AUDIT]
    plan = compat.diff(old, new, database=Database.load(DATA))
    assert plan.ok and AUDIT in [c.id for c in plan.crossings]
    plain_old = stack_file(tmp_path / "old.toml", 'vllm = "0.32.0"\n')
    plain_new = stack_file(tmp_path / "new.toml", 'vllm = "0.33.0"\n')
    for (args, env), crossed in zip(chosen(org), (False, True, True)):
        result = run("diff", str(plain_old), str(plain_new), "--format", "json", *args, env=env)
        assert result.exit_code == 0, result.output
        assert (AUDIT in [c["id"] for c in json.loads(result.stdout)["crossings"]]) is crossed


# -- outdated -----------------------------------------------------------------------------------

def test_outdated_knows_the_overlay_packages(tmp_path, org):
    packages = 'vllm = "0.32.0"\nacme-router = "3.2.0"\n'
    stack = stack_file(tmp_path / "deploy" / "stack.toml", packages, LAYERED)
    entries = {e.name: e for e in compat.outdated(stack, database=Database.load(DATA)).entries}
    router = entries["acme-router"]
    assert (router.current, router.fits, router.newest, router.status) == ("3.2.0", None, "3.3.0", "blocked")
    assert "acme-router 3.3.0 requires vllm>=0.33,<0.34" in router.blocked_by[0]
    plain = stack_file(tmp_path / "stack.toml", packages)
    for (args, env), known in zip(chosen(org), (False, True, True)):
        result = run("outdated", str(plain), "--format", "json", *args, env=env)
        assert result.exit_code == 0, result.output
        router = {c["name"]: c for c in json.loads(result.stdout)["components"]}["acme-router"]
        assert (router["newest"], router["note"]) == (("3.3.0", None) if known else
                                                      (None, "not tracked by the database"))


# -- matrix -------------------------------------------------------------------------------------

AXES = """\
[base.system]
python = "3.12"
cuda = "13.0"
driver = "580.95.05"
glibc = "2.35"

[base.hardware]
gpu = "H200"

[axes]
vllm = ["0.32.0", "0.33.0"]
"""


def warned(matrix: dict) -> dict[str, list[str]]:
    """vLLM version of each row -> the local warnings of its check."""
    return {row["cell"]["vllm"]: local(row["warnings"]) for row in matrix["rows"]}


def test_matrix_reads_the_overlay_an_axes_file_names_relative_to_itself(tmp_path, org, monkeypatch):
    axes = tmp_path / "deploy" / "axes.toml"
    axes.parent.mkdir()
    axes.write_text(AXES + 'acme-router = ["3.2.0", "3.3.0"]\n\n[base.compat]\noverlay = "../org"\n')
    monkeypatch.chdir(tmp_path)  # where "../org" names no folder: the file's own folder counts
    result = run("matrix", str(axes), "--format", "json", "--explain-excluded")
    assert result.exit_code == 0, result.output
    matrix = json.loads(result.stdout)
    assert [row["cell"] for row in matrix["rows"]] == [{"vllm": "0.32.0", "acme-router": "3.2.0"},
                                                       {"vllm": "0.33.0", "acme-router": "3.3.0"}]
    assert warned(matrix) == {"0.32.0": [], "0.33.0": [AUDIT]}
    assert {e["finding"]["layer"] for e in matrix["excluded"]} == {"local"}
    rows = compat.matrix(axes, database=Database.load(DATA)).rows
    assert [r.values["acme-router"] for r in rows] == ["3.2.0", "3.3.0"]


def test_matrix_with_an_overlay_chosen_on_the_command_line(tmp_path, org):
    axes = tmp_path / "axes.toml"
    axes.write_text(AXES)
    for (args, env), audited in zip(chosen(org), (False, True, True)):
        result = run("matrix", str(axes), "--format", "json", *args, env=env)
        assert result.exit_code == 0, result.output
        assert warned(json.loads(result.stdout)) == {"0.32.0": [], "0.33.0": [AUDIT] if audited else []}


def test_an_axes_overlay_that_is_no_folder_names_its_key(tmp_path):
    axes = tmp_path / "axes.toml"
    axes.write_text(AXES + '\n[base.compat]\noverlay = "no/such/folder"\n')
    result = run("matrix", str(axes))
    assert result.exit_code == 2
    assert result.output == (f"compat: error: {axes}:14: [base.compat] overlay: no such folder: "
                             f"{tmp_path / 'no' / 'such' / 'folder'}\n")


# -- a stack written back -------------------------------------------------------------------------

def test_a_written_stack_keeps_its_compat_keys_and_its_overlay_folder(tmp_path, org):
    tail = LAYERED + 'strict = true\nrequire_known = true\nignore = ["untracked:*"]\n'
    stack = load_stack(stack_file(tmp_path / "deploy" / "stack.toml", 'vllm = "0.32.0"\n', tail), Database.load(DATA))
    pins = {"vllm": "0.32.0"}
    elsewhere = tmp_path / "out" / "deep" / "pinned.toml"
    elsewhere.parent.mkdir(parents=True)
    for text, written in ((stack_toml(stack, pins, {}, path=str(elsewhere)), "../../org"),
                          (stack_toml(stack, pins, {}), str(org))):
        table = tomllib.loads(text)["compat"]
        assert table == {"ignore": ["untracked:*"], "strict": True, "require_known": True, "overlay": written}
        elsewhere.write_text(text)
        again = load_stack(elsewhere, Database.load(DATA))
        assert (again.overlay, again.strict, again.require_known, again.ignore) == \
            (str(org), True, True, ("untracked:*",))
    assert os.path.isabs(tomllib.loads(stack_toml(stack, pins, {}))["compat"]["overlay"])


def test_compat_resolve_writes_the_overlay_relative_to_the_file_it_writes(tmp_path, org):
    stack = stack_file(tmp_path / "deploy" / "stack.toml", 'vllm = "0.32.0"\n', LAYERED)
    target = tmp_path / "out" / "pinned.toml"
    target.parent.mkdir()
    result = run("resolve", str(stack), "--format", "toml", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert tomllib.loads(target.read_text())["compat"]["overlay"] == "../org"
    assert load_stack(target, Database.load(DATA)).overlay == str(org)
