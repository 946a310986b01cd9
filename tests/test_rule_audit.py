"""The audit of every rule against its source (docs/coverage.md, "Audit of
the rules"): each rule is shown to a stack just inside every condition its
source states, and to no stack just outside one of them (the GPU, the
compute capability, the accelerator, the dtype, the model and its traits, the
option values, the GPU count, the environment, the release range). The table
is complete: `test_every_rule_is_audited` fails on a rule without a row."""

from __future__ import annotations

import functools
import copy
import os
import json

import pytest

from compat import Database
import compat

from compat.formats import text as text_format

from .conftest import stack_table

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)


def stack(packages, gpu=None, **keys):
    return stack_table(packages, gpu, **keys)


def but(base, **changes):
    """`base` with some of stack()'s arguments changed (None removes one)."""
    args = copy.deepcopy(base)
    args.update(changes)
    packages = args.pop("packages")
    return stack(packages, **args)


def spec(packages, gpu=None, **kw):
    return {"packages": packages, "gpu": gpu, **kw}


LTX = {"ltx-2": "1.5.0"}
LTX_OLD = {"ltx-2": "1.4.0"}
OMNI = {"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"}
OMNI_OLD = {"vllm-omni": "0.31.0rc1", "transformers": "5.19.0"}
SGL = {"sglang": "0.5.23"}
SGL_22 = {"sglang": "0.5.22"}
SGL_21 = {"sglang": "0.5.21"}
FI = {"flashinfer-python": "0.7.2"}
FI_LATER = {"flashinfer-python": "0.7.4"}
VLLM = {"vllm": "0.32.0"}
VLLM_LATER = {"vllm": "0.33.0"}
TF0 = {"transformers": "5.20.0"}
TF1 = {"transformers": "5.20.1"}
TF2 = {"transformers": "5.20.2"}

FP8_OMNI = {"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}
AUDIO = {"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline"}}
VSA = {"sglang": {"attention-backend": "video_sparse_attn_h3"}}
SM120FA = {"sglang": {"attention-backend": "fp8_fa_sm120"}}
SPEC = {"speculative-algorithm": "EAGLE"}
MOE_BF16 = {"family": "deepseek-v4", "moe": True, "checkpoint_dtype": "bf16"}

