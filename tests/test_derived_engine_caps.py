"""vLLM's derived GPU floors (tools/derive_engine_caps.py, data/derived/vllm.toml).

(a) The script's ast readers on small sources shaped like vLLM's
quantization/__init__.py, a QuantizationConfig, the engine config that compares
the GPU with get_min_capability(), and an attention backend that refuses an FP8
KV cache (no wheel, no network). (b) Stacks users reported in vLLM's tracker,
checked against the bundled database with the derived rules: failures the rules
must catch, the ones they cannot (strict xfail, with why), and working setups
that must stay free of their errors. Where a user's checkpoint chose the method
(vLLM reads it from the checkpoint's quantization config), the stack states it
as --quantization <method>, which selects the same config class.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import compat

from .conftest import load_tool

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)

ROOT = Path(__file__).resolve().parent.parent
derive = load_tool("derive_engine_caps")

Q = "vllm/model_executor/layers/quantization"

INIT_DICT = '''
from typing import Dict, Type
from vllm.model_executor.layers.quantization.awq import AWQConfig
from vllm.model_executor.layers.quantization.fp8 import Fp8Config

QUANTIZATION_METHODS: Dict[str, Type[QuantizationConfig]] = {
    "awq": AWQConfig,
    "fp8": Fp8Config,
}
'''

INIT_FUNCTION = '''
from typing import Literal, get_args
QuantizationMethods = Literal["awq", "fp8", "deepseek_v4_fp8"]
QUANTIZATION_METHODS: list[str] = list(get_args(QuantizationMethods))

def get_quantization_config(quantization: str):
    if current_platform.is_cuda() or current_platform.is_rocm():
        from vllm.models.deepseek_v41 import DeepseekV4FP8Config as DeepseekV41FP8Config
        deepseek_config: type[QuantizationConfig] = DeepseekV41FP8Config
    else:
        from vllm.models.deepseek_v4 import DeepseekV4FP8Config
        deepseek_config = DeepseekV4FP8Config
    from .auto_awq import AutoAWQConfig
    from .fp8 import Fp8Config
    method_to_config: dict[str, type[QuantizationConfig]] = {
        "awq": AutoAWQConfig,
        "fp8": Fp8Config,
        "deepseek_v4_fp8": deepseek_config,
        "auto-round": AutoAWQConfig,
    }
    return method_to_config[quantization]
'''

FP8 = '''
class Fp8Config(QuantizationConfig):
    @classmethod
    def get_min_capability(cls) -> int:
        """Ampere, for the Marlin fallback."""
        return 80
'''

AWQ = '''
from .base_config import QuantizationConfig
class Base(QuantizationConfig):
    @classmethod
    def get_min_capability(cls) -> int:
        return 75
class AutoAWQConfig(Base):
    pass
'''

BASE = '''
class QuantizationConfig(ABC):
    @classmethod
    @abstractmethod
    def get_min_capability(cls) -> int:
        raise NotImplementedError
'''

DEEPSEEK = '''
from vllm.model_executor.layers.quantization.fp8 import Fp8Config
class DeepseekV4FP8Config(Fp8Config):
    @classmethod
    def get_min_capability(cls) -> int:
        return Fp8Config.get_min_capability()
'''

CONFIG = '''
class VllmConfig:
    @staticmethod
    def _get_quantization_config(model_config, load_config):
        if model_config.quantization is not None:
            quant_config = get_quant_config(model_config, load_config)
            capability_tuple = current_platform.get_device_capability()
            if capability_tuple is not None:
                capability = capability_tuple.to_int()
                if capability < quant_config.get_min_capability():
                    raise ValueError(
                        f"The quantization method {model_config.quantization} "
                        "is not supported for the current GPU. Minimum "
                        f"capability: {quant_config.get_min_capability()}. "
                        f"Current capability: {capability}.")
'''

TRITON = '''
class TritonAttentionBackend(AttentionBackend):
    @staticmethod
    def get_name() -> str:
        return "TRITON_ATTN"
    @staticmethod
    def get_impl_cls():
        return TritonAttentionImpl

class TritonAttentionImpl(AttentionImpl):
    def __init__(self, kv_cache_dtype):
        if current_platform.is_cuda():
            if self.kv_cache_dtype.startswith("fp8") and not (
                current_platform.has_device_capability(89)
            ):
                raise ValueError(
                    f"FP8 KV cache is not supported by the Triton attention backend "
                    f"on {dev}; requires SM89+."
                )
'''


class FakeWheel:
    """A wheel's members as a dict, read as RemoteWheel.read reads them."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read(self, names):
        return {n: self.files[n].encode() for n in names if n in self.files}


