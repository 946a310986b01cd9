"""compat upgrade, diff and outdated; the Markdown of plans; and the
suggestions of a failing check (the search that plans use too)."""

from __future__ import annotations

import json
import re
import sys

import pytest
from click.testing import CliRunner

import compat
from compat import check
from compat.cli import cli
from compat.engine.suggest import MAX_CHECKS, search
from compat.formats.markdown import render_outdated, render_plan

from .conftest import EXAMPLES, stack_table


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def moves(plan):
    return {m.component: (m.old, m.new) for m in plan.moves}


def crossed(plan, category=None):
    return {c.id for c in plan.crossings if category is None or c.category == category}


def texts(report):
    return [s.text() for s in report.suggestions]


# -- the suggestions of a failing check ------------------------------------------------------------

BROKEN_WITH_A_NEW_FLAG = stack_table({"vllm": "0.32.0", "transformers": "5.20.1", "flashinfer-python": "0.7.2"},
                                     "H100", python="3.10", options={"vllm": {"grpc-port": 50051}})


def test_a_fix_of_three_changes_is_found_and_verified(db):
    # --grpc-port came with vLLM 0.32.0: no older vLLM may be proposed, so every fix takes three changes
    report = check(BROKEN_WITH_A_NEW_FLAG, database=db)
    assert [len(s.changes) for s in report.suggestions] == [3, 3]
    assert texts(report)[0].startswith("use Python 3.11 (upgrade from 3.10; not a change pip can make) and "
                                       "vllm 0.33.0 (upgrade from 0.32.0) and flashinfer-python 0.7.2.post1")
    for suggestion in report.suggestions:
        assert check(suggestion.stack, database=db).errors == []
        assert all(c.new == "0.33.0" for c in suggestion.changes if c.name == "vllm")  # never an older vLLM


def test_the_broken_upgrade_example_costs_one_full_check(db):
    # the search verifies only combinations that already fit together
    stack = compat.load_stack(EXAMPLES / "broken-upgrade.toml", db)
    outcome = search(stack, db, check(stack, database=db).errors)
    assert [s.text().split(", which")[0] for s in outcome.suggestions] == [
        "use vllm 0.30.0 (downgrade from 0.32.0) and flashinfer-python 0.6.18.post1 (downgrade from 0.7.2)"]
    assert outcome.checks == 1 <= MAX_CHECKS


def test_a_newer_driver_is_a_suggestion_pip_cannot_make(db):
    report = check(stack_table({"vllm": "0.32.0"}, "H100", driver="550.54.15"), database=db)
    (suggestion,) = report.suggestions
    (change,) = suggestion.changes
    assert (change.kind, change.new, change.by_pip) == ("driver", "580", False)
    assert suggestion.text() == "use NVIDIA driver 580 or newer (upgrade from 550.54.15; not a change pip can make)"
    assert check(suggestion.stack, database=db).ok


def test_no_suggestion_names_a_release_that_predates_a_flag_the_stack_sets(db):
    lockstep = {"vllm-omni": "0.32.0rc1", "vllm": "0.31.0"}
    model = {"name": "Wan2.2-TI2V-5B", "head_dim": 128}
    plain = check(stack_table(lockstep, "H100", model=model), database=db)
    # (with the packages its own pins move: the check resolves the whole install)
    assert any(t.startswith("use vllm-omni 0.31.0rc1 (downgrade from 0.32.0rc1)") for t in texts(plain))
    # --enable-cuda-graph-decode came with 0.32.0rc1 (its parser's catalog): 0.31.0rc1 has no such flag
    graphs = check(stack_table(lockstep, "H100", model=model,
                               options={"vllm-omni": {"enable-cuda-graph-decode": True}}), database=db)
    assert texts(graphs) and all("vllm-omni 0.31" not in t for t in texts(graphs))


