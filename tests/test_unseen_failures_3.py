"""A third blind set: real failures (and working setups) from upstream
trackers, collected blind (without a look at compat's data, its rules or
the other test files' cases), none cited anywhere else in the repository,
written as the users described them (every assumption under "Gaps") before
compat was run on them, and checked against the bundled database (the
conventions of test_unseen_failures.py and test_unseen_failures_2.py).

A failure is CAUGHT when compat gives an error or a warning whose ID names
the real cause. One compat MISSES is an ``xfail(strict=True)`` test with the
reason: it asserts that compat flags something beyond the unrelated findings
it gives today, so a new finding there makes it pass and asks for a look.
A working setup must give no error.
"""

from __future__ import annotations

import pytest

# the conventions of the first set: findings without the search for fixes, errors and warnings by ID
from .test_unseen_failures import check, errors, flagged


# --- failures ---------------------------------------------------------------------------------


def test_vllm16901(db):
    """https://github.com/vllm-project/vllm/issues/16901 (2025-04-21) -- "RuntimeError: CUDA error: no kernel
    image is available for execution on the device ... PyTorch does not support the compute capability of the
    RTX 5090 (sm_120)". Expected: vLLM from PyPI pins torch 2.6.0, whose PyPI (cu124) wheels carry kernels up to
    sm_90; an RTX 5090 (sm_120) needs a cu128 build (torch 2.7.0+, vLLM 0.9+). Gaps: "vLLM Version: Latest (from
    PyPI)" on the report date is 0.8.4 (2025-04-14), with its pin torch==2.6.0 from PyPI (cu124). Python 3.10,
    Ubuntu 22.04 (glibc 2.35), driver 570.124.06 as reported; the host's CUDA 12.8 toolkit is not what the wheels
    target."""
    report = check({'system': {'python': '3.10',
                               'platform': 'linux-x86_64',
                               'cuda': '12.4',
                               'driver': '570.124.06',
                               'glibc': '2.35'},
                    'hardware': {'gpu': 'RTX 5090'},
                    'packages': {'vllm': '0.8.4', 'torch': '2.6.0'}}, database=db)
    assert "arch:torch==2.6.0" in flagged(report)


def test_vllm15336(db):
    """https://github.com/vllm-project/vllm/issues/15336 (2025-03-22) -- "Deploy DeepSeek R1 671B,
    ValueError("type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15',
    'fp8e5')")" on 8x A800-SXM4-80GB. Expected: the FP8 (block-quantized) DeepSeek-R1 checkpoint runs vLLM's
    Triton w8a8 FP8 kernels, which need fp8e4nv, i.e. compute capability >= 8.9; an A800 is sm_80 (Ampere), so
    the FP8 checkpoint cannot be served natively there (use a BF16/INT8/GGUF variant or Hopper). Gaps:
    collect_env gives PyTorch 2.6.0+cu124, Python 3.10.12, glibc 2.35, driver 560.35.03; the vLLM version is not
    printed: the "[__init__.py:256]" log style and torch 2.6.0 fit 0.8.1 (2025-03-19), assumed. The quantization
    is the checkpoint's own (fp8), which vLLM reads from its config; the launch command is not given, TP=8 over
    the eight GPUs assumed."""
    report = check({'system': {'python': '3.10.12',
                               'platform': 'linux-x86_64',
                               'cuda': '12.4',
                               'driver': '560.35.03',
                               'glibc': '2.35'},
                    'hardware': {'gpu': 'A800', 'count': 8},
                    'packages': {'vllm': '0.8.1', 'torch': '2.6.0+cu124'},
                    'options': {'vllm': {'quantization': 'fp8', 'tensor-parallel-size': 8}},
                    'model': {'name': 'DeepSeek-R1', 'family': 'deepseek-r1', 'checkpoint_dtype': 'fp8'}},
                   database=db)
    # A miss when the set was measured; caught since (not blind): the model catalog now knows DeepSeek-R1 as a
    # mixture of experts, which decides vllm.fp8-moe.pre-ada. (xgrammar 0.1.16, which 0.8.1 pins, is gone from
    # the index: that error is true too.)
    assert "vllm.fp8-moe.pre-ada" in errors(report)


