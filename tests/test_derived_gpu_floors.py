"""triton's and torch's GPU floors derived from their wheels' Python sources
(tools/derive_gpu_floors.py, data/derived/triton.toml, data/derived/torch.toml).

(a) The script's readers on small texts shaped like triton's NVIDIA backend and
language modules and torch's Inductor scheduler (no network: the zip reader is
fed an in-memory wheel). (b) Stacks users reported in issue trackers, checked
against the bundled database: the failures the facts must flag, the ones they
cannot (strict xfail, with why), and working setups that must stay free of them.
"""

from __future__ import annotations

import functools
import io
import zipfile
from pathlib import Path

import pytest

import compat

from .conftest import load_tool

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)

ROOT = Path(__file__).resolve().parent.parent
derive = load_tool("derive_gpu_floors")

# -- (a) the readers ------------------------------------------------------------------------------

TRITON_32_COMPILER = '''
class CUDABackend(BaseBackend):
    def parse_options(self, opts) -> Any:
        args = {'arch': os.getenv("TRITON_OVERRIDE_ARCH", f"sm{self.target.arch}")}
        capability = int(self._parse_arch(args["arch"]))
        if args.get("num_ctas", 1) > 1 and capability < 90:
            raise ValueError("num_ctas > 1 requires NVIDIA SM90+ (Hopper).")
        if "supported_fp8_dtypes" not in args:
            supported_fp8_dtypes = set(CUDAOptions.supported_fp8_dtypes)
            if capability >= 89:
                supported_fp8_dtypes.add("fp8e4nv")
            args["supported_fp8_dtypes"] = tuple(sorted(supported_fp8_dtypes))
        return CUDAOptions(**args)
'''
TRITON_32_CORE = '''
class dtype:
    def to_ir(self, builder):
        if self.name.startswith("fp8"):
            if self.name not in builder.options.supported_fp8_dtypes:
                raise ValueError(f'type {self} not supported in this architecture. '
                                 f'The supported fp8 dtypes are {builder.options.supported_fp8_dtypes}')
'''
TRITON_30_COMPILER = '''
class CUDABackend(BaseBackend):
    def parse_options(self, opts) -> Any:
        args = {k: opts[k] for k in CUDAOptions.__dataclass_fields__.keys() if k in opts}
        args["allow_fp8e4nv"] = self.capability >= 89
        return CUDAOptions(**args)
'''
TRITON_30_SEMANTIC = '''
def cast(input, dst_ty, builder):
    if (src_sca_ty.is_fp8e4nv() or dst_sca_ty.is_fp8e4nv()):
        assert builder.options.allow_fp8e4nv, "fp8e4nv data type is not supported on CUDA arch < 89"
'''
TRITON_22_SEMANTIC = '''
def cast(input, dst_ty, builder):
    if _is_cuda(builder.target) and builder.target.capability < 89 and \\
       (src_sca_ty.is_fp8e4nv() or dst_sca_ty.is_fp8e4nv()):
        assert False, "fp8e4nv data type is not supported on CUDA arch < 89"
'''
TORCH_22_SCHEDULER = '''
class Scheduler:
    def create_backend(self, device: torch.device):
        if device.type == "cuda" and not has_triton():
            device_props = torch.cuda.get_device_properties(device)
            if device_props.major < 7:
                raise RuntimeError(
                    f"Found {device_props.name} which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability {device_props.major}.{device_props.minor}"  # noqa: B950
                )
            else:
                raise RuntimeError("Cannot find a working triton installation.")
'''
TORCH_UTILS_TRITON = '''
def has_triton() -> bool:
    def cuda_extra_check(device_interface):
        return device_interface.Worker.get_device_properties().major >= 7
'''
TORCH_215_SCHEDULER = '''
class Scheduler:
    def create_backend(self, device: torch.device) -> BaseScheduling:
        if not has_triton():
            if (
                device.type == "cuda"
                and (device_props := torch.cuda.get_device_properties(device)).major < 7
            ):
                raise GPUTooOldForTriton(device_props, inspect.currentframe())
            elif is_gpu(device.type) and not device.type == "mps":
                raise TritonMissing(inspect.currentframe())
'''
TORCH_215_EXC = '''
class GPUTooOldForTriton(ShortenTraceback):
    def __init__(self, device_props, first_useful_frame) -> None:
        super().__init__(
            f"Found {device_props.name} which is too old to be supported by the triton GPU compiler, "
            "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, "
            f"but your device is of CUDA capability {device_props.major}.{device_props.minor}",
            first_useful_frame=first_useful_frame,
        )
'''