def test_an_untracked_pin_moves_to_what_its_requirer_pins(db):
    stack = stack_table({"vllm": {"version": "0.32.0", "extras": ["tensorizer"]}, "tensorizer": "2.9.0"}, "H100",
                        driver="580.95.05")
    assert texts(check(stack, database=db)) == ["use tensorizer 2.10.1 (upgrade from 2.9.0)"]


def test_a_flag_the_failing_rule_tests_can_be_the_change(db):
    stack = stack_table({"vllm-omni": "0.32.0rc1"}, "A100 80GB", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}},
                        model={"family": "wan2.2", "head_dim": 128})
    report = check(stack, database=db)
    # (0.31.0rc1 has neither of the FA3 FP8 checks that refuse the A100: a downgrade is the other fix)
    assert "drop vllm-omni --diffusion-kv-cache-dtype (set to fp8)" in texts(report)
    assert [s.changes[0].kind for s in report.suggestions if s.text().startswith("drop")] == ["option"]


def test_when_nothing_is_within_reach_the_report_says_why(db):
    report = check({"system": {"python": "3.12"}, "packages": {"vllm": "0.32.0"}}, database=db)
    assert report.suggestions == []
    note = next(f for f in report.findings if f.id == "suggestions:none")
    assert note.severity == "info" and "the GPU (the stack has none)" in note.message
    assert report.to_dict()["suggestions"] == []


def test_a_failing_check_explains_without_networkx(db, monkeypatch):
    monkeypatch.setitem(sys.modules, "networkx", None)  # an import of it would fail
    report = check(EXAMPLES / "transformers-too-new.toml", database=db)
    assert report.explanation.text().startswith("Because the stack requires transformers==5.20.1,\nand because")


# -- compat upgrade: the seed's real upgrades ------------------------------------------------------

def test_vllm_0_31_to_0_32_moves_python_and_transformers_and_crosses_cors(db):
    plan = compat.upgrade(EXAMPLES / "vllm-0.31-py310.toml", to="vllm==0.32.0", database=db)
    assert plan.ok and plan.exit_code == 0
    assert moves(plan)["vllm"] == ("0.31.0", "0.32.0")
    python = next(m for m in plan.moves if m.component == "Python")
    assert (python.old, python.new, python.by_pip) == ("3.10", "3.11", False)
    assert "requires Python >=3.11" in python.why
    # the new window is >=5.16.1,<5.20.0: transformers takes its newest release in it
    transformers = next(m for m in plan.moves if m.component == "transformers")
    assert (transformers.new, transformers.why) == (
        "5.19.0", "vllm 0.32.0 requires transformers>=5.16.1,<5.20.0; the stack has transformers 5.15.0")
    assert "torch" not in moves(plan)  # 0.32.0 pins the stack's own torch 2.13.0
    assert {"vllm.cors-default-restricted", "vllm.removed-compile-cache-options"} <= crossed(plan, "behaviour-change")
    assert plan.moves[0].component == "vllm" and plan.moves[0].why == "requested (--to vllm==0.32.0)"


def test_vllm_0_32_to_0_33_moves_torch_and_flashinfer(db):
    plan = compat.upgrade(EXAMPLES / "h200-vllm.toml", to=["vllm==0.33.0"], database=db)
    assert plan.ok
    torch = next(m for m in plan.moves if m.component == "torch")
    assert (torch.old, torch.new, torch.kind) == ("2.13.0", "2.14.0", "package")
    assert torch.why == "vllm 0.33.0 requires torch==2.14.0; the stack has torch 2.13.0"
    flashinfer = next(m for m in plan.moves if m.component == "flashinfer-python")
    assert (flashinfer.old, flashinfer.new, flashinfer.kind) == ("0.7.0.post1", "0.7.2.post1", "resolved")
    assert flashinfer.why == "vllm 0.33.0 requires flashinfer-python==0.7.2.post1"
    assert "flashinfer.precompiled-kernels-refresh" in crossed(plan, "note")
    # the flashinfer rules about MoE and FP8 models: this stack gives no [model], so they are undecided, not shown
    assert {c.id for c in plan.undecided} >= {"flashinfer.moe.cudnn-frost-backend"}
    assert not crossed(plan) & {c.id for c in plan.undecided}