def test_vllm26431(db):
    """https://github.com/vllm-project/vllm/issues/26431 (2025-10-08) -- "KV Cache Quantization not working on v1
    (rtx3090) "type fp8e4nv not supported in this architecture"" (in reshape_and_cache_kernel_flash). Expected:
    on vLLM 0.11.0 (V1 engine) an FP8 KV cache (kv-cache-dtype fp8 = fp8_e4m3) goes through a Triton kernel that
    needs fp8e4nv (compute capability >= 8.9); RTX 3090 is sm_86, so the option is refused at run time there.
    Gaps: vLLM 0.11.0 in its Docker image (Python 3.12, NVIDIA_REQUIRE_CUDA cuda>=12.8) as reported; torch 2.8.0
    is 0.11.0's pin; two RTX 3090 (GPU0/GPU1 in the topology), TP=2 assumed; driver not given."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64', 'cuda': '12.8'},
                    'hardware': {'gpu': 'RTX 3090', 'count': 2},
                    'packages': {'vllm': '0.11.0', 'torch': '2.8.0'},
                    'options': {'vllm': {'kv-cache-dtype': 'fp8', 'tensor-parallel-size': 2}}}, database=db)
    # A miss when the set was measured; caught since (not blind) by vllm.fp8-kv.default-backend.0.11.0-ampere,
    # read in the 0.11.0 wheel after it (a warning: the MLA backends are not read)
    assert "fp8e4nv" in flagged(report)["vllm.fp8-kv.default-backend.0.11.0-ampere"]


def test_es_at_scale41(db):
    """https://github.com/VsonicV/es-at-scale/issues/41 (2026-02-05) -- "AttributeError: Qwen2Tokenizer has no
    attribute all_special_tokens_extended ... a compatibility issue between vLLM's tokenizer caching logic and the
    current version of the transformers library". Expected: vLLM 0.11.0 requires transformers < 5; transformers
    5.1.0 removed the tokenizer attribute vLLM 0.11 uses, so the engine fails at start-up; transformers must stay
    4.x (or vLLM be upgraded to a release supporting 5.x). Gaps: versions as reported (vLLM 0.11.0, transformers
    5.1.0, PyTorch 2.8.0, Python 3.10), 1x H100 80GB SXM5 on Lambda's Ubuntu 22.04 image (glibc 2.35); torch
    2.8.0 from PyPI targets CUDA 12.8; driver not given."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.8', 'glibc': '2.35'},
                    'hardware': {'gpu': 'H100 SXM'},
                    'packages': {'vllm': '0.11.0', 'transformers': '5.1.0', 'torch': '2.8.0'},
                    'model': {'name': 'Qwen2.5-3B-Instruct', 'family': 'qwen2.5'}}, database=db)
    assert "vllm.transformers-5.tokenizer" in flagged(report)


def test_phoronix_test_profiles337(db):
    """https://github.com/phoronix-test-suite/test-profiles/issues/337 (2026-01-11) -- "It's not possible to
    install vllm on Debian 13 (trixie) because it ships with Python 3.13 ... 0.10.0 Requires-Python
    <3.13,>=3.9". Expected: vLLM 0.10.0 declares Requires-Python <3.13, so pip finds no distribution on Python
    3.13; a later vLLM (with 3.13 wheels) or Python <= 3.12 is needed. Gaps: Debian 13's system Python 3.13 and
    glibc 2.41; the test profile pins vllm==0.10 (0.10.0); no GPU or CUDA stated, none given."""
    report = check({'system': {'python': '3.13', 'platform': 'linux-x86_64', 'glibc': '2.41'},
                    'packages': {'vllm': '0.10.0'}}, database=db)
    assert "requires-python:vllm==0.10.0" in flagged(report)