def test_triton_3_2_fp8e4nv_gate_and_error():
    fact = derive.triton_fp8e4nv({"triton/backends/nvidia/compiler.py": TRITON_32_COMPILER,
                                  "triton/language/core.py": TRITON_32_CORE})
    assert fact.floor == "8.9" and (fact.path, fact.line) == ("triton/backends/nvidia/compiler.py", 10)
    assert fact.message.startswith("type fp8e4nv not supported in this architecture. The supported fp8 dtypes are {")
    assert fact.also == (("triton/language/core.py", 6),)


def test_triton_3_0_allow_fp8e4nv_and_2_2_guarded_assert():
    fact = derive.triton_fp8e4nv({"triton/backends/nvidia/compiler.py": TRITON_30_COMPILER,
                                  "triton/language/semantic.py": TRITON_30_SEMANTIC})
    assert (fact.floor, fact.line, fact.message) == ("8.9", 5, "fp8e4nv data type is not supported on CUDA arch < 89")
    old = derive.triton_fp8e4nv({"triton/language/semantic.py": TRITON_22_SEMANTIC})
    assert (old.floor, old.path, old.line) == ("8.9", "triton/language/semantic.py", 3)
    assert old.also == (("triton/language/semantic.py", 5),)
    assert derive.triton_fp8e4nv({"triton/language/core.py": TRITON_32_CORE}) is None  # no gate, no fact


def test_triton_general_floor_needs_a_lone_capability_guard():
    # a feature's guard (num_ctas and capability < 90) is not a floor; a lone one is
    assert derive.triton_floor({"triton/backends/nvidia/compiler.py": TRITON_32_COMPILER}) == []
    floor = TRITON_32_COMPILER + '''
def check(capability):
    if capability < 70:
        raise RuntimeError("Triton requires compute capability 7.0 or newer")
'''
    assert derive.triton_floor({"triton/backends/nvidia/compiler.py": floor}) == [
        ("triton/backends/nvidia/compiler.py", 17, 70, "Triton requires compute capability 7.0 or newer")]


def test_torch_inductor_floor_inline_and_in_exc():
    old = derive.torch_inductor_floor({"torch/_inductor/scheduler.py": TORCH_22_SCHEDULER,
                                       "torch/utils/_triton.py": TORCH_UTILS_TRITON})
    assert (old.floor, old.line) == ("7.0", 6) and old.also == (("torch/utils/_triton.py", 4),)
    new = derive.torch_inductor_floor({"torch/_inductor/scheduler.py": TORCH_215_SCHEDULER,
                                       "torch/_inductor/exc.py": TORCH_215_EXC})
    assert (new.floor, new.line) == ("7.0", 7) and new.also == (("torch/_inductor/exc.py", 5),)
    assert new.key() == old.key()  # the same text, split over lines: one fact
    assert derive.torch_inductor_floor({"torch/_inductor/scheduler.py": "x = 1\n"}) is None


def test_runs_group_consecutive_releases_with_the_same_fact():
    def rel(v):
        return derive.Release(v, "2025-01-01", {"file": f"t-{v}.whl", "url": "u", "sha256": "0" * 64, "size": 1})
    a = derive.Fact("8.9", "m1", "p", 1)
    b = derive.Fact("8.9", "m2", "p", 2)
    rows = [(rel("2.1.0"), None), (rel("2.2.0"), a), (rel("3.0.0"), a), (rel("3.2.0"), b), (rel("3.3.0"), b)]
    runs = derive.group_runs(rows)
    assert [([r.version for r in g], f.message, n.version if n else None) for g, f, n in runs] == [
        (["2.2.0", "3.0.0"], "m1", "3.2.0"), (["3.2.0", "3.3.0"], "m2", None)]
    assert derive.releases_range(runs[0][0], runs[0][2]) == ">=2.2.0,<3.2.0"
    assert derive.releases_range(runs[1][0], None) == ">=3.2.0,<=3.3.0"


def test_range_zip_reads_one_member_from_the_central_directory():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("triton/__init__.py", "")
        zf.writestr("triton/backends/nvidia/compiler.py", TRITON_32_COMPILER)
    blob = buffer.getvalue()
    asked = []
    zipf = derive.RangeZip("https://example.invalid/t.whl", len(blob))
    zipf._get = lambda start, end: (asked.append((start, end)), blob[start:end + 1])[1]  # type: ignore[method-assign]
    assert zipf.read("triton/backends/nvidia/compiler.py") == TRITON_32_COMPILER
    assert zipf.read("triton/__init__.py") == ""
    assert all(end - start < len(blob) for start, end in asked)  # never the whole file