# rule id -> (severity, the stack that shows it, {what is changed: a stack just outside})
AUDIT = {
    # -- LTX-2 1.5.0 (item 1)
    "ltx-2.fp8-scaled-mm.compute-capability": (  # LTX-2's FP8Linear calls torch._scaled_mm from 1.1.7; PyTorch refuses
        "error", spec(LTX, "A100", options={"ltx-2": {"quantization": "fp8-scaled-mm"}}),
        {"cc 8.9": dict(gpu="L40S"), "quantization fp8-cast": dict(options={"ltx-2": {"quantization": "fp8-cast"}}),
         "ROCm": dict(gpu="MI300X", cuda=None, rocm="6.4"),
         "release 1.1.6 (TensorRT-LLM's scaled mm when usable)": dict(packages={"ltx-2": "1.1.6"})}),
    "ltx-2.fp8-cast.storage-only": (
        "info", spec(LTX, "A100", options={"ltx-2": {"quantization": "fp8-cast"}}),
        {"fp8-scaled-mm": dict(options={"ltx-2": {"quantization": "fp8-scaled-mm"}}), "release 1.4.0": dict(packages=LTX_OLD)}),
    "ltx-2.diffvae.blackwell-dsl": (
        "error", spec(LTX, "RTX 5090", options={"ltx-2": {"diffvae-backend": "blackwell_dsl"}}),
        {"B300 (10.3)": dict(gpu="B300"), "B200 (10.0)": dict(gpu="B200"), "GB200": dict(gpu="GB200"),
         "backend natten": dict(options={"ltx-2": {"diffvae-backend": "natten"}}),
         "ROCm": dict(gpu="MI300X", cuda=None, rocm="6.4"), "release 1.1.7 (no blackwell_dsl)": dict(packages={"ltx-2": "1.1.7"})}),
    "ltx-2.dfr.fp8-gemm": (
        "info", spec(LTX, "L40S", options={"ltx-2": {"spatial-upscalings": 2}}),
        {"cc 8.6": dict(gpu="A10"), "one upscaling": dict(options={"ltx-2": {"spatial-upscalings": 1}}),
         "release 1.4.0": dict(packages=LTX_OLD)}),
    "ltx-2.dfr.no-fp8-gemm": (
        "info", spec(LTX, "A100", options={"ltx-2": {"spatial-upscalings": 2}}),
        {"cc 8.9": dict(gpu="L40S"), "no option": dict(options=None)}),
    "ltx-2.gemma.matching-checkpoint": ("info", spec(LTX, "H100"), {"release 1.4.0": dict(packages=LTX_OLD)}),
    "ltx-2.compile-off-by-default": (
        "info", spec(LTX, "H100"), {"compile on": dict(options={"ltx-2": {"compile": True}})}),
    "ltx-2.decode-backends": (
        "info", spec(LTX, "H100", options={"ltx-2": {"diffvae-backend": "natten"}}), {"no backend chosen": dict(options=None)}),
    "ltx-2.output-not-bit-identical": (
        "warning", spec(LTX, "H100"),
        {"release 1.4.0": dict(packages=LTX_OLD), "a later release": dict(packages={"ltx-2": "1.6.0"})}),
    "ltx-2.multi-gpu.audio-cross-attention": (
        "warning", spec(LTX, "H100", count=2),
        {"one GPU": dict(count=1), "a later release": dict(packages={"ltx-2": "1.6.0"})}),
    "ltx-2.multi-gpu.text-encoding": (
        "info", spec(LTX, "H100", count=2),
        {"one GPU": dict(count=1), "a later release": dict(packages={"ltx-2": "1.6.0"})}),
    "ltx-2.long-video.grey-tail-frames": ("warning", spec(LTX_OLD, "H100"), {"release 1.5.0": dict(packages=LTX)}),
    "ltx-2.blackwell.stage5-deadlock": (
        "warning", spec(LTX_OLD, "B200"), {"Hopper": dict(gpu="H100"), "release 1.5.0": dict(packages=LTX)}),
    # -- vLLM-Omni (items 2, 8, 9, 10, closing notes)
    "vllm-omni.candidate-0.32.0rc1": ("info", spec(OMNI, "H100"), {"0.31.0rc1": dict(packages=OMNI_OLD)}),
    "vllm-omni.fa3-fp8.sm90": (
        "error", spec(OMNI, "B200", options=FP8_OMNI, model={"head_dim": 128}),
        {"SM90": dict(gpu="H20"), "auto": dict(options={"vllm-omni": {"diffusion-kv-cache-dtype": "auto"}}),
         "ROCm": dict(gpu="MI300X", cuda=None, rocm="6.4"), "0.31.0rc1 (before the FA3 FP8 checks)": dict(packages=OMNI_OLD)}),
    "vllm-omni.fa3-fp8.head-dim": (
        "error", spec(OMNI, "H100", options=FP8_OMNI, model={"head_dim": 264}),
        {"head dim 256": dict(model={"head_dim": 256}), "head dim 100 -> 96": dict(model={"head_dim": 96}),
         "auto": dict(options=None), "ROCm": dict(gpu="MI300X", cuda=None, rocm="6.4"),
         "0.31.0rc1 (before the FA3 FP8 checks)": dict(packages=OMNI_OLD)}),
    "vllm-omni.fa3-fp8.what-it-quantizes": (
        "info", spec(OMNI, "H100", options=FP8_OMNI, model={"head_dim": 128}),
        {"auto": dict(options={"vllm-omni": {"diffusion-kv-cache-dtype": "auto"}}), "0.31.0rc1": dict(packages=OMNI_OLD)}),
    "vllm-omni.fa3-fp8.l20x-wan2.2": (
        "info", spec(OMNI, "L20X", options=FP8_OMNI,
                     model={"family": "wan2.2", "moe": False, "checkpoint_dtype": "bf16", "head_dim": 128}),
        {"H100": dict(gpu="H100"), "an FP8 checkpoint": dict(model={"family": "wan2.2", "moe": False, "checkpoint_dtype": "fp8", "head_dim": 128}),
         "a MoE Wan2.2 (A14B)": dict(model={"family": "wan2.2", "moe": True, "checkpoint_dtype": "bf16", "head_dim": 128}),
         "another family": dict(model={"family": "ltx-2.5", "moe": False, "checkpoint_dtype": "bf16", "head_dim": 128}),
         "FP8 attention off": dict(options=None), "0.31.0rc1": dict(packages=OMNI_OLD)}),
    "vllm-omni.ltx2-audio.recipe": (
        "info", spec(OMNI, "H100", options=AUDIO), {"the video pipeline (no audio pipeline)": dict(model={"family": "ltx-2.5"}, options=None)}),
    "vllm-omni.ltx2-audio.tensor-parallel": (
        "error", spec(OMNI, "H100", count=2, options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "ulysses-degree": 2}}),
        {"TP/SP 1": dict(options=AUDIO),
         "a video pipeline with TP 2": dict(options={"vllm-omni": {"tensor-parallel-size": 2}}, model={"family": "ltx-2.5"}),
         "0.31.0rc1 (no audio pipeline)": dict(packages=OMNI_OLD)}),
    "vllm-omni.ltx2-audio.cache-dit": (
        "error", spec(OMNI, "H100", options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "cache-backend": "cache_dit"}}),
        {"no cache": dict(options=AUDIO), "cache none": dict(options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "cache-backend": "none"}}),
         "another pipeline": dict(options={"vllm-omni": {"cache-backend": "cache_dit"}}),
         "0.31.0rc1 (no audio pipeline)": dict(packages=OMNI_OLD)}),
    "vllm-omni.taomate-h3.max-num-seqs": (
        "warning", spec(OMNI, "H100", model={"family": "taomate-h3"}, options={"vllm-omni": {"max-num-seqs": 4}}),
        {"max_num_seqs 1": dict(options={"vllm-omni": {"max-num-seqs": 1}}), "H3": dict(model={"family": "h3"}),
         "0.31.0rc1": dict(packages=OMNI_OLD)}),
    "vllm-omni.taomate-h3.scope": (
        "info", spec(OMNI, "H100", model={"family": "taomate-h3"}), {"H3": dict(model={"family": "h3"}), "0.31.0rc1": dict(packages=OMNI_OLD)}),
    "vllm-omni.qwen-image-2.1.rope-path": (
        "warning", spec(OMNI, "H200", model={"family": "qwen-image-2.1"}),
        {"SM103 with PyTorch 2.13": dict(packages={**OMNI, "torch": "2.13.0"}, gpu="B300"),
         "another family": dict(model={"family": "wan2.2"}), "0.31.0rc1": dict(packages=OMNI_OLD)}),
    "vllm-omni.qwen-image-2.1.turbo-4xb300": (
        "info", spec(OMNI, "B300", count=4, model={"family": "qwen-image-2.1", "checkpoint_dtype": "bf16"},
                     options={"vllm-omni": {"ulysses-degree": 4}}),
        {"8 GPUs": dict(count=8), "B200": dict(gpu="B200"), "Ulysses 2": dict(options={"vllm-omni": {"ulysses-degree": 2}}),
         "FP8 weights": dict(model={"family": "qwen-image-2.1", "checkpoint_dtype": "fp8"}),
         "another family": dict(model={"family": "wan2.2", "checkpoint_dtype": "bf16"}),
         "0.31.0rc1": dict(packages=OMNI_OLD)}),
    "vllm-omni.vllm.lockstep": (
        "error", spec({"vllm-omni": "0.30.0", "vllm": "0.31.0"}, "H100"),
        {"same minor": dict(packages={"vllm-omni": "0.30.0", "vllm": "0.30.0"})}),
    # -- SGLang (items 3-7, 14)
    "sglang.spec-decoding.structured-output.mamba-state": (
        "warning", spec(SGL_21, "H100", options={"sglang": SPEC}, model={"family": "qwen3-next", "hybrid": True}),
        {"0.5.22": dict(packages=SGL_22), "no speculative decoding": dict(options=None),
         "not a hybrid model": dict(model={"family": "deepseek-v3", "hybrid": False})}),
    "sglang.apple-silicon.pytorch-path": (
        "info", spec(SGL_22, "Apple M3", cuda=None, platform="macos-arm64"),
        {"CUDA": dict(gpu="H100", cuda="13.0", platform=None), "a later release": dict(packages=SGL)}),
    "sglang.hisparse.speculative-decoding": (
        "warning", spec(SGL_22, "H100", options={"sglang": {"enable-hisparse": True, **SPEC}}),
        {"HiSparse alone": dict(options={"sglang": {"enable-hisparse": True}}), "speculative alone": dict(options={"sglang": SPEC}),
         "0.5.21": dict(packages=SGL_21)}),
    "sglang.decode-cp.mtp": (
        "warning", spec(SGL_22, "H100", count=4, options={"sglang": {"decode-context-parallel-size": 4, **SPEC}}),
        {"no decode CP": dict(options={"sglang": SPEC}), "no MTP": dict(options={"sglang": {"decode-context-parallel-size": 4}}),
         "0.5.21": dict(packages=SGL_21)}),
    "sglang.vsa-h3.opt-in-quality": ("warning", spec(SGL_22, "A100", options=VSA), {"dense fa": dict(options=None)}),
    "sglang.vsa-h3.sm80-pointer-path": (
        "info", spec(SGL, "A100", options=VSA),
        {"SM90": dict(gpu="H100"), "dense fa": dict(options=None), "0.5.22 (uploaded before the merge)": dict(packages=SGL_22)}),
    "sglang.vsa-h3.sm90-descriptor-path": (
        "info", spec(SGL, "H100", options=VSA),
        {"SM80": dict(gpu="A100"), "dense fa": dict(options=None), "0.5.22": dict(packages=SGL_22)}),
    "sglang.vsa-h3.a100-measurement": (
        "info", spec(SGL, "A100 80GB", options=VSA, model={"family": "h3"}),
        {"A100 40GB": dict(gpu="A100 40GB"), "another model": dict(model={"family": "wan2.2"}),
         "dense fa": dict(options=None), "0.5.22": dict(packages=SGL_22)}),
    "sglang.fp8-fa-sm120.compute-capability": (
        "warning", spec(SGL_22, "H100", options=SM120FA),
        {"SM120": dict(gpu="RTX 5090"), "data-centre SM120": dict(gpu="RTX PRO 6000 Blackwell Server Edition"),
         "dense fa": dict(options=None), "ROCm": dict(gpu="MI300X", cuda=None, rocm="6.4"),
         "0.5.20 (its parser has no fp8_fa_sm120)": dict(packages={"sglang": "0.5.20"})}),
    "sglang.fp8-fa-sm120.block-scaled-mma": (
        "info", spec(SGL, "RTX 5090", options=SM120FA),
        {"0.5.22": dict(packages=SGL_22), "dense fa": dict(options=None), "SM121 (falls back)": dict(gpu="DGX Spark GB10")}),
    "sglang.fp8-fa-sm120.rtx5080-measurement": (
        "info", spec(SGL, "RTX 5080", options=SM120FA, model={"head_dim": 128}),
        {"RTX 5090": dict(gpu="RTX 5090"), "head dim 64": dict(model={"head_dim": 64}), "0.5.22": dict(packages=SGL_22)}),
    "sglang.h3.fp32-adaln-fused": (
        "info", spec(SGL, "H100", model={"family": "h3", "checkpoint_dtype": "int8"}),
        {"BF16 checkpoint": dict(model={"family": "h3", "checkpoint_dtype": "bf16"}),
         "another family": dict(model={"family": "wan2.2", "checkpoint_dtype": "int8"}), "0.5.22": dict(packages=SGL_22)}),
    "sglang.h3.fp32-adaln-measurement": (
        "info", spec(SGL, "RTX 4090", model={"family": "h3", "checkpoint_dtype": "int8"}),
        {"H100": dict(gpu="H100"), "BF16 checkpoint": dict(model={"family": "h3", "checkpoint_dtype": "bf16"}),
         "0.5.22": dict(packages=SGL_22)}),
    "sglang.triton-fast-launch.disabled": (
        "info", spec(SGL, "H100", env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "0"}),
        {"unset": dict(env=None), "0.5.22 (its wheel has no launch replay)": dict(packages=SGL_22)}),
    "sglang.triton-fast-launch.torch-compile": (
        "info", spec(SGL, "H100", options={"sglang": {"enable-torch-compile": True}}),
        {"eager": dict(options=None), "replay off": dict(env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "0"}),
         "0.5.22 (its wheel has no launch replay)": dict(packages=SGL_22)}),
    "sglang.triton-fast-launch.old-triton": (
        "info", spec(SGL, "H100", env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "1"}),
        {"not configured": dict(env=None), "replay off": dict(env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "0"}),
         "0.5.22 (its wheel has no launch replay)": dict(packages=SGL_22)}),
    "sglang.triton-fast-launch.host-bound-only": (
        "info", spec(SGL, "GB300", model={"family": "flux"}),
        {"H200 with FLUX (not measured)": dict(gpu="H200"), "B200": dict(gpu="B200"),
         "another model": dict(model={"family": "h3"}), "torch.compile": dict(options={"sglang": {"enable-torch-compile": True}}),
         "replay off": dict(env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "0"}), "0.5.22 (its wheel has no launch replay)": dict(packages=SGL_22)}),
    "sglang.qwen-image-2.1.vae-measurement": (
        "info", spec(SGL, "RTX PRO 6000 Blackwell Server Edition", model={"family": "qwen-image-2.1", "checkpoint_dtype": "bf16"},
                     options={"sglang": {"attention-backend": "torch_sdpa"}}),
        {"H100": dict(gpu="H100"), "FP8 checkpoint": dict(model={"family": "qwen-image-2.1", "checkpoint_dtype": "fp8"}),
         "attention fa": dict(options=None), "another family": dict(model={"family": "h3", "checkpoint_dtype": "bf16"}),
         "0.5.22 (its wheel has no Qwen-Image 2.1 VAE fast path)": dict(packages=SGL_22)}),
    "sglang.qwen-image-2.1.vae-extra-high": (
        "info", spec(SGL, "H100", model={"family": "qwen-image-2.1"}),
        {"another family": dict(model={"family": "h3"}), "0.5.22 (its wheel has no Qwen-Image 2.1 VAE fast path)": dict(packages=SGL_22)}),
    "sglang.compute-capability.sm75": (
        "error", spec(SGL, "V100"),
        {"T4": dict(gpu="T4"), "Jetson Orin (8.7)": dict(gpu="Jetson Orin"), "0.2.14 (before the check)": dict(packages={"sglang": "0.2.14"})}),
    "sglang.cuda-13": ("error", spec(SGL_22, "H100", cuda="12.9"), {"CUDA 13.0": dict(cuda="13.0"), "0.5.19": dict(packages={"sglang": "0.5.19"})}),
    # -- FlashInfer 0.7.2 (items 11, 12)
    "flashinfer.0.7.2rc5-is-pre-release": ("warning", spec({"flashinfer-python": "0.7.2rc5"}, "H100"), {"0.7.2": dict(packages=FI)}),
    "flashinfer.precompiled-kernels-refresh": (
        "info", spec(FI, "H100"), {"0.7.1": dict(packages={"flashinfer-python": "0.7.1"}), "0.7.4": dict(packages=FI_LATER)}),
    "flashinfer.sm107.toolchain": ("warning", spec(FI, cc="10.7"), {"SM100": dict(cc="10.0")}),
    "flashinfer.moe.cudnn-frost-backend": (
        "info", spec(FI, "B200", model=MOE_BF16),
        {"dense model": dict(model={**MOE_BF16, "moe": False}), "INT8 weights": dict(model={**MOE_BF16, "checkpoint_dtype": "int8"}),
         "0.7.1": dict(packages={"flashinfer-python": "0.7.1"})}),
    "flashinfer.h100.bf16-ep-moe": (
        "info", spec(FI, "H100", count=8, model=MOE_BF16),
        {"H200": dict(gpu="H200"), "one GPU": dict(count=1), "dense model": dict(model={**MOE_BF16, "moe": False}),
         "FP8 weights": dict(model={**MOE_BF16, "checkpoint_dtype": "fp8"}), "0.7.1": dict(packages={"flashinfer-python": "0.7.1"})}),
    "flashinfer.sm120.w4a8-megamoe": (
        "info", spec(FI, "RTX 5090", model={"family": "deepseek-v4", "moe": True}),
        {"B200": dict(gpu="B200"), "dense model": dict(model={"family": "glm-5", "moe": False}), "no [model]": dict(model=None)}),
    "flashinfer.gemm.fp8-nvfp4-epilogues": (
        "info", spec(FI, "B200", model={"checkpoint_dtype": "nvfp4"}),
        {"BF16": dict(model={"checkpoint_dtype": "bf16"}), "0.7.1": dict(packages={"flashinfer-python": "0.7.1"})}),
    "flashinfer.deepseek-v4.nvfp4-sparse-mla": (
        "info", spec(FI, "B300", model={"family": "deepseek-v4"}),
        {"H100": dict(gpu="H100"), "another family": dict(model={"family": "glm-5"})}),
    "flashinfer.deepseek-v4.sm120-mla": (
        "info", spec(FI, "RTX 5090", model={"family": "deepseek-v4"}),
        {"another family": dict(model={"family": "glm-5"}), "SM100": dict(gpu="B200")}),
    "flashinfer.decode.auto-cudnn": (
        "warning", spec(FI, "B200", model={"head_dim": 128, "checkpoint_dtype": "bf16"}),
        {"switch off": dict(env={"FLASHINFER_DECODE_AUTO_CUDNN": "0"}), "head dim 64": dict(model={"head_dim": 64, "checkpoint_dtype": "bf16"}),
         "FP8": dict(model={"head_dim": 128, "checkpoint_dtype": "fp8"}), "H100": dict(gpu="H100"),
         "SM120": dict(gpu="RTX PRO 6000 Blackwell Server Edition"),
         "no [model]": dict(model=None), "0.7.1": dict(packages={"flashinfer-python": "0.7.1"})}),
    "flashinfer.decode.auto-cudnn-off": (
        "info", spec(FI, "B200", env={"FLASHINFER_DECODE_AUTO_CUDNN": "0"}), {"unset": dict(env=None)}),
    "flashinfer.jit.sm75-floor": (
        "warning", spec({"flashinfer-python": "0.7.2", "torch": "2.10.0"}, "V100", cuda="12.8"),
        {"T4 (sm75)": dict(gpu="T4"), "A100": dict(gpu="A100")}),
    "flashinfer.cubin.lockstep": (
        "error", spec({"flashinfer-python": "0.7.2", "flashinfer-cubin": "0.7.1"}, "H100"),
        {"same version": dict(packages={"flashinfer-python": "0.7.2", "flashinfer-cubin": "0.7.2"}),
         "check disabled": dict(env={"FLASHINFER_DISABLE_VERSION_CHECK": "1"}),
         "0.4.0rc4 (before the check)": dict(packages={"flashinfer-python": "0.4.0rc4", "flashinfer-cubin": "0.4.0"})}),
    # -- vLLM 0.32.0 (item 13) and builds
    "vllm.glm-5.sm100.fp8-kv-default": (
        "warning", spec(VLLM, "B200", model={"family": "glm-5"}),
        {"kv-cache-dtype set": dict(options={"vllm": {"kv-cache-dtype": "bf16"}}), "SM90": dict(gpu="H100"),
         "another family": dict(model={"family": "deepseek-v4"}), "0.31.0": dict(packages={"vllm": "0.31.0"})}),
    "vllm.cors-default-restricted": (
        "info", spec(VLLM, "H100"), {"0.31.0": dict(packages={"vllm": "0.31.0"}), "0.33.0": dict(packages=VLLM_LATER)}),
    "vllm.removed-compile-cache-options": (
        "info", spec(VLLM, "H100"), {"0.31.0": dict(packages={"vllm": "0.31.0"}), "0.33.0": dict(packages=VLLM_LATER)}),
    "vllm.rocm.four-bit-kv": (
        "info", spec(VLLM, "MI300X", cuda=None, rocm="6.4"), {"CUDA": dict(gpu="H100", cuda="13.0", rocm=None), "0.33.0": dict(packages=VLLM_LATER)}),
    "vllm.nvfp4-kv.more-architectures": (
        "info", spec(VLLM, "B200", options={"vllm": {"kv-cache-dtype": "nvfp4"}}),
        {"fp8 KV": dict(options={"vllm": {"kv-cache-dtype": "fp8"}}), "0.31.0": dict(packages={"vllm": "0.31.0"})}),
    "vllm.jetson-thor.cu130-no-sm110": (
        "warning", spec({"vllm": "0.19.0"}, cc="11.0"), {"SM100": dict(cc="10.0"), "CUDA 12.9": dict(cuda="12.9")}),
    # -- ComfyUI (item 15)
    "comfyui.moss-image.template-crash": (
        "warning", spec({"comfyui": "0.42.0"}, "H100", model={"family": "moss-image"}),
        {"0.42.1": dict(packages={"comfyui": "0.42.1"}), "another family": dict(model={"family": "flux"})}),
    "comfyui.moss-image.memory-budget": (
        "info", spec({"comfyui": "0.42.1"}, "H100", model={"family": "moss-image"}), {"another family": dict(model={"family": "flux"})}),
    "comfyui.cpu.low-precision-formats": (
        "info", spec({"comfyui": "0.42.1"}, cuda=None, model={"checkpoint_dtype": "fp8"}),
        {"BF16": dict(model={"checkpoint_dtype": "bf16"}), "a GPU": dict(gpu="H100", cuda="13.0"), "0.41.0": dict(packages={"comfyui": "0.41.0"})}),
    "comfyui.cpu.low-precision-mismatch": (
        "warning", spec({"comfyui": "0.41.0"}, cuda=None, model={"checkpoint_dtype": "nvfp4"}),
        {"0.42.0": dict(packages={"comfyui": "0.42.0"}), "BF16": dict(model={"checkpoint_dtype": "bf16"})}),
    # -- Transformers 5.20.x (item 16)
    "transformers.deepgemm-megamoe-ep": (
        "warning", spec(TF0, "H100", count=8, model={"family": "deepseek-v3", "moe": True}),
        {"5.20.1": dict(packages=TF1), "5.18.0 (no token-dispatch plan)": dict(packages={"transformers": "5.18.0"}),
         "dense model": dict(model={"family": "glm-5", "moe": False}), "no [model]": dict(model=None),
         "one GPU (no expert parallelism)": dict(count=1), "no GPU": dict(gpu=None, count=None, cuda=None)}),
    "transformers.old-torch-loading": ("info", spec(TF0), {"5.20.1": dict(packages=TF1)}),
    "transformers.ep-zero-expert-gradients": (
        "warning", spec({**TF1, "torch": "2.13.0"}, "H100", count=8, model={"family": "deepseek-v3", "moe": True},
                        options={"transformers": {"bf16": True}}),
        {"5.20.2": dict(packages={**TF2, "torch": "2.13.0"}), "5.18.0 (no divide factor)": dict(packages={"transformers": "5.18.0", "torch": "2.13.0"}),
         "not BF16 training": dict(options=None),
         "dense model": dict(model={"family": "glm-5", "moe": False}), "no [model]": dict(model=None),
         "one GPU (no expert parallelism)": dict(count=1)}),
    "transformers.generate-input-dict-cast": (
        "warning", spec(TF1, model={"family": "minicpm-v", "multimodal": True}),
        {"5.20.2": dict(packages=TF2), "5.19.0": dict(packages={"transformers": "5.19.0"}),
         "text-only model": dict(model={"family": "glm-5", "multimodal": False}), "no [model]": dict(model=None)}),
    # -- torch
    "torch.cuda-13.architectures": ("error", spec({"torch": "2.15.0"}, "V100"), {"T4": dict(gpu="T4"), "2.14.1": dict(packages={"torch": "2.14.1"})}),
    "torch.index-wheels.cuda-13.0": (
        "info", spec({"torch": "2.13.0"}, "H100", cuda="12.6"), {"CUDA 13.0": dict(cuda="13.0"), "2.10.0": dict(packages={"torch": "2.10.0"}),
                                                                "PyTorch's cu126 build": dict(packages={"torch": "2.13.0+cu126"})}),
    "torch.index-wheels.cuda-13.2": (
        "info", spec({"torch": "2.15.0"}, "H100", cuda="13.0"), {"CUDA 13.2": dict(cuda="13.2"),
                                                                "+cu130": dict(packages={"torch": "2.15.0+cu130"})}),
    "torch.index-wheels.cuda-12.1": (
        "info", spec({"torch": "2.4.1"}, "H100", cuda="12.4"),
        {"CUDA 12.1": dict(cuda="12.1"), "2.5.0": dict(packages={"torch": "2.5.0"}), "+cu121": dict(packages={"torch": "2.4.1+cu121"}),
         "aarch64": dict(platform="linux-aarch64")}),
    "torch.index-wheels.cuda-12.4": (
        "info", spec({"torch": "2.6.0"}, "H100", cuda="12.8"),
        {"CUDA 12.4": dict(cuda="12.4"), "2.7.0": dict(packages={"torch": "2.7.0"}), "+cu124": dict(packages={"torch": "2.6.0+cu124"}),
         "aarch64": dict(platform="linux-aarch64")}),
    "torch.index-wheels.cuda-12.6": (
        "info", spec({"torch": "2.7.1"}, "H100", cuda="12.8"),
        {"CUDA 12.6": dict(cuda="12.6"), "2.8.0": dict(packages={"torch": "2.8.0"}),
         "+cu128": dict(packages={"torch": "2.7.1+cu128"}),
         "aarch64": dict(platform="linux-aarch64")}),
    "torch.index-wheels.cuda-12.8": (
        "info", spec({"torch": "2.8.0"}, "H100", cuda="12.6"),
        {"CUDA 12.8": dict(cuda="12.8"), "aarch64": dict(platform="linux-aarch64"), "+cu128": dict(packages={"torch": "2.8.0+cu128"}),
         "2.7.1": dict(packages={"torch": "2.7.1"}), "2.11.0": dict(packages={"torch": "2.11.0"})}),
    "vllm.transformers-5.tokenizer": (
        "error", spec({"vllm": "0.11.0", "transformers": "5.0.0"}, "H100", cuda="12.8"),
        {"transformers 4.57.1": dict(packages={"vllm": "0.11.0", "transformers": "4.57.1"}),
         "vllm 0.10.2": dict(packages={"vllm": "0.10.2", "transformers": "5.0.0"})}),
    "vllm.transformers-5.tokenizer.earlier": (
        "warning", spec({"vllm": "0.10.2", "transformers": "5.0.0"}, "H100", cuda="12.8"),
        {"transformers 4.57.1": dict(packages={"vllm": "0.10.2", "transformers": "4.57.1"}),
         "vllm 0.11.0": dict(packages={"vllm": "0.11.0", "transformers": "5.0.0"})}),
    "vllm.fp8-moe.pre-ada": (
        "error", spec({"vllm": "0.8.5"}, "RTX 3090", model={"moe": True, "checkpoint_dtype": "fp8"}),
        {"RTX 4090": dict(packages={"vllm": "0.8.5"}, gpu="RTX 4090"),
         "a dense model": dict(packages={"vllm": "0.8.5"}, model={"moe": False, "checkpoint_dtype": "fp8"}),
         "vllm 0.9.0": dict(packages={"vllm": "0.9.0"})}),
    "sglang.fp8-checkpoint.pre-ada": (
        "warning", spec({"sglang": "0.4.3"}, "A100 80GB", model={"checkpoint_dtype": "fp8"}),
        {"H100": dict(packages={"sglang": "0.4.3"}, gpu="H100"),
         "a BF16 checkpoint": dict(packages={"sglang": "0.4.3"}, model={"checkpoint_dtype": "bf16"}),
         "sglang 0.4.4": dict(packages={"sglang": "0.4.4"})}),
    "vllm.compressed-tensors.nvfp4.min-capability": (
        "error", spec({"vllm": "0.14.0"}, "T4", options={"vllm": {"quantization": "compressed-tensors"}},
                      model={"checkpoint_dtype": "nvfp4"}),
        {"A100": dict(packages={"vllm": "0.14.0"}, gpu="A100 80GB"),
         "vllm 0.16.0": dict(packages={"vllm": "0.16.0"}),
         "an FP8 checkpoint": dict(packages={"vllm": "0.14.0"}, model={"checkpoint_dtype": "fp8"})}),
    "vllm.compressed-tensors.mxfp4.min-capability": (
        "error", spec({"vllm": "0.14.0"}, "T4", options={"vllm": {"quantization": "compressed-tensors"}},
                      model={"checkpoint_dtype": "mxfp4"}),
        {"A100": dict(packages={"vllm": "0.14.0"}, gpu="A100 80GB"),
         "vllm 0.22.0": dict(packages={"vllm": "0.22.0"}),
         "vllm 0.13.0": dict(packages={"vllm": "0.13.0"})}),
    "vllm.fp8-kv.default-backend.pre-ampere": (
        "warning", spec({"vllm": "0.24.0"}, "T4", options={"vllm": {"kv-cache-dtype": "fp8"}}),
        {"A100": dict(packages={"vllm": "0.24.0"}, gpu="A100 80GB"),
         "16-bit cache": dict(packages={"vllm": "0.24.0"}, options={"vllm": {"kv-cache-dtype": "auto"}}),
         "backend set": dict(packages={"vllm": "0.24.0"},
                             options={"vllm": {"kv-cache-dtype": "fp8", "attention-backend": "FLEX_ATTENTION"}}),
         "vllm 0.23.0": dict(packages={"vllm": "0.23.0"})}),
    "vllm.fp8-kv.default-backend.0.11.0-ampere": (
        "warning", spec({"vllm": "0.11.0"}, "RTX 3090", options={"vllm": {"kv-cache-dtype": "fp8"}}, cuda="12.8"),
        {"L4": dict(packages={"vllm": "0.11.0"}, gpu="L4"),
         "H100": dict(packages={"vllm": "0.11.0"}, gpu="H100"),
         "16-bit cache": dict(packages={"vllm": "0.11.0"}, options={"vllm": {"kv-cache-dtype": "auto"}}),
         "backend set": dict(packages={"vllm": "0.11.0"}, env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"}),
         "vllm 0.10.2": dict(packages={"vllm": "0.10.2"}),
         "vllm 0.11.1": dict(packages={"vllm": "0.11.1"})}),
    "vllm.v1-engine.pre-ampere": (
        "error", spec({"vllm": "0.7.2"}, "V100", env={"VLLM_USE_V1": "1"}),
        {"A100": dict(packages={"vllm": "0.7.2"}, gpu="A100 80GB"),
         "V0 engine": dict(packages={"vllm": "0.7.2"}, env=None),
         "vllm 0.7.3": dict(packages={"vllm": "0.7.3"})}),
    "torchaudio.2.11.0.torch-floor": (
        "warning", spec({"torch": "2.9.0", "torchaudio": "2.11.0"}, platform="macos-arm64"),
        {"torch 2.11.0": dict(packages={"torch": "2.11.0", "torchaudio": "2.11.0"}),
         "torchaudio 2.10.0": dict(packages={"torch": "2.10.0", "torchaudio": "2.10.0"})}),
}