def test_vllm7575(db):
    """https://github.com/vllm-project/vllm/issues/7575 (2024-08-16) -- "I want to install vllm in Jetson AGX
    Orin. I use the script "pip install vllm" ... Using cached vllm-0.5.4.tar.gz ... Getting requirements to
    build wheel ... error". Expected: vLLM 0.5.4 publishes no linux-aarch64 wheel, so pip falls back to the sdist,
    whose build needs a CUDA-enabled torch 2.4.0 (its pin); the "pytorch aarch64 wheels" from PyPI (torch 2.3.0)
    are CPU-only and do not match the pin, so nothing builds on a Jetson (use a JetPack-built vLLM/torch, e.g.
    jetson-containers). Gaps: JetPack 6.0 on Ubuntu 22.04 (glibc 2.35, Python 3.10, CUDA 12.2 in JetPack 6.0);
    Jetson AGX Orin is sm_87; torch 2.3.0 from PyPI as reported."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-aarch64', 'cuda': '12.2', 'glibc': '2.35'},
                    'hardware': {'compute_capability': '8.7'},
                    'packages': {'vllm': '0.5.4', 'torch': '2.3.0'}}, database=db)
    assert "source-build:vllm==0.5.4" in flagged(report)
    assert "requires:vllm==0.5.4:torch" in flagged(report)


def test_vllm7430(db):
    """https://github.com/vllm-project/vllm/issues/7430 (2024-08-12) -- "[Bug]: Does not work on MacOS" ... "pip
    install vllm ... Downloading vllm-0.5.4.tar.gz"; a comment adds "PyTorch has stopped building MacOS x86_64
    binaries since torch v2.3.0". Expected: vLLM 0.5.4 has no macOS build (sdist only, CUDA/Linux build) and pins
    torch 2.4.0, which has no macOS x86_64 wheel (the last is 2.2.2), so it cannot be installed on an Intel Mac.
    Gaps: collect_env as reported: macOS 14.5 x86_64 (Intel i9-8950HK), Python 3.9.6, torch 2.2.2; vLLM 0.5.4 is
    the sdist pip fetched."""
    report = check({'system': {'python': '3.9.6', 'platform': 'macos-x86_64'},
                    'packages': {'vllm': '0.5.4', 'torch': '2.2.2'}}, database=db)
    assert "source-build:vllm==0.5.4" in flagged(report)
    assert "requires:vllm==0.5.4:torch" in flagged(report)


@pytest.mark.xfail(strict=True, reason="SGLang 0.2.12 / FlashInfer 0.1.4 on an sm_75 T4 is not flagged: 'flashinfer' "
                                       "(the pre-0.2 distribution name) is untracked and no SGLang 0.2.x sm_75 floor "
                                       "is known")
def test_sglang1058(db):
    """https://github.com/sgl-project/sglang/issues/1058 (2024-08-12) -- "[Bug] T4 not work" (FlashInfer
    attention, and the Triton fallback with --disable-flashinfer fails in extend_attention with "IndexError:
    map::at"). Expected: SGLang 0.2.12's attention kernels (FlashInfer 0.1.x and its Triton kernels) did not
    support sm_75; a Tesla T4 (sm_75) got support only with FlashInfer 0.1.6 (SGLang PR 1233). Gaps: environment
    as reported: Python 3.10.12, T4 (7.5), driver 535.104.05, PyTorch 2.4.0+cu121, SGLang v0.2.12 (release
    branch); FlashInfer installed from flashinfer.ai/whl/cu121/torch2.4: its newest then, 0.1.4 (2024-08-09),
    assumed; glibc 2.35 (Colab/Ubuntu 22.04) assumed."""
    report = check({'system': {'python': '3.10.12',
                               'platform': 'linux-x86_64',
                               'cuda': '12.1',
                               'driver': '535.104.05',
                               'glibc': '2.35'},
                    'hardware': {'gpu': 'T4'},
                    'packages': {'sglang': '0.2.12', 'flashinfer': '0.1.4', 'torch': '2.4.0+cu121'}},
                   database=db)
    assert set(flagged(report)) - {"untracked:flashinfer"}


@pytest.mark.xfail(strict=True, reason="sglang 0.4.3's requirement flashinfer-python>=0.2.1.post1 is not applied to "
                                       "a bare 'sglang' (it sits in the [srt]/[all] extra, which the stack does not "
                                       "name)")
def test_sglang3561(db):
    """https://github.com/sgl-project/sglang/issues/3561 (2025-02-14) -- "install v0.4.3 got error: ERROR: Could
    not find a version that satisfies the requirement flashinfer_python>=0.2.1.post1; extra == "srt" ... (from
    versions: 0.2.0.post1, 0.2.0.post2, 0.2.0.post2+cu124torch2.5, 0.2.1)". Expected: SGLang 0.4.3[srt] requires
    flashinfer-python >= 0.2.1.post1; the stack's flashinfer-python 0.2.1 (the newest on the index then) does not
    satisfy it. Gaps: image lmsysorg/sglang:v0.4.2.post4-cu124 (Python 3.10, Ubuntu 22.04, torch 2.5.1+cu124,
    SGLang 0.4.3's pin); the GPU is not stated, none given."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.4', 'glibc': '2.35'},
                    'packages': {'sglang': '0.4.3', 'flashinfer-python': '0.2.1', 'torch': '2.5.1'}},
                   database=db)
    assert set(flagged(report)) - {"source-build:flashinfer-python==0.2.1",
                                   "unknown-metadata:flashinfer-python==0.2.1"}