def test_derived_files_are_what_the_script_writes():
    torch_text = (ROOT / "data" / "derived" / "torch.toml").read_text(encoding="utf-8")
    triton_text = (ROOT / "data" / "derived" / "triton.toml").read_text(encoding="utf-8")
    assert "inferred = true" in torch_text and 'when = { accelerator = "cuda" }' in torch_text
    assert 'kind = "note"' in triton_text and "inferred" not in triton_text
    assert 'kind = "artifact"' in torch_text and 'kind = "artifact"' in triton_text


# -- (b) real stacks ----------------------------------------------------------------------------

INDUCTOR = "torch.derived.2.15.0.inductor-sm70-floor"
FP8 = {"triton.derived.3.9.0.fp8e4nv-sm89", "triton.derived.3.1.0.fp8e4nv-sm89"}


def stack(packages: dict, gpu: str | None = None, python: str = "3.12", cc: str | None = None, **system) -> dict:
    out: dict = {"system": {"python": python, **system}, "packages": packages}
    hardware = {k: v for k, v in (("gpu", gpu), ("compute_capability", cc)) if v}
    if hardware:
        out["hardware"] = hardware
    return out


def fp8_checkpoint(data: dict) -> dict:
    """The stack as the user ran it: an FP8 checkpoint (the reports name Qwen3-30B-A3B-FP8, Llama-4-Maverick FP8,
    DeepSeek-R1, whose weights are FP8)."""
    return {**data, "model": {"checkpoint_dtype": "fp8"}}


def ids(report, level: str) -> set[str]:
    return {f.id for f in getattr(report, level)}


def derived(report) -> set[str]:
    return {f.id for level in ("errors", "warnings", "infos") for f in getattr(report, level)
            if f.id.startswith(("torch.derived.", "triton.derived."))}


def test_vllm_0_7_2_on_tesla_p40(db):
    """https://github.com/vllm-project/vllm/issues/13202: the vllm-openai:v0.7.2 image (vllm 0.7.2, which pins
    torch 2.5.1), two Tesla P40: "RuntimeError: Found Tesla P40 which is too old to be supported by the triton
    GPU compiler ... but your device is of CUDA capability 6.1". vLLM compiles the model with torch.compile."""
    report = check(stack({"vllm": "0.7.2"}, "Tesla P40", cuda="12.4"), database=db)
    assert INDUCTOR in ids(report, "warnings")


def test_gtx_1070_torch_compile_in_torch_2_6(db):
    """https://github.com/apple/ml-cross-entropy/issues/41: GTX 1070, Python 3.13; the traceback's
    torch/_inductor/scheduler.py line 3428 is torch 2.6.0's raise: "Found NVIDIA GeForce GTX 1070 which is too
    old to be supported by the triton GPU compiler ... CUDA capability 6.1"."""
    report = check(stack({"torch": "2.6.0"}, "NVIDIA GeForce GTX 1070", python="3.13", cuda="12.4"), database=db)
    assert INDUCTOR in ids(report, "warnings")
    assert INDUCTOR not in ids(report, "errors")  # inferred: a warning at most


def test_p100_torch_compile_warns_and_says_why(db):
    """https://github.com/vllm-project/vllm/issues/14547: Tesla P100-SXM2-16GB (driver 565.57.01):
    "Found Tesla P100-SXM2-16GB which is too old to be supported by the triton GPU compiler". The report's
    vLLM of March 2025 ran torch 2.6.0 (vllm 0.7.3/0.8.x); the stack names torch as the rule is on it."""
    report = check(stack({"torch": "2.6.0"}, "Tesla P100", cuda="12.4"), database=db)
    finding = next(f for f in report.warnings if f.id == INDUCTOR)
    assert "torch.compile" in finding.message and "too old to be supported" in finding.message


@pytest.mark.xfail(strict=True, reason="the user's torch (a 2.0 pre-release of February 2023) is older than the "
                   "releases whose wheels the script read (2.1.2 on): no derived fact covers it")
