"""SGLang's FP8 paths below compute capability 8.9, derived from its wheels
(tools/derive_sglang_fp8.py, data/derived/sglang.fp8.toml): the script's
readers on code of the shapes the releases have, the runs it makes, and each
rule's edges (releases, hardware, flag, environment) in the bundled database.
"""

from __future__ import annotations

import ast
import functools

import pytest

import compat

from .conftest import load_tool

tool = load_tool("derive_sglang_fp8")
check = functools.partial(compat.check, suggest=False)

MOE = "sglang.derived.0.5.11.fp8-moe.triton"
NO_MARLIN = "sglang.derived.0.5.0rc2.fp8-linear.no-marlin"
BELOW = "sglang.derived.0.5.8.post1.fp8-linear.below-marlin"
NEEDS_VLLM = "sglang.derived.0.5.5.post3.fp8-linear.marlin-needs-vllm"


# -- the script's readers -------------------------------------------------------------------------


def _linear(init: str) -> ast.ClassDef:
    body = "\n".join("  " + line for line in init.strip().splitlines())
    return ast.parse(f"class Fp8LinearMethod:\n def __init__(self):\n{body}\n").body[0]


def test_marlin_only_from_the_environment_variable_is_env():
    cls = _linear('self.use_marlin = get_bool_env_var("SGLANG_FORCE_FP8_MARLIN") and MARLIN_FP8_AVAILABLE\n'
                  "if self.block_quant:\n self.use_marlin = False")
    assert tool.linear_marlin(cls) == ("env", 3)  # the class and def lines come first


def test_marlin_through_a_local_of_can_auto_enable_is_auto():
    cls = _linear("self.use_marlin = False\nforce = get_bool_env_var('SGLANG_FORCE_FP8_MARLIN')\n"
                  "auto_enable = can_auto_enable_marlin_fp8()\nself.use_marlin = force or auto_enable")
    assert tool.linear_marlin(cls) == ("auto", 6)


def test_marlin_never_set_but_to_a_constant_is_none():
    assert tool.linear_marlin(_linear("self.use_marlin = False")) == (None, None)


def test_the_automatic_range_is_read_from_the_comparison():
    function = ast.parse("def can_auto_enable_marlin_fp8():\n major, minor = cap()\n sm = major * 10 + minor\n"
                         " return 80 <= sm < 89\n").body[0]
    assert tool.auto_range(function) == ((80, 89), 4)
    assert tool.auto_range(ast.parse("def f():\n return True\n").body[0]) == (None, None)


# -- the runs -------------------------------------------------------------------------------------


WHEEL = {"url": "https://files.example/sglang.whl", "file": "sglang-x-py3-none-any.whl", "sha256": "0" * 64}


def facts(version: str, **kw):
    base = dict(linear_marlin="env", linear_line=10, marlin_module="vllm.x.marlin_utils_fp8", marlin_import_line=3,
                moe_marlin=False, moe_fp8_line=500, block_line=40, scaled_mm_line=90)
    base.update(kw)
    return tool.Facts(version, "2025-01-01", WHEEL, **base)


def test_runs_of_equal_facts_make_one_rule_each_with_its_two_variants():
    releases = [facts("1.0"), facts("1.1"), facts("1.2", linear_marlin="auto", auto_range=(80, 89), auto_line=7),
                facts("1.3", linear_marlin="auto", auto_range=(80, 89), auto_line=7, marlin_module="sglang.m",
                      moe_marlin=True)]
    sources, rules = tool.derive(releases)
    by_id = {r["id"]: r for r in rules}
    assert by_id["sglang.derived.1.1.fp8-linear.no-marlin"]["releases"] == ">=1.0,<=1.1"
    assert by_id["sglang.derived.1.3.fp8-linear.below-marlin"]["releases"] == ">=1.2,<=1.3"
    assert by_id["sglang.derived.1.3.fp8-linear.below-marlin"]["require"] == {"compute_capability": ">=8.0"}
    assert by_id["sglang.derived.1.2.fp8-linear.marlin-needs-vllm"]["releases"] == "==1.2"
    assert by_id["sglang.derived.1.2.fp8-moe.triton"]["releases"] == ">=1.0,<=1.2"
    stated, inferred = by_id["sglang.derived.1.1.fp8-linear.no-marlin"], \
        by_id["sglang.derived.1.1.fp8-linear.no-marlin.checkpoint"]
    assert stated["when"]["options"] == {"quantization": "fp8"} and "severity" not in stated
    assert inferred["when"]["options"] == {"quantization": {"set": False}}
    assert inferred["severity"] == "warning" and inferred["inferred"] and inferred["basis"]
    # the vLLM rule never limits the resolution: a warning in both variants
    assert by_id["sglang.derived.1.2.fp8-linear.marlin-needs-vllm"]["severity"] == "warning"
    cited = {s["id"] for s in sources}
    for rule in rules:
        assert {rule["source"], *rule.get("also", [])} <= cited