def test_mineru3416(db):
    """https://github.com/opendatalab/MinerU/issues/3416 (2025-09-04) -- "SGlang only supports sm 75 and above
    ... My GPU is a V100, compute capability should be sm70" (running mineru -b vlm-sglang-engine). Expected:
    SGLang 0.4.x (its sgl-kernel) supports compute capability >= 7.5; a V100 (sm_70) cannot run the SGLang
    engine, and no SGLang version of that line restores it. Gaps: Ubuntu 24.04 (glibc 2.39), Python 3.12, MinerU
    2.0.x as reported; MinerU 2.0.x installs sglang[all] >=0.4.7,<0.4.9: SGLang 0.4.8 with its pin torch 2.7.1
    (cu126) assumed."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64', 'cuda': '12.6', 'glibc': '2.39'},
                    'hardware': {'gpu': 'V100'},
                    'packages': {'sglang': '0.4.8', 'torch': '2.7.1'}}, database=db)
    assert "sglang.compute-capability.sm75" in flagged(report)


@pytest.mark.xfail(strict=True, reason="the C++ ABI mismatch between FlashInfer's AOT wheel (PyPI torch 2.5) and "
                                       "NGC's torch 2.5.0a0+nv24.08 is not flagged (only that NGC's torch is not on "
                                       "PyPI)")
def test_flashinfer911(db):
    """https://github.com/flashinfer-ai/flashinfer/issues/911 (2025-03-05) -- "flashinfer_kernels.abi3.so:
    undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb" after "pip install flashinfer-python -i
    https://flashinfer.ai/whl/cu124/torch2.5" in nvcr.io/nvidia/pytorch:24.08-py3. Expected: FlashInfer's AOT
    wheels are built against PyPI's torch 2.5 (pre-C++11 ABI); NGC's torch 2.5.0a0+...nv24.08 is built with the
    C++11 ABI, so the prebuilt kernels fail to load; FlashInfer must be JIT-built/compiled against the container's
    torch. Gaps: H100, driver 550.90.07, torch '2.5.0a0+872d972e41.nv24.08' as reported; NGC 24.08 is Ubuntu 22.04
    with Python 3.10 (glibc 2.35) and CUDA 12.6; the wheel pip took from that index on the report date assumed to
    be flashinfer-python 0.2.2.post1."""
    report = check({'system': {'python': '3.10',
                               'platform': 'linux-x86_64',
                               'cuda': '12.6',
                               'driver': '550.90.07',
                               'glibc': '2.35'},
                    'hardware': {'gpu': 'H100'},
                    'packages': {'flashinfer-python': '0.2.2.post1', 'torch': '2.5.0a0+872d972e41.nv24.08'}},
                   database=db)
    assert set(flagged(report)) - {"missing:torch==2.5.0a0",
                                   "source-build:flashinfer-python==0.2.2.post1",
                                   "unknown-metadata:flashinfer-python==0.2.2.post1"}


@pytest.mark.xfail(strict=True, reason="flash-attn 2.5.8's prebuilt extension does not load with torch 2.1.2 "
                                       "(undefined c10::impl::cow symbol): the flash-attn/torch ABI tie is not "
                                       "flagged")
def test_flash_attention950(db):
    """https://github.com/Dao-AILab/flash-attention/issues/950 (2024-05-14) -- "torch 2.1.2, flash-attn 2.5.8,
    cuda 11.7 ... flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol:
    _ZN3c104impl3cow11cow_deleterEPv". Expected: flash-attn 2.5.8's extension is built against torch 2.2/2.3
    (c10::impl::cow exists from torch 2.2); with torch 2.1.2 it fails to import; flash-attn 2.5.7 (or a source
    build against 2.1.2) is needed, as a commenter confirms. Gaps: Python 3.10 from the .so name; torch 2.1.2's
    CUDA build not stated: PyPI's default (cu121) assumed (the reported CUDA 11.7 is the host toolkit; torch 2.1
    has no cu117 build); GPU not stated."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.1'},
                    'packages': {'flash-attn': '2.5.8', 'torch': '2.1.2'}}, database=db)
    assert set(flagged(report)) - {"source-build:flash-attn==2.5.8", "unknown-metadata:flash-attn==2.5.8"}