def test_gtx_1080_nanogpt_torch_2_0(db):
    """https://github.com/karpathy/nanoGPT/issues/157 (2023-02-16): GTX 1080, nanoGPT's torch.compile:
    "Found NVIDIA GeForce GTX 1080 which is too old to be supported by the triton GPU compiler ... 6.1"."""
    report = check(stack({"torch": "2.0.0"}, "GTX 1080", python="3.10", cuda="11.8"), database=db)
    assert INDUCTOR in ids(report, "warnings")


def test_sglang_0_4_6_post1_qwen3_fp8_on_a10(db):
    """https://github.com/sgl-project/sglang/issues/5871: Python 3.10.12, 2x NVIDIA A10 (8.6), PyTorch
    2.6.0+cu124, sglang 0.4.6.post1, Qwen3-30B-A3B-FP8: "type fp8e4nv not supported in this architecture.
    The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')" (torch 2.6.0 installs triton 3.2.0)."""
    report = check(fp8_checkpoint(stack({"sglang": "0.4.6.post1", "torch": "2.6.0"}, "A10", python="3.10",
                                        cuda="12.4")), database=db)
    assert "triton.derived.3.9.0.fp8e4nv-sm89" in ids(report, "infos")


def test_llama4_maverick_fp8_on_a100(db):
    """https://github.com/vllm-project/vllm/issues/18182: 4x NVIDIA A100-SXM4-80GB, PyTorch 2.6.0+cu124,
    Python 3.12.9: "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are
    ('fp8e4b15', 'fp8e5')"."""
    report = check(fp8_checkpoint(stack({"torch": "2.6.0"}, "A100 80GB", cuda="12.4")), database=db)
    assert "triton.derived.3.9.0.fp8e4nv-sm89" in ids(report, "infos")


def test_deepseek_r1_on_a800(db):
    """https://github.com/deepseek-ai/DeepSeek-R1/issues/588 (= vllm-project/vllm#15336): 8x NVIDIA
    A800-SXM4-80GB, PyTorch 2.6.0+cu124, Python 3.10.12: "type fp8e4nv not supported in this architecture"."""
    report = check(fp8_checkpoint(stack({"torch": "2.6.0"}, "NVIDIA A800-SXM4-80GB", python="3.10", cuda="12.4")),
                   database=db)
    assert FP8 & ids(report, "infos")


@pytest.mark.xfail(strict=True, reason="the user runs triton-windows 3.3.1.post19, another project than triton: "
                   "its wheels were not read, and the triton facts do not apply to it")
def test_wan_video_fp8_on_rtx_3080_with_triton_windows(db):
    """https://github.com/kijai/ComfyUI-WanVideoWrapper/issues/1030: RTX 3080 16GB, torch 2.7.1+cu128,
    triton-windows 3.3.1.post19: "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are
    ('fp8e4b15', 'fp8e5')" from an Inductor kernel."""
    report = check(stack({"torch": "2.7.1", "triton-windows": "3.3.1.post19"}, "RTX 3080", cuda="12.8",
                         platform="windows-x86_64"), database=db)
    assert FP8 & ids(report, "infos")


def test_working_torch_2_10_compile_on_turing(db):
    """https://github.com/Chennesxu/triton-turing/issues/24: "PyTorch 2.10 (pins Triton 3.6): works. On a Turing
    GPU, torch.compile ... compiled successfully and matched eager execution" (Turing: compute capability 7.5)."""
    report = check(stack({"torch": "2.10.0"}, cc="7.5", cuda="12.8"), database=db)
    assert INDUCTOR not in derived(report)
    # only the fp8e4nv note (info) on a 7.5 GPU: nothing the user hit, nothing above info
    assert derived(report) <= FP8 and not derived(report) & (ids(report, "errors") | ids(report, "warnings"))


def test_working_fp8e4nv_cast_on_rtx_4090(db):
    """https://github.com/triton-lang/triton/pull/3303 (merged 2024-03-07, first released in triton 3.0.0):
    a Triton kernel casting to tl.float8e4nv "passed in My 4090" (sm_89)."""
    report = check(stack({"triton": "3.0.0"}, "RTX 4090", cuda="12.4"), database=db)
    assert not derived(report)


def test_working_rtx_5090_comfyui_torch_2_9_1(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/11996: Windows, RTX 5090, pytorch 2.9.1+cu130, Python
    3.13.11, ComfyUI 0.8.2 "works normally": no derived floor concerns a 12.0 GPU."""
    report = check(stack({"torch": "2.9.1"}, "RTX 5090", python="3.13", cuda="13.0", platform="windows-x86_64"),
                   database=db)
    assert not derived(report)