def tree(files: dict[str, str]):
    wheel = FakeWheel(files)
    return derive.SourceTree({name: (0, 0, 0, 0) for name in files}, wheel.read)


def floor_of(source, registry, method):
    path, name = registry.methods[method]
    found = derive.find_class(source, path, name)
    return derive.min_capability(source, *found)


# -- (a) the ast readers ---------------------------------------------------------------------------

def test_module_level_registry_and_a_constant_floor():
    files = {f"{Q}/__init__.py": INIT_DICT, f"{Q}/fp8.py": FP8, f"{Q}/awq.py": AWQ, f"{Q}/base_config.py": BASE}
    source = tree(files)
    registry = derive.read_registry(f"{Q}/__init__.py", INIT_DICT, source.members)
    assert registry.methods == {"awq": (f"{Q}/awq.py", "AWQConfig"), "fp8": (f"{Q}/fp8.py", "Fp8Config")}
    floor = floor_of(source, registry, "fp8")
    assert (floor.value, floor.line, floor.cls) == (80, 6, "Fp8Config")  # the docstring is skipped
    assert derive.cli_methods(INIT_DICT, None) == (["awq", "fp8"], "QUANTIZATION_METHODS")


def test_registry_in_a_function_cuda_branch_inheritance_and_delegation():
    files = {f"{Q}/__init__.py": INIT_FUNCTION, f"{Q}/fp8.py": FP8, f"{Q}/auto_awq.py": AWQ,
             f"{Q}/base_config.py": BASE, "vllm/models/deepseek_v41.py": DEEPSEEK,
             "vllm/models/deepseek_v4.py": "class DeepseekV4FP8Config:\n    pass\n"}
    source = tree(files)
    registry = derive.read_registry(f"{Q}/__init__.py", INIT_FUNCTION, source.members)
    # the CUDA branch's import, through the local alias
    assert registry.methods["deepseek_v4_fp8"] == ("vllm/models/deepseek_v41.py", "DeepseekV4FP8Config")
    assert floor_of(source, registry, "awq").value == 75  # inherited from Base
    deepseek = floor_of(source, registry, "deepseek_v4_fp8")
    assert (deepseek.value, deepseek.path) == (80, f"{Q}/fp8.py")  # return Fp8Config.get_min_capability()
    # the CLI takes the Literal's values: auto-round is only a checkpoint name
    assert derive.cli_methods(INIT_FUNCTION, None) == (["awq", "fp8", "deepseek_v4_fp8"], "QuantizationMethods")


def test_abstract_and_computed_floors_are_not_read():
    source = tree({"m.py": BASE + "\nclass C(QuantizationConfig):\n    @classmethod\n    def get_min_capability(cls):\n"
                           "        if x:\n            return 70\n        return 80\n"})
    base = derive.find_class(source, "m.py", "QuantizationConfig")
    assert "abstract" in derive.min_capability(source, *base)
    computed = derive.find_class(source, "m.py", "C")
    assert "computes" in derive.min_capability(source, *computed)


def test_the_refusal_and_its_message():
    (refusal,) = derive.find_quantization_refusals("vllm/config/vllm.py", CONFIG)
    assert refusal.line == 10
    text = derive.render(refusal.parts, {"quantization": "fp8", "get_min_capability": "80"})
    assert text == ("The quantization method fp8 is not supported for the current GPU. Minimum capability: 80. "
                    "Current capability: {capability}.")


def test_kv_cache_refusal_names_its_backend():
    (kv,) = derive.find_kv_refusals("vllm/v1/attention/backends/triton_attn.py", TRITON)
    assert (kv.backend, kv.floor, kv.line) == ("TRITON_ATTN", 89, 13)


def test_arg_utils_choices_before_the_registry_listed_methods():
    arg_utils = "parser.add_argument('--quantization', '-q', type=str, choices=['awq', 'gptq', None])\n"
    init = "_QUANTIZATION_CONFIG_REGISTRY = {'awq': AWQConfig, 'gptq': GPTQConfig, 'squeezellm': S}\n"
    assert derive.cli_methods(init, arg_utils) == (["awq", "gptq"], "--quantization choices")