@pytest.mark.xfail(strict=True, reason="the flash-attn 2.8.0.post2 prebuilt wheel's C++ ABI mismatch with torch "
                                       "2.6.0 (undefined c10::Error __cxx11 symbol) is not flagged")
def test_flash_attention1717(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1717 (2025-06-16) -- "When upgraded from flash_attn
    2.7.4.post1 to 2.8.0.post2, the wheel with the same dependencies gets undefined symbol error ...
    flash_attn_2_cuda...so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_string..."
    Expected: the flash-attn 2.8.0.post2 prebuilt wheel picked for torch 2.6 / CUDA 12.4 does not match torch
    2.6.0's C++ ABI (the __cxx11 std::string symbol is missing from PyPI's torch 2.6.0), so importing it fails;
    2.7.4.post1 works. Gaps: image whatcanyousee/verl:ngc-cu124-vllm0.8.5-sglang0.4.6.post5 (Python 3.10; vLLM
    0.8.5 pins torch 2.6.0, CUDA 12.4); only the failing pair is written, the image's vLLM/SGLang left out; CI
    GPU not stated."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.4'},
                    'packages': {'flash-attn': '2.8.0.post2', 'torch': '2.6.0'}}, database=db)
    assert set(flagged(report)) - {"source-build:flash-attn==2.8.0.post2",
                                   "unknown-metadata:flash-attn==2.8.0.post2"}


def test_flash_attention2288(db):
    """https://github.com/Dao-AILab/flash-attention/issues/2288 (2026-02-28) -- "ERROR: Failed building wheel for
    flash-attn" on Windows 11, Python 3.12.0, RTX 4060, torch 2.5.1+cu121 ("pip install flash-attn
    --no-build-isolation" -> flash_attn-2.8.3.tar.gz). Expected: flash-attn publishes no Windows wheels, so pip
    builds the sdist, which fails without a matching MSVC/CUDA toolchain; a community Windows wheel for that
    torch/CUDA/Python or SDPA is needed. Gaps: versions as reported; flash-attn 2.8.3 is the sdist pip fetched;
    CUDA 12.1 is the torch build."""
    report = check({'system': {'python': '3.12.0', 'platform': 'windows-x86_64', 'cuda': '12.1'},
                    'hardware': {'gpu': 'RTX 4060'},
                    'packages': {'flash-attn': '2.8.3', 'torch': '2.5.1+cu121'}}, database=db)
    assert "source-build:flash-attn==2.8.3" in flagged(report)


@pytest.mark.xfail(strict=True, reason="PyPI's aarch64 (SBSA) wheels failing on a Jetson (L4T) are not flagged. "
                                       "As collected, bitsandbytes was untracked; since tracked (not blind): its "
                                       "aarch64 wheel's kernels, read, include sm_80, which runs on sm_87; the "
                                       "SBSA/L4T build mismatch the maintainer names is nothing the wheel shows")
def test_bitsandbytes1930(db):
    """https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1930 (2026-04-22) -- "aarch64 prebuilt
    wheels do not include sm_87 -- Jetson Orin devices fail at first CUDA kernel launch ... RuntimeError: Error
    named symbol not found at line 233 in file /src/csrc/ops.cu". Expected: PyPI's linux-aarch64 bitsandbytes
    wheels are built for aarch64-SBSA (server ARM, standard CUDA toolkit), not for L4T/JetPack; on a Jetson Orin
    the import succeeds but the first kernel fails (maintainer: an ABI/toolchain mismatch, not only the arch
    list); a source build on the device or the Jetson AI Lab index is needed. Gaps: as reported: Jetson Orin Nano
    Super (sm_87), JetPack 6.2 (CUDA 12.6, Ubuntu 22.04, glibc 2.35), Python 3.10.12, torch
    2.5.0a0+872d972e41.nv24.08 (NVIDIA JetPack wheel), bitsandbytes 0.46.1."""
    report = check({'system': {'python': '3.10.12', 'platform': 'linux-aarch64', 'cuda': '12.6', 'glibc': '2.35'},
                    'hardware': {'compute_capability': '8.7'},
                    'packages': {'bitsandbytes': '0.46.1', 'torch': '2.5.0a0+872d972e41.nv24.08'}},
                   database=db)
    assert set(flagged(report)) - {"missing:torch==2.5.0a0"}