def test_a_release_whose_apply_has_routes_not_followed_gets_no_linear_rule():
    _, rules = tool.derive([facts("1.0", other_calls=["w8a8_mxfp8_linear"])])
    assert [r["id"] for r in rules if "linear" in r["id"]] == []
    _, rules = tool.derive([facts("1.0", scaled_mm_line=None)])
    assert [r["id"] for r in rules if "linear" in r["id"]] == []


# -- the rules in the bundled database ------------------------------------------------------------


def run(sglang: str, gpu: str | None, *, quantization: str | None = "fp8", moe: bool | None = None,
        dtype: str = "fp8", env: dict | None = None, db=None, **packages) -> dict[str, str]:
    stack = {"system": {"python": "3.12", "platform": "linux-x86_64"}, "hardware": {"gpu": gpu} if gpu else {},
             "packages": {"sglang": sglang, **packages}, "model": {"checkpoint_dtype": dtype}}
    if moe is not None:
        stack["model"]["moe"] = moe
    if quantization is not None:
        stack["options"] = {"sglang": {"quantization": quantization}}
    if env:
        stack["env"] = env
    report = check(stack, database=db)
    return {f.id: f.severity for f in report.findings}


@pytest.mark.parametrize("version, fires", [("0.4.0.post1", True), ("0.5.11", True), ("0.5.12", False)])
def test_fp8_moe_on_triton_holds_until_fp8moemethod_has_marlin(db, version, fires):
    found = run(version, "A100 80GB", moe=True, db=db)
    assert (found.get(MOE) == "error") is fires, found


@pytest.mark.parametrize("changes", [dict(gpu="H100"), dict(gpu="L4"), dict(dtype="bf16"), dict(moe=False)])
def test_fp8_moe_on_triton_spares_ada_hopper_bf16_and_dense_models(db, changes):
    args = dict(gpu="A100 80GB", moe=True) | changes
    assert MOE not in run("0.5.4", args.pop("gpu"), db=db, **args)


def test_with_the_flag_unset_each_rule_is_an_inferred_warning(db):
    found = run("0.5.4", "A100 80GB", quantization=None, moe=True, db=db)
    assert found[MOE + ".checkpoint"] == "warning" and MOE not in found


@pytest.mark.parametrize("version, fires", [("0.4.3", False), ("0.4.4", True), ("0.5.0rc2", True), ("0.5.1", False)])
def test_no_marlin_holds_while_marlin_only_comes_on_demand(db, version, fires):
    found = run(version, "A100 80GB", db=db)
    assert (found.get(NO_MARLIN) == "error") is fires, found


def test_no_marlin_spares_a_forced_marlin_and_ada(db):
    assert NO_MARLIN not in run("0.4.9", "A100 80GB", env={"SGLANG_FORCE_FP8_MARLIN": "1"}, db=db)
    assert NO_MARLIN not in run("0.4.9", "L4", db=db)


@pytest.mark.parametrize("version, fires", [("0.5.0rc2", False), ("0.5.1", True), ("0.5.8.post1", True),
                                            ("0.5.9", False)])
def test_below_marlin_holds_on_turing_where_the_routes_were_followed(db, version, fires):
    found = run(version, "T4", db=db)
    assert (found.get(BELOW) == "error") is fires, found
    assert BELOW not in run(version, "A100 80GB", db=db)


@pytest.mark.parametrize("version, gpu, fires", [("0.5.1", "A100 80GB", True), ("0.5.5.post3", "RTX 3090", True),
                                                 ("0.5.6", "A100 80GB", False), ("0.5.4", "L4", False),
                                                 ("0.5.4", "T4", False)])
def test_marlin_needs_vllm_only_where_marlin_comes_from_vllm(db, version, gpu, fires):
    found = run(version, gpu, db=db)
    assert (found.get(NEEDS_VLLM) == "warning") is fires, found
