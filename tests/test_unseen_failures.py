"""Real failures (and real working setups) from upstream trackers that no
other test of this suite cites, written as the users described them and
checked against the bundled database.

A failure is CAUGHT when compat gives an error or a warning whose ID (and
message) names the real cause: those tests assert the finding. One that
compat MISSES is an ``xfail(strict=True)`` test asserting what compat should
have said, with the reason it does not. A working setup must give no error;
where compat gives one anyway (a false alarm) the test is an
``xfail(strict=True)`` too, with the reason.

Where the report leaves a gap that a stack file must fill (the Python
version, a release current at the report's date), the docstring says so.
"""

from __future__ import annotations

import functools

import pytest

import compat

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)


def stack(packages: dict, gpu: str | None = None, *, cc: str | None = None, python: str = "3.12",
          options: dict | None = None, model: dict | None = None, env: dict | None = None, **system) -> dict:
    data: dict = {"system": {"python": python, **system}, "packages": dict(packages)}
    hardware = {key: value for key, value in (("gpu", gpu), ("compute_capability", cc)) if value}
    if hardware:
        data["hardware"] = hardware
    for key, value in (("options", options), ("model", model), ("env", env)):
        if value:
            data[key] = value
    return data


def flagged(report) -> dict[str, str]:
    """Error and warning findings: ID -> message."""
    return {f.id: f.message for f in report.findings if f.severity in ("error", "warning")}


def errors(report) -> set[str]:
    return {f.id for f in report.errors}


# ======================================================================================
# GPU architectures a build lacks kernels for
# ======================================================================================

def test_vllm16307_vllm_0_7_3_on_tesla_p100(db):
    """https://github.com/vllm-project/vllm/issues/16307 -- "running vllm-openai:v0.7.3 with an cuda-error:
    no kernel image is available for execution on the device"; collect_env: PyTorch 2.5.1+cu124, Python 3.12.9,
    8x Tesla P100-PCIE-16GB, driver 535.183.01, CUDA runtime 12.1 (torch's CUDA 12.4 taken as the stack's)."""
    report = check(stack({"vllm": "0.7.3", "torch": "2.5.1+cu124"}, "Tesla P100-PCIE-16GB",
                         cuda="12.4", driver="535.183.01"), database=db)
    assert any(i.startswith("arch:vllm==0.7.3") for i in flagged(report))


def test_vllm19542_pip_vllm_0_9_1_on_gtx_1080_ti(db):
    """https://github.com/vllm-project/vllm/issues/19542 -- "CUDA kernel image not available for GTX 1080 Ti
    (Compute 6.1) using pip-installed vLLM 0.9.1"; torch 2.7.0 and nvidia-*-cu12 12.6 libraries from pip."""
    report = check(stack({"vllm": "0.9.1", "torch": "2.7.0"}, "GTX 1080 Ti", cuda="12.6"), database=db)
    assert any(i.startswith("arch:vllm==0.9.1") for i in flagged(report))


@pytest.mark.xfail(strict=True, reason="the index's 0.9.2 wheel, read, carries sm_120 SASS in the list most of "
                   "vllm/_C's kernels are built for, and its FlashAttention 2 library sm_80 SASS and PTX (which "
                   "runs on sm_120); torch 2.7.0+cu128 carries sm_120 too: what the report's build lacked is in "
                   "none of these, and nothing is flagged")
def test_vllm20748_vllm_0_9_2_wheel_without_sm_120(db):
    """https://github.com/vllm-project/vllm/issues/20748 -- "sm_120 support appears to be missing in pre-built
    whl for 0.9.2"; torch==2.7.0+cu128, nvidia-cuda-runtime-cu12 12.8. The report names the architecture
    (sm_120), not the card: the stack gives compute capability 12.0."""
    report = check(stack({"vllm": "0.9.2", "torch": "2.7.0+cu128"}, cc="12.0", cuda="12.8"), database=db)
    assert any(i.startswith("arch:vllm==0.9.2") for i in flagged(report))