def test_bitsandbytes1172(db):
    """https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1172 (2024-04-10) -- "CUDA Setup failed
    despite GPU being available" after "pip install bitsandbytes ... bitsandbytes-0.42.0-py3-none-any.whl" on a
    Jetson Orin AGX with JetPack 6 and CUDA 12.2; the maintainers answer "There has not been a bitsandbytes
    release built for aarch64 yet". Expected: bitsandbytes 0.42.0 ships only x86-64 CUDA libraries; on
    linux-aarch64 there is no native library to load. Gaps: Python 3.10.12 and torch 2.2.0a0+6a974be (NVIDIA's
    JetPack build) as reported; Ubuntu 22.04 (glibc 2.35); AGX Orin is sm_87."""
    report = check({'system': {'python': '3.10.12', 'platform': 'linux-aarch64', 'cuda': '12.2', 'glibc': '2.35'},
                    'hardware': {'compute_capability': '8.7'},
                    'packages': {'bitsandbytes': '0.42.0', 'torch': '2.2.0a0+6a974be'}}, database=db)
    # A miss when the set was measured; caught since (not blind): bitsandbytes is tracked, and its wheels read
    # (tools/derive_bitsandbytes.py): 0.42.0's one py3-none-any wheel carries x86-64 libraries only
    assert "bitsandbytes.derived.0.42.0.native-libraries.platforms" in errors(report)


@pytest.mark.xfail(strict=True, reason="FP8 fast matmul (torch._scaled_mm) on an sm_86 RTX 3090 Ti is not flagged: "
                                       "the node's fp8_e4m3fn_fast setting is an unknown option")
def test_comfyui_hunyuanvideowrapper98(db):
    """https://github.com/kijai/ComfyUI-HunyuanVideoWrapper/issues/98 (2024-12-10) -- "3090Ti too old? Error:
    torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9"; maintainer: "Do
    you have fp8 fastmode selected? That won't work on 3090". Expected: FP8 matrix multiplication
    (fp8_e4m3fn_fast, torch._scaled_mm) needs compute capability >= 8.9; an RTX 3090 Ti (sm_86) can only store
    FP8 weights and upcast them (fp8_e4m3fn without _fast). Gaps: ComfyUI version, torch, Python and platform
    not stated: the Windows portable of the date assumed (ComfyUI 0.3.7, Python 3.12, torch 2.5.1+cu124); the
    wrapper's quantization setting is a node option, written as a ComfyUI option 'quantization'; HunyuanVideo
    FP8 weights."""
    report = check({'system': {'python': '3.12', 'platform': 'windows-x86_64', 'cuda': '12.4'},
                    'hardware': {'gpu': 'RTX 3090 Ti'},
                    'packages': {'comfyui': '0.3.7', 'torch': '2.5.1+cu124'},
                    'options': {'comfyui': {'quantization': 'fp8_e4m3fn_fast'}},
                    'model': {'name': 'HunyuanVideo', 'family': 'hunyuan-video', 'checkpoint_dtype': 'fp8'}},
                   database=db)
    assert set(flagged(report)) - {"unknown-option:comfyui:quantization", "unknown-release:comfyui==0.3.7"}


@pytest.mark.xfail(strict=True, reason="ComfyUI --fast with torch 2.3 on an sm_89 GPU (torch._scaled_mm allowed on "
                                       "sm_90 only before torch 2.4) is not flagged: 'fast' is an unknown comfyui "
                                       "option")
def test_comfyui4531(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/4531 (2024-08-21) -- "Using --fast I get the above error
    [torch._scaled_mm is only supported on devices with compute capability >= 9.0] ... on a 4060ti 16Gb";
    maintainer: "Try updating your pytorch." -- "That has now worked!". Expected: ComfyUI's --fast (FP8 matrix
    multiplication via torch._scaled_mm) needs torch >= 2.4 on Ada (sm_89): torch 2.3 only allows it on sm_90.
    Gaps: Ubuntu 22.04 in WSL (glibc 2.35); torch version not stated: the message's wording is torch <= 2.3's,
    2.3.1+cu121 (the newest 2.3) assumed, Python 3.10; ComfyUI master of the day (--fast landed 2024-08-20)
    written as 0.1.0, the first tagged release carrying it (assumed)."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.1', 'glibc': '2.35'},
                    'hardware': {'gpu': 'RTX 4060 Ti'},
                    'packages': {'comfyui': '0.1.0', 'torch': '2.3.1+cu121'},
                    'options': {'comfyui': {'fast': True}}}, database=db)
    assert set(flagged(report)) - {"unknown-option:comfyui:fast", "unknown-release:comfyui==0.1.0"}