def test_ltx2_to_1_5_0_on_two_blackwell_gpus(db):
    stack = stack_table({"ltx-2": "1.4.0"}, "B200", count=2, driver="580.95.05")
    plan = compat.upgrade(stack, to="ltx-2==1.5.0", database=db)
    assert plan.ok and moves(plan) == {"ltx-2": ("1.4.0", "1.5.0")}
    assert crossed(plan, "fixed") == {"ltx-2.long-video.grey-tail-frames", "ltx-2.blackwell.stage5-deadlock"}
    assert crossed(plan, "behaviour-change") == {"ltx-2.output-not-bit-identical",
                                                 "ltx-2.multi-gpu.audio-cross-attention"}
    fixed = next(c for c in plan.crossings if c.id == "ltx-2.blackwell.stage5-deadlock")
    assert fixed.conditions == "GPU architecture is blackwell" and fixed.basis and "fixed in 1.5.0" in fixed.message
    # one Hopper GPU: neither the Blackwell fix nor the multi-GPU changes are this stack's
    single = compat.upgrade(stack_table({"ltx-2": "1.4.0"}, "H100"), to="ltx-2==1.5.0", database=db)
    assert crossed(single, "fixed") == {"ltx-2.long-video.grey-tail-frames"}
    assert crossed(single, "behaviour-change") == {"ltx-2.output-not-bit-identical"}


def test_comfyui_0_42_1_fixes_the_moss_image_crash_only_for_moss_image(db):
    moss = compat.upgrade(stack_table({"comfyui": "0.42.0"}, "RTX 5090", model={"name": "MOSS-Image"}),
                          to="comfyui==0.42.1", database=db)
    assert crossed(moss, "fixed") == {"comfyui.moss-image.template-crash"}
    unknown = compat.upgrade(stack_table({"comfyui": "0.42.0"}, "RTX 5090"), to="comfyui==0.42.1", database=db)
    assert not crossed(unknown)  # never extrapolated: the stack does not say which model it serves
    assert [(c.id, c.unknown) for c in unknown.undecided] == [
        ("comfyui.moss-image.template-crash", "model family is moss-image")]


def test_transformers_5_20_0_to_5_20_2_fixes_what_applies_to_the_model(db):
    stack = stack_table({"transformers": "5.20.0"}, "H100", count=8, options={"transformers": {"bf16": True}},
                        model={"name": "Qwen3-Next-80B-A3B-Instruct"})  # MoE, not multimodal
    plan = compat.upgrade(stack, to="transformers==5.20.2", database=db)
    assert crossed(plan, "fixed") == {"transformers.deepgemm-megamoe-ep", "transformers.old-torch-loading",
                                      "transformers.ep-zero-expert-gradients"}
    assert "transformers.generate-input-dict-cast" not in {c.id for c in plan.undecided}


def test_a_note_measured_on_one_gpu_does_not_appear_on_another(db):
    model = {"name": "GLM-5", "checkpoint_dtype": "bf16"}  # MoE
    h100 = compat.upgrade(stack_table({"vllm": "0.32.0"}, "H100", count=2, model=model, driver="580.95.05"),
                          to="vllm==0.33.0", database=db)
    h200 = compat.upgrade(stack_table({"vllm": "0.32.0"}, "H200", count=2, model=model, driver="580.95.05"),
                          to="vllm==0.33.0", database=db)
    assert "flashinfer.h100.bf16-ep-moe" in crossed(h100, "note")
    assert "flashinfer.h100.bf16-ep-moe" not in crossed(h200) | {c.id for c in h200.undecided}


def test_a_bare_name_takes_the_newest_release_that_can_work(db):
    # vLLM 0.34.0 pins flashinfer-python 0.7.3, which the index never had
    plan = compat.upgrade(EXAMPLES / "h200-vllm.toml", to="vllm", database=db)
    assert plan.ok and moves(plan)["vllm"] == ("0.32.0", "0.33.0")