def test_vllm13306_vanilla_vllm_on_rtx_5090(db):
    """https://github.com/vllm-project/vllm/issues/13306 (2025-02-14) -- "Vanilla vllm installation ends in:
    NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
    The current PyTorch install supports CUDA capabilities sm_50 ... sm_90". Gap: the report gives no vLLM
    version; 0.7.2 was the release current on that date. CUDA 12.8 is the 5090's ("Support for RTX 5090 (CUDA 12.8)")."""
    report = check(stack({"vllm": "0.7.2"}, "RTX 5090", cuda="12.8"), database=db)
    assert "arch:torch==2.5.1" in flagged(report)


def test_vllm47549_fp8_kv_cache_on_turing_in_0_24_0(db):
    """https://github.com/vllm-project/vllm/issues/47549 -- "FP8 KV cache FlashInfer no longer available as
    attention backend on SM75 (Turing) in v0.24.0"; "ValueError: FP8 KV cache is not supported by the Triton
    attention backend on Quadro RTX 8000 (compute capability 7.5)". The user passed --kv-cache-dtype fp8 only."""
    report = check(stack({"vllm": "0.24.0"}, "Quadro RTX 8000",
                         options={"vllm": {"kv-cache-dtype": "fp8"}}), database=db)
    # vLLM picks TRITON_ATTN by itself below 8.0 (read in the 0.24.0 wheel); the model's attention kind is not
    # given, hence a warning
    assert "TRITON_ATTN" in flagged(report)["vllm.fp8-kv.default-backend.pre-ampere"]


def test_vllm22288_mxfp4_on_sm75(db):
    """https://github.com/vllm-project/vllm/issues/22288 -- "The quantization method mxfp4 is not supported for
    the current GPU SM75" (docker gpt-oss image). Gaps: the image's vLLM was 0.10.1+gptoss, taken as 0.10.1;
    the GPU is given only as SM75; --quantization mxfp4 is what the gpt-oss checkpoint selects."""
    report = check(stack({"vllm": "0.10.1"}, cc="7.5", options={"vllm": {"quantization": "mxfp4"}}), database=db)
    assert "vllm.derived.0.34.0.quantization.mxfp4.min-capability" in errors(report)


def test_vllm32838_compressed_tensors_w4a16_fp4_on_turing(db):
    """https://github.com/vllm-project/vllm/issues/32838 -- "CompressedTensorsW4A16Fp4 is not support on turing";
    vLLM 0.14.0, torch 2.9.1+cu129, torchaudio 2.9.1+cu129, torchvision 0.24.1+cu129, two Turing GPUs (given as
    compute capability 7.5)."""
    report = check(stack({"vllm": "0.14.0", "torch": "2.9.1+cu129", "torchaudio": "2.9.1+cu129",
                          "torchvision": "0.24.1+cu129"}, cc="7.5", cuda="12.9",
                         options={"vllm": {"quantization": "compressed-tensors"}},
                         model={"checkpoint_dtype": "nvfp4"}), database=db)
    assert "vllm.compressed-tensors.nvfp4.min-capability" in errors(report)


def test_vllm13398_v1_engine_on_v100(db):
    """https://github.com/vllm-project/vllm/issues/13398 -- "VLLM V1架构不支持V100显卡" (V1 does not support V100);
    vLLM API server version 0.7.2, dtype='half', export VLLM_USE_V1=1; AssertionError in
    is_fa_version_supported."""
    report = check(stack({"vllm": "0.7.2"}, "V100", env={"VLLM_USE_V1": "1"},
                         options={"vllm": {"dtype": "half"}}), database=db)
    assert "is_fa_version_supported" in flagged(report)["vllm.v1-engine.pre-ampere"]
    assert "vllm.v1-engine.pre-ampere" in errors(report)


@pytest.mark.xfail(strict=True, reason="sgl-kernel/flashinfer 0.1.x of mid-2024 are not in the database, and "
                   "sglang's own floor (7.5) is met by the T4: FlashInfer's sm_80 requirement then is unknown")