def test_comfyui8882(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/8882 (2025-07-12) -- "xformers installs incompatible torch
    version (2.7.1) despite having torch 2.5.1+cu121 installed for CUDA 12.1" on an "NVIDIA GeForce RTX 5070".
    Expected: the xformers of the date (0.0.31.post1) requires torch 2.7.1, so it cannot sit on torch 2.5.1; and
    torch 2.5.1+cu121 has no sm_120 kernels for an RTX 5070 (Blackwell, not Ada as written), which needs a cu128
    build (torch >= 2.7.0) anyway. Gaps: Windows 11, Python 3.10.11, torch 2.5.1+cu121 / torchvision 0.20.1+cu121
    / torchaudio 2.5.1+cu121 as reported; xformers 0.0.31.post1 (newest then) assumed; ComfyUI git master of
    the date written as 0.3.44 (assumed)."""
    report = check({'system': {'python': '3.10.11', 'platform': 'windows-x86_64', 'cuda': '12.1'},
                    'hardware': {'gpu': 'RTX 5070'},
                    'packages': {'comfyui': '0.3.44',
                                 'torch': '2.5.1+cu121',
                                 'torchvision': '0.20.1+cu121',
                                 'torchaudio': '2.5.1+cu121',
                                 'xformers': '0.0.31.post1'}}, database=db)
    assert "requires:xformers==0.0.31.post1:torch" in flagged(report)
    assert "arch:torch==2.5.1" in flagged(report)


def test_vision9174(db):
    """https://github.com/pytorch/vision/issues/9174 (2025-08-11) -- "torchvision::nms does not exist error on
    import torchvision on new installation ... print(torch.__version__) 2.6.0 ... Successfully uninstalled
    torchvision 0.23.0". Expected: torchvision 0.23.0 is built for torch 2.8.0 only; loaded with torch 2.6.0 its
    C++ ops fail to register ("operator torchvision::nms does not exist"); torch 2.8.0 (or torchvision 0.21.0 for
    torch 2.6.0) is needed. Gaps: Ubuntu 24.04 (glibc 2.39), Python 3.12, driver 570.124.04 as reported; the torch
    2.6.0 actually imported is the one written; its CUDA build not stated: cu126 assumed; GPU not stated."""
    report = check({'system': {'python': '3.12',
                               'platform': 'linux-x86_64',
                               'cuda': '12.6',
                               'driver': '570.124.04',
                               'glibc': '2.39'},
                    'packages': {'torch': '2.6.0', 'torchvision': '0.23.0'}}, database=db)
    assert "requires:torchvision==0.23.0:torch" in flagged(report)


# --- working setups ---------------------------------------------------------------------------


def test_comfyui3348_working(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/3348 (2024-04-26) -- "after updating ComfyUI, it now uses torch
    2.3.0, which has no compatible version of xformers ... So I downgraded torch to 2.2.2, torchvision to 0.17.2,
    and re-installed xformers 0.0.25.post1." Expected: works (xformers 0.0.25.post1 is the build for torch 2.2.2;
    torchvision 0.17.2 is torch 2.2.2's). Gaps: ComfyUI version of the day not tagged, left out; the Windows
    portable of the time assumed (Python 3.11, cu121 builds); GPU not stated."""
    report = check({'system': {'python': '3.11', 'platform': 'windows-x86_64', 'cuda': '12.1'},
                    'packages': {'torch': '2.2.2+cu121',
                                 'torchvision': '0.17.2+cu121',
                                 'xformers': '0.0.25.post1'}}, database=db)
    assert not errors(report)


def test_sglang37349_working(db):
    """https://github.com/sgl-project/sglang/issues/37349 (2026-09-01) -- "[Guide] Setup and Troubleshooting for
    SGLang on V100 ... Tested Software Versions: Python 3.10, PyTorch 2.3.1+cu121, vLLM backend 0.5.3.post1,
    SGLang 0.2.6 ... vLLM is used as an alternative attention backend when FlashInfer is disabled." Expected: works
    on a V100 with FlashInfer disabled. Gaps: the GPU is a V100 (sm_70) as reported; FlashInfer not installed and
    disabled with SGLang 0.2.x's --disable-flashinfer / --disable-flashinfer-sampling; Linux x86-64, glibc not
    stated."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.1'},
                    'hardware': {'gpu': 'V100'},
                    'packages': {'sglang': '0.2.6', 'vllm': '0.5.3.post1', 'torch': '2.3.1+cu121'},
                    'options': {'sglang': {'disable-flashinfer': True, 'disable-flashinfer-sampling': True}}},
                   database=db)
    assert not errors(report)


def test_comfyui6913_working(db):
    """https://github.com/Comfy-Org/ComfyUI/issues/6913 (2025-02-22) -- "model weight dtype torch.float8_e4m3fn,
    manual cast: torch.bfloat16 ... GPU: 4070 Super, torch2.5.1 python3.10 CU124"; maintainer: "yes, if you want
    to enable fp8 matrix multiplication you can use the --fast command line argument". Expected: works (FP8
    weights upcast to BF16 on an RTX 4070 Super; --fast not used). Gaps: ComfyUI v0.3.15 (released that day)
    assumed; platform not stated: Windows assumed; FP8 Flux-type diffusion weights."""
    report = check({'system': {'python': '3.10', 'platform': 'windows-x86_64', 'cuda': '12.4'},
                    'hardware': {'gpu': 'RTX 4070 Super'},
                    'packages': {'comfyui': '0.3.15', 'torch': '2.5.1+cu124'},
                    'model': {'checkpoint_dtype': 'fp8'}}, database=db)
    assert not errors(report)


def test_cosmos_reason2_pr45_working(db):
    """https://github.com/nvidia-cosmos/cosmos-reason2/pull/45 (2026-02-01) -- "Tested On: Hardware: Jetson AGX
    Orin 64GB, JetPack: 6.2 (L4T R36.4), CUDA: 12.6 ... [x] vLLM 0.14.0 serving (Cosmos-Reason2-2B) [x] PyTorch
    sm_87 architecture support", with "uv sync --extra jp6 --python 3.10" from the Jetson AI Lab index. Expected:
    works. Gaps: torch version from the jp6/cu126 index not stated: vLLM 0.14.0's pin (2.9.1) assumed, built for
    JetPack; Ubuntu 22.04 (glibc 2.35); AGX Orin is sm_87."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-aarch64', 'cuda': '12.6', 'glibc': '2.35'},
                    'hardware': {'compute_capability': '8.7'},
                    'packages': {'vllm': '0.14.0', 'torch': '2.9.1'}}, database=db)
    assert not errors(report)