def test_central_directory_and_grouping():
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("vllm/a.py", "x = 1\n" * 50)
    data = buffer.getvalue()
    end = data.rfind(b"PK\x05\x06")
    import struct

    size, offset = struct.unpack("<II", data[end + 12:end + 20])
    members = derive.parse_central_directory(data[offset:offset + size])
    assert members["vllm/a.py"][2] == 300 and members["vllm/a.py"][3] == 8
    release = lambda v, value: derive.Release(v, "2025-01-01", {}, floors={"fp8": value})  # noqa: E731
    runs = derive.runs([release("1", 80), release("2", 80), release("3", 75), release("4", 80)],
                       lambda r: r.floors["fp8"])
    assert [(value, [r.version for r in run]) for value, run in runs] == [(80, ["1", "2"]), (75, ["3"]), (80, ["4"])]
    assert derive.releases_text(["0.5.1", "0.13.0"]) == ">=0.5.1,<=0.13.0"


def test_the_derived_file_parses_and_every_rule_cites_its_wheel():
    import tomllib

    data = tomllib.loads((ROOT / "data" / "derived" / "vllm.toml").read_text())
    sources = {s["id"]: s for s in data["source"]}
    for rule in data["rule"]:
        assert sources[rule["source"]]["kind"] == "artifact"
        assert sources[rule["source"]]["path"].endswith(".whl")
        assert rule["when"]["accelerator"] == "cuda"


# -- (b) real stacks -------------------------------------------------------------------------------

def stack(vllm: str, gpu: str, python: str, cuda: str, **options) -> dict:
    return {"system": {"python": python, "cuda": cuda}, "hardware": {"gpu": gpu},
            "packages": {"vllm": vllm}, "options": {"vllm": options}}


def derived_errors(report) -> set[str]:
    return {f.id for f in report.errors if f.id.startswith("vllm.derived.")}


def test_fp8_on_rtx_a6000_with_0_4_1(db):
    """https://github.com/vllm-project/vllm/issues/4327: 8x RTX A6000, Python 3.9, torch 2.2.1+cu121
    (vLLM 0.4.1): "ValueError: The quantization method fp8 is not supported for the current GPU.
    Minimum capability: 90. Current capability: 86." """
    report = check(stack("0.4.1", "RTX A6000", "3.9", "12.1", quantization="fp8"), database=db)
    assert "vllm.derived.0.4.1.quantization.fp8.min-capability" in derived_errors(report)


def test_awq_on_v100_with_0_4_0_post1(db):
    """https://github.com/vllm-project/vllm/issues/4202: Tesla V100-SXM2-32GB, Python 3.10, torch
    2.1.2+cu121 (vLLM 0.4.0.post1): "The quantization method awq is not supported for the current GPU.
    Minimum capability: 75. Current capability: 70." """
    report = check(stack("0.4.0.post1", "V100", "3.10", "12.1", quantization="awq"), database=db)
    assert "vllm.derived.0.34.0.quantization.awq.min-capability" in derived_errors(report)


def test_awq_marlin_on_v100_with_0_5_3_post1(db):
    """https://github.com/vllm-project/vllm/issues/1488 (V100, AWQ: "Minimum capability: 75. Current
    capability: 70."), as the awq method stands in every release read: the same V100 with vLLM 0.6.3
    and an AWQ checkpoint fails the same check."""
    report = check(stack("0.6.3", "V100", "3.10", "12.1", quantization="awq"), database=db)
    assert "vllm.derived.0.34.0.quantization.awq.min-capability" in derived_errors(report)


@pytest.mark.xfail(strict=True, reason="vLLM 0.2.0 (Oct 2023, awq floor 80 then) is older than the database's "
                   "snapshot of vllm (0.2.7 on): its wheel is not in data/metadata/vllm.wheels.jsonl, so no rule "
                   "covers it")
def test_awq_on_turing_with_0_2_0(db):
    """https://github.com/vllm-project/vllm/issues/1282: a Turing GPU (7.5) with vLLM 0.2.0 and
    --quantization awq: "Minimum capability: 80. Current capability: 75." """
    report = check(stack("0.2.0", "T4", "3.10", "11.8", quantization="awq"), database=db)
    assert any(e.startswith("vllm.derived.") for e in derived_errors(report))