# rule id -> {what is changed: a stack just inside}: the first covered release of a rule whose range
# was re-read against the releases' own code, and the hardware and options at the edge of its scope
INSIDE = {
    "ltx-2.fp8-scaled-mm.compute-capability": {
        "1.1.7, the first release that calls torch._scaled_mm alone": dict(packages={"ltx-2": "1.1.7"}),
        "1.4.0": dict(packages=LTX_OLD), "Ampere at 8.6": dict(gpu="RTX 3090"),
    },
    "flashinfer.cubin.lockstep": {
        "0.4.0, the first release with the check": dict(packages={"flashinfer-python": "0.4.0", "flashinfer-cubin": "0.4.1"}),
        "0.5.0": dict(packages={"flashinfer-python": "0.5.0", "flashinfer-cubin": "0.5.2"}),
        "0.5.2": dict(packages={"flashinfer-python": "0.5.2", "flashinfer-cubin": "0.5.0"}),
    },
    "sglang.compute-capability.sm75": {
        "0.2.14.post1, the first release with the check": dict(packages={"sglang": "0.2.14.post1"}),
        "0.5.10": dict(packages={"sglang": "0.5.10"}), "0.5.11": dict(packages={"sglang": "0.5.11"}),
        "Pascal (6.1)": dict(gpu="P40"),
    },
    "vllm-omni.ltx2-audio.tensor-parallel": {
        "TP 2": dict(options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "tensor-parallel-size": 2}}),
        "ring 2": dict(options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "ring-degree": 2}}),
        "by --model-class-name": dict(options={"vllm-omni": {"model-class-name": "LTX2TextToAudioPipeline", "ulysses-degree": 2}}),
    },
    "vllm-omni.ltx2-audio.cache-dit": {
        "TeaCache": dict(options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "cache-backend": "tea_cache"}}),
    },
    "vllm-omni.fa3-fp8.sm90": {"Ada (8.9)": dict(gpu="L40S"), "SM120": dict(gpu="RTX PRO 6000 Blackwell Server Edition")},
    "vllm-omni.fa3-fp8.head-dim": {"head dim 272": dict(model={"head_dim": 272}), "head dim 100": dict(model={"head_dim": 100})},
    "ltx-2.diffvae.blackwell-dsl": {
        "data-centre SM120 (no Tensor Memory)": dict(gpu="RTX PRO 6000 Blackwell Server Edition"),
        "workstation SM120": dict(gpu="RTX PRO 6000 Blackwell Workstation Edition"), "SM121": dict(gpu="DGX Spark GB10"),
        "Jetson Thor (11.0)": dict(gpu="Jetson Thor"), "H100": dict(gpu="H100"),
        "release 1.2.0, the first with blackwell_dsl": dict(packages={"ltx-2": "1.2.0"}),
    },
    "flashinfer.decode.auto-cudnn": {"GB200 (10.0)": dict(gpu="GB200"), "B300 (10.3)": dict(gpu="B300"), "GB300": dict(gpu="GB300"),
                                     "FP16": dict(model={"head_dim": 128, "checkpoint_dtype": "fp16"})},
    "transformers.deepgemm-megamoe-ep": {"two GPUs": dict(count=2), "5.19.0, the first with the token-dispatch plan": dict(packages={"transformers": "5.19.0"})},
    "sglang.vsa-h3.sm80-pointer-path": {"Ada (8.9)": dict(gpu="L40S"), "A10 (8.6)": dict(gpu="A10")},
    "sglang.fp8-fa-sm120.compute-capability": {
        "SM121 (falls back too)": dict(gpu="DGX Spark GB10"), "0.5.21, the first release that accepts it": dict(packages=SGL_21),
        "0.5.23": dict(packages=SGL),
    },
    "torch.index-wheels.cuda-12.8": {"2.9.0": dict(packages={"torch": "2.9.0"}), "2.10.0": dict(packages={"torch": "2.10.0"})},
    "transformers.ep-zero-expert-gradients": {
        "two GPUs": dict(count=2), "5.20.0": dict(packages={**TF0, "torch": "2.13.0"}),
        "5.19.0, the first with the divide factor": dict(packages={"transformers": "5.19.0", "torch": "2.13.0"}),
    },
}