def test_sglang931_flashinfer_on_tesla_t4(db):
    """https://github.com/sgl-project/sglang/issues/931 -- "Can't use sglang with flashinfer if you have sm_75 or
    lower"; Python 3.11.9, Tesla T4, driver 535.54.03, PyTorch 2.3.1+cu121, sglang 0.2.10, flashinfer 0.1.3
    (given as external: the database tracks flashinfer-python from 0.2)."""
    report = check(stack({"sglang": "0.2.10", "torch": "2.3.1+cu121",
                          "flashinfer": {"version": "0.1.3", "external": True}}, "T4",
                         python="3.11", cuda="12.1", driver="535.54.03"), database=db)
    assert errors(report)


def test_comfyui7127_rtx_5070_ti_with_a_cuda_12_6_torch(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/7127 (2025-03-08) -- "NVIDIA GeForce RTX 5070 Ti with CUDA
    capability sm_120 is not compatible with the current PyTorch installation. The current PyTorch install
    supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90" (Windows portable). Gap: the
    torch version is not given; the portable build of that date shipped 2.6.0+cu126."""
    report = check(stack({"torch": "2.6.0+cu126"}, "RTX 5070 Ti", cuda="12.6", platform="windows-x86_64"),
                   database=db)
    # the cu126 build's list is not known; CUDA 12.6 compiles no Blackwell kernels (an inferred warning)
    assert "no CUDA before 12.8 compiles kernels for RTX 5070 Ti" in flagged(report)["arch:torch==2.6.0"]


def test_comfyui9929_gtx_1070_with_torch_2_8_cu129(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/9929 -- "CUDA 12.9 incompatibility with GTX series GPUs
    (Pascal architecture)"; ComfyUI Desktop (Windows), GTX 1070, "PyTorch 2.8.0 + cu129"; a kernel error on
    Flux Schnell. Gap: Python not given (3.12 taken)."""
    report = check(stack({"torch": "2.8.0+cu129"}, "GTX 1070", cuda="12.9", platform="windows-x86_64"),
                   database=db)
    # the Windows build's list is the Linux build script's, inferred: a warning
    assert "sm_70" in flagged(report)["arch:torch==2.8.0"]
    assert next(f for f in report.findings if f.id == "arch:torch==2.8.0").basis


def test_interiordesign5_xformers_pulls_a_cpu_torch_on_windows_rtx_5090(db):
    """https://github.com/RodrigoSKohl/InteriorDesign-for-ComfyUI/issues/5 -- RTX 5090, ComfyUI on Windows:
    "pip install xformers==0.0.29.post3 ... Collecting torch==2.6.0 (torch-2.6.0-cp310-cp310-win_amd64.whl)",
    then "CUDA error: no kernel image is available". Python 3.10 from the wheel tag; CUDA 12.8 is the 5090's."""
    report = check(stack({"xformers": "0.0.29.post3"}, "RTX 5090", python="3.10", platform="windows-x86_64",
                         cuda="12.8"), database=db)
    assert any(i.startswith(("accelerator:torch==2.6.0", "arch:torch==2.6.0")) for i in flagged(report))


# ======================================================================================
# Engine options / models the GPU cannot run
# ======================================================================================

@pytest.mark.xfail(strict=True, reason="the report ran the vllm-openai:gptoss image (0.10.1+gptoss, not a release); "
                   "the index's 0.10.1 wheel, read, sends a model with sinks to the Triton backend below SM90 "
                   "(vllm/platforms/cuda.py line 322), so the release itself does not fail there, and nothing "
                   "says what the image's build did")
def test_vllm22331_gpt_oss_sinks_need_fa3_on_a800(db):
    """https://github.com/vllm-project/vllm/issues/22331 -- "AssertionError: Sinks are only supported in
    FlashAttention 3"; "A800 have same issue, run vllm serve openai/gpt-oss-20b". Gap: the
    vllm/vllm-openai:gptoss image (0.10.1+gptoss) is taken as vllm 0.10.1."""
    report = check(stack({"vllm": "0.10.1"}, "A800 80GB", model={"repo": "openai/gpt-oss-20b"}), database=db)
    assert errors(report)


def test_skypilot4723_sglang_deepseek_r1_fp8_on_a100(db):
    """https://github.com/skypilot-org/skypilot/issues/4723 (2025-02-15) -- "A100 listed for DeepSeek-R1 671B,
    but it doesn't support FP8 (default in SGLang)": "AssertionError: fp8e4nv data type is not supported on CUDA
    arch < 89". Gap: no SGLang version; 0.4.3 was current on that date."""
    report = check(stack({"sglang": "0.4.3"}, "A100 80GB",
                         model={"repo": "deepseek-ai/DeepSeek-R1", "checkpoint_dtype": "fp8"}), database=db)
    # read in the 0.4.3 wheel for block-wise FP8 (which the stack cannot state): a warning
    assert "fp8e4nv" in flagged(report)["sglang.fp8-checkpoint.pre-ada"]


@pytest.mark.xfail(strict=True, reason="FlashAttention 3 is built from the hopper/ folder, not a release the "
                   "database tracks (flash-attn-3 is unknown: only external=true is accepted), so its SM90 "
                   "requirement cannot even be stated")
def test_flash_attention1481_fa3_on_a100(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1481 -- "Can Flash Attention 3 run on A100? ... I get
    the error 'FlashAttentionHopper only supports Hopper GPUs or newer.'"; built from source, flash_attn 3.0.0b1."""
    report = check(stack({"flash-attn-3": {"version": "3.0.0b1", "external": True}}, "A100 80GB"), database=db)
    assert errors(report)


# ======================================================================================
# Build ties: extensions built for another torch or CUDA
# ======================================================================================

def test_xformers971_built_for_torch_2_1_2_cu121_with_a_cpu_torch(db):
    """https://github.com/facebookresearch/xformers/issues/971 -- "xFormers was built for: PyTorch 2.1.2+cu121
    with CUDA 1201 (you have 2.1.0+cpu) Python 3.9.13"; xFormers 0.0.23.post1. Gap: the OS is not stated
    (linux-x86_64 taken)."""
    report = check(stack({"xformers": "0.0.23.post1", "torch": "2.1.0+cpu"}, python="3.9"), database=db)
    assert "requires:xformers==0.0.23.post1:torch" in errors(report)
    assert "accelerator:xformers==0.0.23.post1" in errors(report)


def test_flash_attention931_flash_attn_2_5_7_with_torch_2_3_0(db):
    """https://github.com/Dao-AILab/flash-attention/issues/931 -- "flash_attn_2_cuda...so: undefined symbol:
    _ZN3c104cuda9SetDeviceEi"; "torch: 2.3.0, flash-attn: 2.5.7"; maintainer: "we have new wheels compiled for
    pytorch 2.3.0" (in 2.5.8). cpython-310 from the .so name. Gap: the CUDA is not stated; torch 2.3.0 from
    the index is a CUDA 12.1 build (its wheels, read), taken as the stack's."""
    report = check(stack({"flash-attn": "2.5.7", "torch": "2.3.0"}, python="3.10", cuda="12.1"), database=db)
    # 2.5.7's workflow built its torch 2.3 wheel against the nightly 2.3.0.dev20240207 (an inferred warning)
    assert "2.3.0.dev20240207" in flagged(report)["flash-attn.derived.2.5.7.nightly-wheel.torch-2.3"]


@pytest.mark.xfail(strict=True, reason="2.6.3's wheel matrix stops at torch 2.4 (publish.yml, read): with torch 2.6 "
                   "setup.py compiles locally, and what gave the undefined symbol (a wheel built for another torch, "
                   "from a cache) is nothing the stack or the database says")
def test_flash_attention1832_flash_attn_2_6_3_with_torch_2_6_0(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1832 -- "python 3.12.7, cuda 12.8, torch 2.6.0,
    flash-attn 2.6.3: ImportError: flash_attn_2_cuda...so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocation..."."""
    report = check(stack({"flash-attn": "2.6.3", "torch": "2.6.0"}, cuda="12.8"), database=db)
    assert errors(report)


def test_sdnext3531_torchvision_0_20_1_with_torch_2_4_0(db):
    """https://github.com/vladmandic/sdnext/issues/3531 -- "RuntimeError: operator torchvision::nms does not
    exist"; pip show: torch 2.4.0+cu121, torchvision 0.20.1+cu124, on Windows (C:\\Users\\...\\venv). Gap: the
    Python version is not given (3.10 taken)."""
    report = check(stack({"torch": "2.4.0+cu121", "torchvision": "0.20.1+cu124"}, python="3.10",
                         platform="windows-x86_64"), database=db)
    assert "requires:torchvision==0.20.1:torch" in errors(report)


def test_microwakeword16_latest_torchaudio_with_torch_2_9_0(db):
    """https://github.com/TaterTotterson/microWakeWord-Trainer-AppleSilicon/pull/16 (2026-05-12) -- "When using
    the latest torchaudio with the default TORCH_VERSION of 2.9.0, the training script fails with: Symbol not
    found: _torch_library_impl". Apple Silicon. Gaps: "latest torchaudio" on that date was 2.11.0; Python not
    given (3.12 taken)."""
    report = check(stack({"torch": "2.9.0", "torchaudio": "2.11.0"}, platform="macos-arm64"), database=db)
    # inferred from the metadata of its neighbours (2.11.1 declares torch>=2.11): a warning
    assert "_torch_library_impl" in flagged(report)["torchaudio.2.11.0.torch-floor"]
    assert check(stack({"torch": "2.11.0", "torchaudio": "2.11.0"}, platform="macos-arm64"), database=db).ok


# ======================================================================================
# Platform builds: aarch64 / Grace / Jetson, Windows, Intel Mac, ROCm
# ======================================================================================

def test_vllm28371_gb10_with_a_cpu_torch(db):
    """https://github.com/vllm-project/vllm/issues/28371 -- "Recipe Installation fails due to missing linux
    aarch64.whl"; collect_env: PyTorch 2.8.0+cpu, "Is CUDA available: False", Python 3.12.3, glibc 2.39,
    aarch64, GPU 0: NVIDIA GB10, driver 580.95.05, CUDA runtime 12.6.85."""
    report = check(stack({"torch": "2.8.0+cpu"}, "DGX Spark GB10", cuda="12.6", driver="580.95.05",
                         platform="linux-aarch64", glibc="2.39"), database=db)
    assert "accelerator:torch==2.8.0" in flagged(report)
    assert "will not use the stack's GPU" in flagged(report)["accelerator:torch==2.8.0"]


def test_vllm10459_pip_vllm_on_gh200(db):
    """https://github.com/vllm-project/vllm/issues/10459 -- "VLLM on ARM machine with GH200": pip install vllm
    -> "Using cached vllm-0.6.4.post1.tar.gz ... Getting requirements to build wheel ... error"; pip freeze
    torch==2.5.1; GH200, driver 550.90.07, CUDA 12.4; python3.10 from the build log."""
    report = check(stack({"vllm": "0.6.4.post1", "torch": "2.5.1"}, "GH200", python="3.10", cuda="12.4",
                         driver="550.90.07", platform="linux-aarch64"), database=db)
    found = flagged(report)
    assert "source-build:vllm==0.6.4.post1" in found and "linux-aarch64" in found["source-build:vllm==0.6.4.post1"]
    assert "accelerator:torch==2.5.1" in found


def test_vllm30065_vllm_0_12_0_not_found_on_aarch64(db):
    """https://github.com/vllm-project/vllm/issues/30065 -- "Missing v0.12.0 'pip install' for aarch64": on RHEL
    9.6 aarch64 (AmpereOne), pip install vllm "Installs vllm v0.11.0"; pip install vllm==0.12.0 -> "Could not
    find a version". Gap: the Python is not stated; RHEL 9.6's system python3 (3.9) is taken, which is what
    makes pip stop at 0.11.0 (>=3.9) -- with 3.10+ compat finds 0.12.0's aarch64 wheel and says nothing."""
    report = check(stack({"vllm": "0.12.0"}, python="3.9", platform="linux-aarch64"), database=db)
    assert "requires-python:vllm==0.12.0" in errors(report)


def test_vllm13518_pip_install_vllm_on_windows(db):
    """https://github.com/vllm-project/vllm/issues/13518 -- "pip failed" on Windows (C:\\Users\\...\\miniconda3):
    "Building wheel for vllm (pyproject.toml) ... error ... vLLM only supports Linux platform (including WSL)".
    Gaps: no vLLM version (outlines==0.1.11 in the log; 0.7.2 was current), no Python (3.12 taken)."""
    report = check(stack({"vllm": "0.7.2"}, platform="windows-x86_64"), database=db)
    found = flagged(report)
    assert "source-build:vllm==0.7.2" in found and "windows-x86_64" in found["source-build:vllm==0.7.2"]


def test_pytorch161614_torch_2_6_on_an_intel_mac(db):
    """https://github.com/pytorch/pytorch/issues/161614 -- "No matching distribution found for torch==2.6.0,
    python 3.11, macOS"; maintainer: "Are you on Intel Mac? ... last torch release for Intel Mac was 2.2.2"."""
    report = check(stack({"torch": "2.6.0"}, python="3.11", platform="macos-x86_64"), database=db)
    assert "wheel:torch==2.6.0" in errors(report)


def test_pytorch168065_pip_install_torch_on_gb200(db):
    """https://github.com/pytorch/pytorch/issues/168065 (2025-11-18) -- "On aarch64, `pip install torch` resulted
    in the CPU version?" on a GB200; "torch stable" (2.9.1 on that date). Gaps: CUDA 12.8 taken from the
    workaround (--index-url .../cu128); Python not given (3.12 taken)."""
    report = check(stack({"torch": "2.9.1"}, "GB200", platform="linux-aarch64", cuda="12.8"), database=db)
    assert "accelerator:torch==2.9.1" in flagged(report)


def test_pinokio1027_pip_torch_on_jetson_agx_orin(db):
    """https://github.com/pinokiocomputer/pinokio/issues/1027 (2025-12-31) -- Jetson AGX Orin, JetPack 5.1.2
    (CUDA 11.4), Python 3.10: "Running pip install torch installs a generic manylinux version that does not
    support CUDA on Jetson hardware". Gap: the version pip took on that date, 2.9.1."""
    report = check(stack({"torch": "2.9.1"}, "Jetson AGX Orin", python="3.10", platform="linux-aarch64",
                         cuda="11.4"), database=db)
    # the index's aarch64 wheels of 2.9.1, read, carry no CUDA library: a CPU torch, as the report says
    assert "will not use the stack's GPU" in flagged(report)["accelerator:torch==2.9.1"]


def test_vllm44660_rocm_python_3_11_gets_the_cuda_wheel(db):
    """https://github.com/vllm-project/vllm/issues/44660 (2026-06-05) -- "ROCm install silently falls back to
    CUDA abi3 wheel on Python < 3.12"; PyTorch 2.12.0+rocm7.2, Python 3.11.2, glibc 2.36, AMD Instinct MI210,
    "vLLM Build Flags: ROCm: Disabled". Gap: vLLM version not given; 0.22.0 was current."""
    report = check(stack({"vllm": "0.22.0", "torch": "2.12.0+rocm7.2"}, "MI210", python="3.11", rocm="7.2",
                         glibc="2.36"), database=db)
    assert "accelerator:vllm==0.22.0" in errors(report)
    assert "runs on NVIDIA GPUs" in flagged(report)["accelerator:vllm==0.22.0"]


# ======================================================================================
# Working setups users reported: must give no error
# ======================================================================================

def test_comfyui9929_fix_torch_2_8_cu128_on_gtx_1070(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/9929 -- the workaround that worked: "I reinstalled torch,
    torchvision, and torchaudio with version 2.8.0+cu128. After that, ComfyUI worked successfully" (GTX 1070,
    Windows)."""
    report = check(stack({"torch": "2.8.0+cu128", "torchvision": "0.23.0+cu128", "torchaudio": "2.8.0+cu128"},
                         "GTX 1070", cuda="12.8", platform="windows-x86_64"), database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_flash_attention931_torch_2_3_0_with_flash_attn_2_5_8_works(db):
    """https://github.com/Dao-AILab/flash-attention/issues/931 -- "torch 2.3.0 + flash-attn 2.5.8 works
    (same configuration as your python3.10, Cuda12.1, ubuntu 22.04)"."""
    report = check(stack({"flash-attn": "2.5.8", "torch": "2.3.0"}, python="3.10", cuda="12.1"), database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_flash_attention940_python_3_9_torch_2_3_0_flash_attn_2_5_8_works(db):
    """https://github.com/Dao-AILab/flash-attention/issues/940 -- "Thanks. Python 3.9.19, cuda12.2, torch2.3.0
    flash_attn==2.5.8, it works."."""
    report = check(stack({"flash-attn": "2.5.8", "torch": "2.3.0"}, python="3.9", cuda="12.2"), database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_xformers1096_xformers_0_0_27_post2_with_torch_2_4_0_cu121(db):
    """https://github.com/facebookresearch/xformers/issues/1096 -- "seems like the xformers==0.0.27.post2 works
    just fine for 2.4.0+cu121". Gap: Python not given (3.10 taken)."""
    report = check(stack({"xformers": "0.0.27.post2", "torch": "2.4.0+cu121"}, python="3.10", cuda="12.1"),
                   database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_vllm10001_torch_2_5_1_torchvision_0_20_1_xformers_0_0_28_post3(db):
    """https://github.com/vllm-project/vllm/pull/10001 -- "[Bugfix] Upgrade to pytorch 2.5.1": torch == 2.5.1,
    torchvision == 0.20.1, xformers == 0.0.28.post3 ("Requires PyTorch 2.5.1"), merged with CI green. CUDA 12.4
    (torch 2.5.1's index build)."""
    report = check(stack({"torch": "2.5.1", "torchvision": "0.20.1", "xformers": "0.0.28.post3"}, cuda="12.4"),
                   database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_reforge482_torch_2_8_0_with_xformers_0_0_32_post2(db):
    """https://github.com/Panchovix/stable-diffusion-webui-reForge/pull/482 -- "Pins torch==2.8.0 and
    xformers==0.0.32.post2 ... a known-good compatible pair" from the cu128 index. Gap: the OS is not stated
    (linux-x86_64 taken)."""
    report = check(stack({"torch": "2.8.0+cu128", "xformers": "0.0.32.post2"}, cuda="12.8"), database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_pytorch168065_workaround_cu128_index_on_gb200(db):
    """https://github.com/pytorch/pytorch/issues/168065 -- "It can be bypassed with pip3 install torch
    --index-url https://download.pytorch.org/whl/cu128" on a GB200 (aarch64); torch 2.9.1 on that date."""
    report = check(stack({"torch": "2.9.1+cu128"}, "GB200", platform="linux-aarch64", cuda="12.8"), database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_secondme32_torch_2_2_2_on_an_intel_mac(db):
    """https://github.com/mindverse/Second-Me/issues/32 -- "python version 3.12"; "version 2.2.2 is last version
    for Intel Mac" -- "yes, you are my hero, bro. worked"."""
    report = check(stack({"torch": "2.2.2"}, platform="macos-x86_64"), database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_vllm4827_fp8_e5m2_kv_cache_on_a10(db):
    """https://github.com/vllm-project/vllm/issues/4827 (2024-05-15) -- "Can I still use FP8 E5M2 KV Cache if my
    GPU capability is less than 8.9? VLLM did not report any errors ... use vllm in A10". Gap: no vLLM version;
    0.4.2 was current."""
    report = check(stack({"vllm": "0.4.2"}, "A10", options={"vllm": {"kv-cache-dtype": "fp8_e5m2"}}), database=db)
    assert not report.errors, [f.message for f in report.errors]


def test_vllm14608_vllm_0_7_3_cu118_wheel(db):
    """https://github.com/vllm-project/vllm/issues/14608 -- "The following command worked for me: pip install
    .../v0.7.3/vllm-0.7.3+cu118-cp38-abi3-manylinux1_x86_64.whl --extra-index-url
    https://download.pytorch.org/whl/cu118"; "Python 3.10 or more" (3.10 taken)."""
    report = check(stack({"vllm": "0.7.3+cu118"}, python="3.10", cuda="11.8", index="cu118"), database=db)
    assert not report.errors, [f.message for f in report.errors]