@pytest.mark.xfail(strict=True, reason="the user ran the gpt-oss preview build (0.10.1+gptoss, not on the index), "
                   "whose Mxfp4Config asked for 100; the index's 0.10.1 wheel asks for 80, which an RTX 3090 (8.6) meets")
def test_mxfp4_on_rtx_3090_with_the_gpt_oss_preview(db):
    """https://github.com/vllm-project/vllm/issues/22422: gpt-oss (mxfp4) on an RTX 3090, August 2025:
    "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 100.
    Current capability: 86." """
    report = check(stack("0.10.1", "RTX 3090", "3.12", "12.8", quantization="mxfp4"), database=db)
    assert any(e.startswith("vllm.derived.0.34.0.quantization.mxfp4") for e in derived_errors(report))


@pytest.mark.xfail(strict=True, reason="the refusal comes from torch._scaled_mm (FP8 GEMM needs 8.9), not from "
                   "vLLM's get_min_capability check: Fp8Config asks for 80 from 0.5.1, which an RTX 3090 meets")
def test_fp8_llama_3_1_70b_on_rtx_3090_with_0_5_3_post1(db):
    """https://github.com/vllm-project/vllm/issues/6815: Llama-3.1-70B-FP8 on RTX 3090s (July 2024,
    vLLM 0.5.3.post1): the FP8 GEMM is refused below compute capability 8.9."""
    report = check(stack("0.5.3.post1", "RTX 3090", "3.10", "12.1", quantization="fp8"), database=db)
    assert derived_errors(report)


def test_fp8_on_a100_with_0_5_0(db):
    """https://github.com/vllm-project/vllm/issues/6979 asks why FP8 is listed for Ampere; before FP8
    Marlin (0.5.1), vLLM 0.5.0's Fp8Config asked for 89: an A100 (8.0) was refused with "Minimum
    capability: 89. Current capability: 80." """
    report = check(stack("0.5.0", "A100", "3.10", "12.1", quantization="fp8"), database=db)
    assert "vllm.derived.0.5.0.post1.quantization.fp8.min-capability" in derived_errors(report)


def test_fp8_on_a100_with_fp8_marlin_0_5_3_post1_works(db):
    """https://github.com/vllm-project/vllm/issues/6979: "We have weight-only FP8 support on Ampere
    thanks for FP8 Marlin ... vLLM can load and infer with FP8 models on Ampere systems" (mgoin,
    2024-07-31, vLLM 0.5.3.post1)."""
    report = check(stack("0.5.3.post1", "A100", "3.10", "12.1", quantization="fp8"), database=db)
    assert not derived_errors(report)


def test_awq_on_t4_works_with_0_4_0_post1(db):
    """https://github.com/vllm-project/vllm/pull/1252: AWQ on a Tesla T4 (Turing, 7.5) works
    ("example with tesla t4", quantization="AWQ"); AWQConfig has asked for 75 in every release read."""
    report = check(stack("0.4.0.post1", "T4", "3.10", "12.1", quantization="awq"), database=db)
    assert not derived_errors(report)


def test_fp8_e5m2_kv_cache_on_a100_works_with_0_4_0_post1(db):
    """https://github.com/vllm-project/vllm/issues/3965: kv_cache_dtype="fp8_e5m2" runs on an A100
    (CUDA 12.1, April 2024): "The kv cache is quantized but upconverted to fp16 for computation"."""
    report = check(stack("0.4.0.post1", "A100", "3.10", "12.1", **{"kv-cache-dtype": "fp8_e5m2"}), database=db)
    assert not derived_errors(report)


def test_fp8_kv_cache_with_the_triton_backend_on_a100_is_refused(db):
    """vllm-project/vllm#43914 (merged 2026-05-28, in 0.24.0): on the Triton attention backend an FP8 KV
    cache "has no lowering before SM89"; below it the engine "dies deep in inductor autotuning with
    `type fp8e4nv not supported in this architecture`", which the PR turns into an early ValueError."""
    report = check(stack("0.24.0", "A100", "3.12", "13.0",
                         **{"kv-cache-dtype": "fp8", "attention-backend": "TRITON_ATTN"}), database=db)
    assert "vllm.derived.0.34.0.kv-cache-fp8.triton-attn" in derived_errors(report)