INSIDE_CASES = [(rule, label, change) for rule, changes in INSIDE.items() for label, change in changes.items()]

CASES = [(rule, severity, shown, label, change) for rule, (severity, shown, outside) in AUDIT.items()
         for label, change in outside.items()]


@pytest.fixture(scope="module")
def db():
    return Database.load()


def ids(report):
    return {f.id for f in report.findings}


def test_every_rule_is_audited(db):
    # (the rules of data/derived/ are written by a script from the line they cite: tests/test_derived_*.py)
    rules = {rule.id for component in db.components() for rule in component.rules
             if os.path.basename(os.path.dirname(rule.file or "")) != "derived"}
    assert rules == set(AUDIT)


@pytest.mark.parametrize("rule", sorted(AUDIT))
def test_shown_inside_its_conditions(db, rule):
    severity, shown, _ = AUDIT[rule]
    report = check(but(shown), database=db)
    found = [f for f in report.findings if f.id == rule]
    assert found, f"{rule} not shown; got {sorted(ids(report))}"
    assert found[0].severity == severity
    assert found[0].source is not None


@pytest.mark.parametrize(("rule", "severity", "shown", "label", "change"), CASES,
                         ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_not_shown_outside_a_condition(db, rule, severity, shown, label, change):
    report = check(but(shown, **change), database=db)
    assert rule not in ids(report), label


@pytest.mark.parametrize(("rule", "label", "change"), INSIDE_CASES, ids=[f"{c[0]}-{c[1]}" for c in INSIDE_CASES])
def test_shown_at_the_inner_edge_of_its_scope(db, rule, label, change):
    severity, shown, _ = AUDIT[rule]
    report = check(but(shown, **change), database=db)
    found = [f for f in report.findings if f.id == rule]
    assert found, f"{rule} not shown with {label}; got {sorted(ids(report))}"
    assert found[0].severity == severity


def test_the_blackwell_dsl_error_follows_ltx2s_code(db):
    # LTX-2's code takes compute capability 10.0, 10.1 or 10.3 only: a data-centre SM120 card has no
    # Tensor Memory either, and is refused with its message, by a stated rule (no basis)
    options = {"ltx-2": {"diffvae-backend": "blackwell_dsl"}}
    report = check(stack(LTX, "RTX PRO 6000 Blackwell Server Edition", options=options), database=db)
    finding = next(f for f in report.errors if f.id == "ltx-2.diffvae.blackwell-dsl")
    assert finding.basis is None and "Tensor Memory" in finding.message
    assert "ltx-2.diffvae.blackwell-dsl" not in ids(check(stack(LTX, "GB300", options=options), database=db))


def test_inferred_rules_say_what_they_rest_on(db):
    for component in db.components():
        for rule in component.rules:
            assert rule.inferred == (rule.basis is not None), rule.id
            if rule.kind == "requirement" and rule.inferred:
                assert rule.severity != "error", f"{rule.id}: an inference is a warning"


def test_an_inferred_finding_carries_its_basis_in_text_and_json(db):
    rule = next(r for r in db.component("flashinfer-python").rules if r.inferred)
    shown = AUDIT[rule.id][1]
    report = check(but(shown), database=db)
    finding = next(f for f in report.findings if f.id == rule.id)
    assert finding.basis == rule.basis
    data = json.loads(json.dumps(report.to_dict()))
    entry = next(f for f in data["findings"] if f["id"] == finding.id)
    assert entry["inferred"] is True and entry["basis"] == finding.basis
    assert "inferred, not stated by the source" in text_format.render(report)
    stated = next(f for f in data["findings"] if f["id"] == "driver:unknown")
    assert stated["inferred"] is False and "basis" not in stated


def test_a_release_note_is_news_only_for_its_release(db):
    # flashinfer-python 0.7.4 does not repeat "upgrading to 0.7.2 ...", nor vLLM 0.33.0 "0.32.0 adds ..."
    later = check(stack({"flashinfer-python": "0.7.4"}, "H100"), database=db)
    assert not any("0.7.2" in f.message for f in later.findings if f.layer == "curated"), [f.message for f in later.findings]
    later = check(stack(VLLM_LATER, "MI300X", cuda=None, rocm="6.4"), database=db)
    assert "vllm.rocm.four-bit-kv" not in ids(later)
    # ... unless the stack's model or options make it matter: then it says since when
    glm = check(stack(VLLM_LATER, "B200", model={"family": "glm-5"}), database=db)
    finding = next(f for f in glm.findings if f.id == "vllm.glm-5.sm100.fp8-kv-default")
    assert finding.message.startswith("vllm 0.33.0: since 0.32.0")
    assert finding.details and finding.details.get("introduced") == "0.32.0"


def test_a_pull_request_fact_says_no_release_confirms_it(db):
    for component in db.components():
        for rule in component.rules:
            source = db.source(rule.source)
            if source is None or source.kind != "pull-request" or source.item is None or not str(rule.releases):
                continue
            # a bound on the releases of a digest's merged PR only excludes those uploaded before the
            # merge (vllm#39233, by contrast, speaks of the released 0.19.0 image itself)
            assert rule.inferred and "no release note" in rule.basis, rule.id


def test_a_rocm_stack_is_not_refused_the_cuda_path(db):
    report = check(stack(OMNI, "MI300X", cuda=None, rocm="6.4", options=FP8_OMNI, model={"head_dim": 128}), database=db)
    assert not {"vllm-omni.fa3-fp8.sm90", "vllm-omni.fa3-fp8.head-dim"} & ids(report)