CPU_ONLY = '[system]\npython = "3.12"\n[packages]\nltx-2 = "1.5.0"\n'


def test_no_plan_is_exit_1_with_the_reason(tmp_path):
    stack = tmp_path / "cpu.toml"
    stack.write_text(CPU_ONLY)
    result = run("upgrade", stack, "--to", "vllm==0.33.0", "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["new"] is None and data["changes"] == []
    assert data["reason"].startswith("vllm 0.33.0 installs the package index's CUDA 13.0 build, which needs an NVIDIA GPU")
    assert "the GPU (the stack has none)" in data["reason"]
    assert data["check"]["ok"] is False


@pytest.mark.parametrize("target, message", [
    ("vllm==0.99", "the database holds no release of vllm that ==0.99 admits (the newest it holds is 0.34.0)"),
    ("vlm", "the database does not track 'vlm'; did you mean 'vllm'?"),
    ("vllm==x", "'==x' is neither a version nor a PEP 440 specifier"),
    ("python>=3.11", "give python one version, such as python==3.12"),
])
def test_a_target_compat_cannot_read_is_one_line_and_exit_2(tmp_path, target, message):
    out = tmp_path / "plan.md"
    result = run("upgrade", EXAMPLES / "h200-vllm.toml", "--to", target, "-o", out)
    assert result.exit_code == 2
    assert result.stderr.startswith("compat: error: --to: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def test_the_library_refuses_arguments_of_the_wrong_type(db):
    with pytest.raises(TypeError, match="to must be"):
        compat.upgrade(EXAMPLES / "h200-vllm.toml", to=[3], database=db)
    with pytest.raises(TypeError, match="a stack must be"):
        compat.outdated(42, database=db)


# -- compat diff and compat outdated ----------------------------------------------------------------

def test_diff_of_a_pull_request_says_what_the_file_changed_and_what_follows(tmp_path):
    out = tmp_path / "plan.json"
    result = run("diff", EXAMPLES / "h200-vllm.toml", EXAMPLES / "h200-vllm-0.33.toml", "--format", "json", "-o", out)
    assert result.exit_code == 0 and result.stdout == ""
    data = json.loads(out.read_text())
    rows = {row["component"]: row for row in data["changes"]}
    assert rows["vllm"]["why"] == "changed in the new stack file" and rows["vllm"]["by_pip"] is True
    assert rows["transformers"]["why"] == "vllm 0.32.0 requires transformers>=5.16.1,<5.20.0; vllm moves to 0.33.0"
    assert rows["flashinfer-python"]["kind"] == "resolved"
    assert data["crossings"][0]["source_detail"]["commit"] == "d84335d"


def test_diff_to_a_failing_stack_is_exit_1_with_the_changes_that_work(tmp_path):
    new = tmp_path / "new.toml"
    new.write_text((EXAMPLES / "h200-vllm.toml").read_text().replace('vllm = "0.32.0"', 'vllm = "0.33.0"'))
    result = run("diff", EXAMPLES / "h200-vllm.toml", new)
    assert result.exit_code == 1
    assert "vllm 0.33.0 requires torch==2.14.0; the stack has torch 2.13.0" in result.stdout
    assert "use torch 2.14.0 (upgrade from 2.13.0)" in result.stdout


def test_outdated_says_what_fits_and_what_blocks_the_newest(db):
    report = compat.outdated(EXAMPLES / "vllm-0.31-py310.toml", database=db)
    entries = {e.name: e for e in report.entries}
    assert (entries["transformers"].fits, entries["transformers"].newest) == ("5.17.0", "5.25.0")
    assert entries["transformers"].status == "partly blocked"
    assert entries["vllm"].fits is None and entries["vllm"].status == "blocked"
    assert any("requires flashinfer-python==0.7.3" in b for b in entries["vllm"].blocked_by)


# -- Markdown for pull-request comments ---------------------------------------------------------------

_TAG = re.compile(r"(?<!\\)<(/?)([a-z]*)>")
_CELL = re.compile(r"(?<!\\)\|")


def markdown_structure(text: str) -> dict:
    """A strict reading of the Markdown compat writes: the title, the tables
    (header, delimiter, rows with as many cells each), and the folded
    sections (each <details> opened, summarized and closed, with blank lines
    around its body so that GitHub renders it). The only raw HTML allowed is
    <details>, <summary> and <br>; any other < must be escaped. Returns the
    tables (rows of cells) and the summaries."""
    assert text.endswith("\n") and not text.endswith("\n\n")
    lines = text.split("\n")[:-1]
    assert lines[0].startswith("### ") and lines[1] == ""
    tables, summaries, table, depth, delimited = [], [], None, 0, False
    for index, line in enumerate(lines):
        if line.startswith("|"):
            assert line.endswith("|") and not line.endswith("\\|"), line
            cells = [c.strip() for c in _CELL.split(line)[1:-1]]
            if table is None:
                assert lines[index - 1] == "", "a table starts after a blank line"
                table = [cells]
            elif not delimited:
                assert all(re.fullmatch(r"-{3,}", c) for c in cells), "the delimiter row follows the header"
                delimited = True
            else:
                assert delimited, "rows come after the delimiter row"
                table.append(cells)
            assert len(cells) == len(table[0]), f"row {line!r} has {len(cells)} cells, the header {len(table[0])}"
            continue
        if table is not None:
            assert line == "" and delimited, "a table has a delimiter row, and a blank line after it"
            tables.append(table)
            table, delimited = None, False
        for closing, tag in _TAG.findall(line):
            assert tag in ("details", "summary", "br"), f"raw HTML <{tag}> in {line!r}"
        if line == "<details>":
            depth += 1
            summary = re.fullmatch(r"<summary>(.+)</summary>", lines[index + 1])
            assert summary and lines[index + 2] == "", "<details> is followed by its <summary> and a blank line"
            summaries.append(summary.group(1))
        elif line == "</details>":
            assert depth > 0 and lines[index - 1] == "", "</details> closes an open section after a blank line"
            depth -= 1
        else:
            assert "details>" not in line and ("<summary>" not in line or index and lines[index - 1] == "<details>")
    if table is not None:
        assert delimited, "a table has a delimiter row"
        tables.append(table)
    assert depth == 0, "every <details> is closed"
    return {"tables": tables, "summaries": summaries}


def unescape(cell: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", cell)


def test_the_markdown_of_a_plan_is_a_table_and_folded_sections(db):
    plan = compat.upgrade(EXAMPLES / "vllm-0.31-py310.toml", to="vllm==0.32.0", database=db)
    text = render_plan(plan)
    read = markdown_structure(text)
    table, optional = read["tables"]  # what the upgrade requires, and apart what nothing requires
    assert table[0] == optional[0] == ["component", "from", "to", "why"]
    # every cell reads back as the plan says it, < and > included
    for rows, moves in ((table, plan.moves), (optional, plan.optional)):
        assert [[unescape(c) for c in row] for row in rows[1:]] == [
            [m.component + (" (resolved)" if m.kind == "resolved" else ""), m.old, m.new,
             m.why if m.by_pip else f"not a pip change: {m.why}"] for m in moves]
    assert read["summaries"] == [
        f"Not required ({len(plan.optional)}): newer releases of dependencies that an upgrade of everything "
        "would also take", "Behaviour changes (2)"]
    assert text.splitlines()[2] == f"**{plan.summary()}**"


def test_the_markdown_of_a_diff_a_failing_plan_and_outdated_reads_strictly(db):
    diff = compat.diff(EXAMPLES / "h200-vllm.toml", EXAMPLES / "h200-vllm-0.33.toml", database=db)
    assert markdown_structure(render_plan(diff))["summaries"] == [
        "Notes (performance, requirements, scope) (1)", "Undecided: the stack does not say enough (2)"]
    failing = compat.upgrade({"system": {"python": "3.12"}, "packages": {"ltx-2": "1.5.0"}}, to="vllm==0.33.0",
                             database=db)
    assert markdown_structure(render_plan(failing))["summaries"][0].startswith("The check with the targets alone")
    outdated = compat.outdated(EXAMPLES / "h200-vllm.toml", database=db)
    (table,) = markdown_structure(render_outdated(outdated))["tables"]
    assert table[0] == ["package", "current", "fits", "newest", "blocked by"] and len(table) == 4
    assert [unescape(row[4]) for row in table[1:]] == ["; ".join(e.blocked_by) for e in outdated.entries]


def test_a_markdown_library_reads_the_plan_as_github_renders_it(db):
    """markdown-it-py (CommonMark, with GitHub's tables) reads the plan: a
    table whose header and rows are the plan's moves (then, folded, the moves
    nothing requires), and the folded sections as HTML blocks, not as text
    inside a paragraph."""
    from markdown_it import MarkdownIt

    plan = compat.upgrade(EXAMPLES / "vllm-0.31-py310.toml", to="vllm==0.32.0", database=db)
    tokens = MarkdownIt("commonmark").enable("table").parse(render_plan(plan))
    assert [t.type for t in tokens].count("table_open") == 2
    cells, row = [], None
    for token in tokens:
        if token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append(token.content)
        elif token.type == "tr_close":
            cells.append(row)
            row = None
    assert cells[0] == ["component", "from", "to", "why"]
    shown = [(unescape(r[0]), r[1], r[2]) for r in cells[1:] if r != ["component", "from", "to", "why"]]
    assert shown == [(m.component + (" (resolved)" if m.kind == "resolved" else ""), m.old, m.new)
                     for m in plan.moves + plan.optional]
    html = [t.content for t in tokens if t.type == "html_block"]
    assert any(block.startswith("<details>") and "<summary>" in block for block in html), html
    assert sum(block.count("</details>") for block in html) == sum(block.count("<details>") for block in html)
    inline = " ".join(t.content for t in tokens if t.type == "inline")
    assert "<details>" not in inline and "</details>" not in inline


def test_a_plan_lists_what_the_target_forces_and_apart_what_nothing_requires(db):
    """vLLM 0.31 to 0.32 on Python 3.10: the move to Python 3.11 lets the new
    stack's resolution take newer releases of two dozen dependencies, and
    nvidia-cudnn-frontend 1.32.0 with its CUTLASS DSL packages; none of that is
    required (pip's default upgrade strategy keeps them), so the plan lists them
    apart. The CUTLASS DSL packages that tokenspeed-mla 0.2.15 does force stay,
    each with the requirement that forces it, read from the install that keeps
    the rest."""
    plan = compat.upgrade(EXAMPLES / "vllm-0.31-py310.toml", to="vllm==0.32.0", database=db)
    required = {m.component: m for m in plan.moves}
    optional = {m.component: m for m in plan.optional}
    assert "nvidia-cudnn-frontend" in optional and "nvidia-cudnn-frontend" not in required
    assert {"annotated-doc", "numpy", "pillow"} <= set(optional)
    assert required["nvidia-cutlass-dsl"].why == "tokenspeed-mla 0.2.15 requires nvidia-cutlass-dsl>=4.8.0"
    assert required["nvidia-cutlass-dsl-libs-base"].why == \
        "nvidia-cutlass-dsl 4.8.0 requires nvidia-cutlass-dsl-libs-base==4.8.0"
    assert all("newest release that fits" not in m.why for m in plan.moves if m.kind == "resolved")
    assert all(m.why.startswith(f"not required ({m.component} {m.old} still fits)") for m in plan.optional)
    assert plan.ok and f"({len(plan.optional)} more not required)" in plan.summary()
    assert [c["component"] for c in plan.to_dict()["optional_changes"]] == sorted(optional)