def test_sglang_pr1233_working(db):
    """https://github.com/sgl-project/sglang/pull/1233 (2024-08-28) -- "feat: support sm75 with FlashInfer v0.1.6
    ... pip install flashinfer -i https://flashinfer.ai/whl/cu121/torch2.4/ ... python3 -m sglang.launch_server
    --model Qwen/Qwen2-1.5B-Instruct --mem-fraction-static 0.7 ... It works for me on GCP T4." Expected: works
    (FlashInfer 0.1.6 supports sm_75). Gaps: SGLang main of that day written as 0.2.15, the first release after
    the merge (assumed); torch 2.4.0+cu121 (FlashInfer's torch2.4 index, SGLang's vLLM 0.5.5 pin); Python 3.10
    (GCP image) assumed."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.1'},
                    'hardware': {'gpu': 'T4'},
                    'packages': {'sglang': '0.2.15', 'flashinfer': '0.1.6', 'torch': '2.4.0+cu121'}},
                   database=db)
    assert not errors(report)


def test_flashinfer382_working(db):
    """https://github.com/flashinfer-ai/flashinfer/issues/382 (2024-11-13 comment) -- "in my case the root cause
    was because I specified wrong torch version. I am using poetry and torch 2.4.0+cu121, then the following
    configuration worked for me ... url = "https://flashinfer.ai/whl/cu121/torch2.4" ... flashinfer = { version
    = "0.1.6", source = "flashinfer_cu121_torch24" }". Expected: works (the FlashInfer 0.1.6 wheel built for
    torch 2.4 / cu121). Gaps: Python and GPU not stated: Python 3.10 assumed, no hardware written."""
    report = check({'system': {'python': '3.10', 'platform': 'linux-x86_64', 'cuda': '12.1'},
                    'packages': {'flashinfer': '0.1.6', 'torch': '2.4.0+cu121'}}, database=db)
    assert not errors(report)
