"""vLLM's V0 FlashInfer backend profiles with FlashAttention 2, derived from its
wheels (tools/derive_vllm_backends.py, data/derived/vllm.backends.toml): the
script's readers, and each rule's edges in the bundled database.
"""

from __future__ import annotations

import ast
import functools

import pytest

import compat

from .conftest import load_tool

tool = load_tool("derive_vllm_backends")
check = functools.partial(compat.check, suggest=False)

V0_DEFAULT = "vllm.derived.0.7.3.flashinfer-backend.profiling-fa2"
V1_DEFAULT = "vllm.derived.0.10.1.1.flashinfer-backend.profiling-fa2"


def test_the_profiling_call_is_found_only_under_an_empty_cache_test():
    code = ("def forward(kv_cache):\n    if prefill:\n        if kv_cache.numel() == 0:\n"
            "            out = flash_attn_varlen_func(q, k, v)\n        else:\n            out = wrapper.run(q)\n")
    assert tool.profiling_call(ast.parse(code)) == 4
    assert tool.profiling_call(ast.parse("if kv_cache is None:\n    flash_attn_varlen_func(q)\n")) is None
    assert tool.profiling_call(ast.parse("flash_attn_varlen_func(q)\n")) is None


def test_the_v1_default_is_read_from_getenv():
    tree = ast.parse('environment = {\n    "VLLM_USE_V1":\n    lambda: bool(int(os.getenv("VLLM_USE_V1", "0"))),\n}\n')
    assert tool.v1_default(tree) == ("0", 3)
    assert tool.v1_default(ast.parse("x = 1\n")) == (None, None)


def test_runs_split_where_the_default_engine_changes():
    wheel = {"url": "https://files.example/vllm.whl", "file": "vllm-x.whl", "sha256": "0" * 64}
    releases = [tool.Facts(v, "2025-01-01", wheel, profiling_line=10, imported_from="vllm.vllm_flash_attn",
                           v1_default=d, v1_line=5) for v, d in (("1.0", "0"), ("1.1", "0"), ("1.2", "1"))]
    releases.append(tool.Facts("1.3", "2025-01-01", wheel, v1_default="1", v1_line=5))  # the call gone
    sources, rules = tool.derive(releases)
    by_id = {r["id"]: r for r in rules}
    assert set(by_id) == {"vllm.derived.1.1.flashinfer-backend.profiling-fa2",
                          "vllm.derived.1.2.flashinfer-backend.profiling-fa2"}
    v0 = by_id["vllm.derived.1.1.flashinfer-backend.profiling-fa2"]
    assert v0["releases"] == ">=1.0,<=1.1" and v0["when"]["not"] == {"env": {"VLLM_USE_V1": "1"}}
    v1 = by_id["vllm.derived.1.2.flashinfer-backend.profiling-fa2"]
    assert v1["releases"] == "==1.2"
    assert v1["when"]["env"] == {"VLLM_ATTENTION_BACKEND": "FLASHINFER", "VLLM_USE_V1": "0"}
    assert {s["id"] for s in sources} >= {r["source"] for r in rules}


def run(vllm: str, gpu: str, env: dict, db) -> dict[str, str]:
    report = check({"system": {"python": "3.12", "platform": "linux-x86_64"}, "hardware": {"gpu": gpu},
                    "packages": {"vllm": vllm}, "env": env}, database=db)
    return {f.id: f.severity for f in report.findings}


FLASHINFER = {"VLLM_ATTENTION_BACKEND": "FLASHINFER"}


@pytest.mark.parametrize("version, fires", [("0.6.2", False), ("0.6.3", True), ("0.7.3", True), ("0.8.0", False)])
def test_v0_default_releases_refuse_flashinfer_on_turing(db, version, fires):
    assert (run(version, "T4", FLASHINFER, db).get(V0_DEFAULT) == "error") is fires


def test_v0_default_rule_spares_ampere_other_backends_and_the_v1_engine(db):
    assert V0_DEFAULT not in run("0.7.2", "A100 80GB", FLASHINFER, db)
    assert V0_DEFAULT not in run("0.7.2", "T4", {"VLLM_ATTENTION_BACKEND": "XFORMERS"}, db)
    assert V0_DEFAULT not in run("0.7.2", "T4", {**FLASHINFER, "VLLM_USE_V1": "1"}, db)


@pytest.mark.parametrize("version, fires", [("0.8.0", True), ("0.10.1.1", True), ("0.10.2", False)])
def test_v1_default_releases_refuse_it_only_on_the_v0_engine(db, version, fires):
    assert (run(version, "T4", {**FLASHINFER, "VLLM_USE_V1": "0"}, db).get(V1_DEFAULT) == "error") is fires
    assert V1_DEFAULT not in run(version, "T4", FLASHINFER, db)
