"""compat resolve, explanations, suggestions, compat why and the round budget."""

from __future__ import annotations

import json

from click.testing import CliRunner

from compat import check
from compat.cli import cli

from .conftest import EXAMPLES

VLLM_AND_SGLANG = '[system]\npython = "3.12"\ncuda = "13.0"\n[packages]\nvllm = "0.32.0"\nsglang = "0.5.22"\n'


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_resolve_pins_every_range_and_the_tracked_dependencies(tmp_path):
    result = run("resolve", EXAMPLES / "h200-vllm.toml")
    assert result.exit_code == 0, result.stderr
    assert 'transformers = "5.19.0"' in result.stdout
    assert 'flashinfer-python = "0.7.0.post1"' in result.stdout  # pulled in by vllm's pin
    out = tmp_path / "pinned.toml"
    out.write_text(result.stdout)
    report = check(out)
    assert report.ok
    assert all(not any(c in v for c in "<>=,") for v in report.packages.values())


def test_resolve_keeps_the_rest_of_the_stack(tmp_path):
    result = run("resolve", EXAMPLES / "vllm-omni-fa3-fp8.toml")
    assert result.exit_code == 0
    for text in ('gpu = "L20X"', 'diffusion-kv-cache-dtype = "fp8"', "head_dim = 128", 'family = "wan2.2"'):
        assert text in result.stdout


def test_resolve_writes_atomically_with_output(tmp_path):
    target = tmp_path / "out" / "pinned.toml"
    result = run("resolve", EXAMPLES / "h200-vllm.toml", "-o", target)
    assert result.exit_code == 0 and target.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["pinned.toml"]
    assert check(target).ok


def test_resolve_requirements_format_comments_applications():
    result = run("resolve", EXAMPLES / "h200-vllm.toml", "--format", "requirements")
    assert "vllm==0.32.0" in result.stdout.splitlines()
    app = run("resolve", EXAMPLES / "ltx2-fp8-a100.toml", "--format", "requirements")
    # fp8-scaled-mm below compute capability 8.9 is an inferred warning, which binds no resolution
    assert app.exit_code == 0
    assert "# ltx-2==1.5.0  (ltx-2 is an application, not a package on the index)" in app.stdout.splitlines()


def test_resolve_failure_explains_and_writes_nothing(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text(VLLM_AND_SGLANG)
    target = tmp_path / "pinned.toml"
    result = run("resolve", stack, "-o", target)
    assert result.exit_code == 1
    assert "Why it cannot be resolved" in result.stderr
    assert "sglang 0.5.22 requires torch==2.14.1" in result.stderr
    assert not target.exists()


def test_resolve_prefers_finals_unless_asked(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nvllm-omni = ">=0.30"\n')
    assert 'vllm-omni = "0.30.0"' in run("resolve", stack).stdout
    assert 'vllm-omni = "0.32.0rc1"' in run("resolve", stack, "--pre").stdout
    stack.write_text('[system]\npython = "3.12"\n[packages]\nvllm-omni = ">=0.32.0rc1"\n')
    assert 'vllm-omni = "0.32.0rc1"' in run("resolve", stack).stdout  # the specifier names one


def test_max_rounds_budget_is_a_clear_exit_2(tmp_path):
    result = run("resolve", EXAMPLES / "h200-vllm.toml", "--max-rounds", "1")
    assert result.exit_code == 2
    assert "too complex" in result.stderr and "--max-rounds" in result.stderr
    assert run("check", EXAMPLES / "h200-vllm.toml", "--max-rounds", "1").exit_code == 2


def test_explanation_is_a_derivation_in_text_and_json(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text(VLLM_AND_SGLANG)
    data = json.loads(run("check", stack, "--format", "json").stdout)
    explanation = data["explanation"]
    # vllm 0.32.0 and sglang 0.5.22 pin different torch, xgrammar, flashinfer-python...: one of them is the explanation
    assert explanation["conclusion"].startswith("no version of ")
    whos = [[step["who"] for step in chain] for chain in explanation["chains"]]
    assert ["the stack", "sglang 0.5.22"] in whos and ["the stack", "vllm 0.32.0"] in whos
    assert explanation["text"].startswith("Because the stack requires")


def test_explanation_reads_virtual_packages_as_machine_facts():
    report = check({"system": {"python": "3.12", "cuda": "13.0"}, "hardware": {"gpu": "V100"}, "packages": {"torch": "2.15.0"}})
    text = report.explanation.text()
    assert "the V100's compute capability is 7.0" in text
    assert "torch 2.15.0 requires compute capability >=7.5 when CUDA >=13 (rule torch.cuda-13.architectures)" in text


def test_no_explanation_for_a_stack_that_resolves():
    assert check(EXAMPLES / "h200-vllm.toml").explanation is None


def test_suggestions_are_verified_and_smallest_first():
    report = check({"system": {"python": "3.12", "cuda": "13.0"}, "packages": {"vllm": "0.32.0", "transformers": "5.20.1"}})
    # one component each; vllm moves one release, transformers two (5.20.1 -> 5.20.0 -> 5.19.0)
    assert [(c.name, c.new, s.distance) for s in report.suggestions for c in s.changes] == [
        ("vllm", "0.33.0", 1),
        ("transformers", "5.19.0", 2),
    ]
    for suggestion in report.suggestions:
        assert check(suggestion.stack).errors == []


def test_suggestion_can_change_python():
    report = check({"system": {"python": "3.10"}, "hardware": {"gpu": "H100"}, "packages": {"vllm": "0.32.0"}})
    assert any(c.name == "python" and c.new == "3.11" for s in report.suggestions for c in s.changes)


def test_upgrade_suggestion_says_what_else_moves():
    report = check({"system": {"python": "3.12", "cuda": "13.0"}, "packages": {"vllm": "0.32.0", "transformers": "5.20.1"}})
    texts = [s.text() for s in report.suggestions]
    upgrade = next(t for t in texts if t.startswith("use vllm 0.33.0 (upgrade from 0.32.0)"))
    assert "which also moves" in upgrade and "torch to 2.14.0" in upgrade
    # one release away ranks before two releases away
    assert texts.index(upgrade) < texts.index("use transformers 5.19.0 (downgrade from 5.20.1)")


def test_why_lists_every_constraint_with_its_origin():
    result = run("why", "transformers")
    assert result.exit_code == 0
    assert "vllm 0.32.0: transformers>=5.16.1,<5.20.0 [metadata]" in result.stdout


def test_why_with_a_stack_marks_what_binds(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nvllm = "0.32.0"\ntransformers = "5.20.1"\n')
    out = run("why", "transformers", "--stack", stack).stdout
    assert " ✗ vllm 0.32.0: transformers>=5.16.1,<5.20.0 [metadata]" in out


def test_why_rules_of_the_component_itself():
    out = run("why", "ltx-2").stdout
    assert "rule ltx-2.fp8-scaled-mm.compute-capability" in out


def test_why_unknown_name_exits_2():
    result = run("why", "vllmm")
    assert result.exit_code == 2 and "did you mean 'vllm'" in result.stderr
