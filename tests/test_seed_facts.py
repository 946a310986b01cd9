"""Every rule of the bundled database, shown to the stacks that meet its
conditions and to no other. Each case names the stack that triggers the rule
and one that must not; `test_every_rule_has_a_case` keeps the table complete.
docs/coverage.md maps the digest's items to these IDs."""

from __future__ import annotations

import functools
import os

import pytest

from compat import Database
import compat

from .conftest import stack_table

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)


def stack(packages, gpu=None, cuda="13.0", python="3.12", options=None, model=None, env=None, count=1, driver=None,
          cc=None, platform=None):
    return stack_table(packages, gpu, cuda=cuda, python=python, options=options, model=model, env=env,
                       count=count if (gpu or cc) else None, driver=driver, cc=cc, platform=platform)


LTX = {"ltx-2": "1.5.0"}
OMNI = {"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"}
SGL = {"sglang": "0.5.23"}
FI = {"flashinfer-python": "0.7.2"}

# (rule id, severity, stack that shows it, stack that must not)
CASES = [
    # -- item 1: LTX-2 1.5.0
    ("ltx-2.fp8-scaled-mm.compute-capability", "error",  # LTX-2's code calls torch._scaled_mm; PyTorch's refuses
     stack(LTX, "A100", options={"ltx-2": {"quantization": "fp8-scaled-mm"}}),
     stack(LTX, "L40S", options={"ltx-2": {"quantization": "fp8-scaled-mm"}})),
    ("ltx-2.fp8-cast.storage-only", "info",
     stack(LTX, "A100", options={"ltx-2": {"quantization": "fp8-cast"}}),
     stack(LTX, "A100", options={"ltx-2": {"quantization": "fp8-scaled-mm"}})),
    ("ltx-2.diffvae.blackwell-dsl", "error",
     stack(LTX, "RTX 5090", options={"ltx-2": {"diffvae-backend": "blackwell_dsl"}}),
     stack(LTX, "B300", options={"ltx-2": {"diffvae-backend": "blackwell_dsl"}})),
    ("ltx-2.dfr.fp8-gemm", "info",
     stack(LTX, "H100", options={"ltx-2": {"spatial-upscalings": 2}}),
     stack(LTX, "A100", options={"ltx-2": {"spatial-upscalings": 2}})),
    ("ltx-2.dfr.no-fp8-gemm", "info",
     stack(LTX, "A100", options={"ltx-2": {"spatial-upscalings": 2}}),
     stack(LTX, "H100", options={"ltx-2": {"spatial-upscalings": 2}})),
    ("ltx-2.gemma.matching-checkpoint", "info", stack(LTX, "H100"), stack({"ltx-2": "1.4.0"}, "H100")),
    ("ltx-2.compile-off-by-default", "info", stack(LTX, "H100"), stack(LTX, "H100", options={"ltx-2": {"compile": True}})),
    ("ltx-2.decode-backends", "info", stack(LTX, "H100", options={"ltx-2": {"diffvae-backend": "natten"}}), stack(LTX, "B200")),
    ("ltx-2.output-not-bit-identical", "warning", stack(LTX, "H100"), stack({"ltx-2": "1.4.0"}, "H100")),
    ("ltx-2.multi-gpu.audio-cross-attention", "warning", stack(LTX, "H100", count=4), stack(LTX, "H100", count=1)),
    ("ltx-2.multi-gpu.text-encoding", "info", stack(LTX, "H100", count=2), stack(LTX, "H100", count=1)),
    ("ltx-2.long-video.grey-tail-frames", "warning", stack({"ltx-2": "1.4.0"}, "H100"), stack(LTX, "H100")),
    ("ltx-2.blackwell.stage5-deadlock", "warning", stack({"ltx-2": "1.4.0"}, "B200"), stack({"ltx-2": "1.4.0"}, "H100")),
    # -- items 2, 8, 9, 10 and the closing notes: vLLM-Omni
    ("vllm-omni.candidate-0.32.0rc1", "info", stack(OMNI, "H100"), stack({"vllm-omni": "0.30.0"}, "H100")),
    ("vllm-omni.fa3-fp8.sm90", "error",
     stack(OMNI, "B200", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}, model={"head_dim": 128}),
     stack(OMNI, "H20", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}, model={"head_dim": 128})),
    ("vllm-omni.fa3-fp8.head-dim", "error",
     stack(OMNI, "H100", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}, model={"head_dim": 100}),
     stack(OMNI, "H100", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}, model={"head_dim": 96})),
    ("vllm-omni.fa3-fp8.what-it-quantizes", "info",
     stack(OMNI, "H100", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}, model={"head_dim": 128}),
     stack(OMNI, "H100", options={"vllm-omni": {"diffusion-kv-cache-dtype": "auto"}})),
    ("vllm-omni.fa3-fp8.l20x-wan2.2", "info",
     stack(OMNI, "L20X", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}},
           model={"family": "wan2.2", "moe": False, "checkpoint_dtype": "bf16", "head_dim": 128}),
     stack(OMNI, "L20X", options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}},
           model={"family": "wan2.2", "moe": False, "checkpoint_dtype": "fp8", "head_dim": 128})),
    ("vllm-omni.ltx2-audio.recipe", "info",
     stack(OMNI, "H100", options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline"}}), stack(OMNI, "H100", model={"family": "ltx-2.5"})),
    ("vllm-omni.ltx2-audio.tensor-parallel", "error",  # the 0.32.0rc1 code raises ValueError
     stack(OMNI, "H100", options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "tensor-parallel-size": 2}}),
     stack(OMNI, "H100", model={"family": "ltx-2.5"}, options={"vllm-omni": {"tensor-parallel-size": 2}})),
    ("vllm-omni.ltx2-audio.cache-dit", "error",  # the 0.32.0rc1 code raises ValueError
     stack(OMNI, "H100", options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline", "cache-backend": "cache_dit"}}),
     stack(OMNI, "H100", options={"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline"}})),
    ("vllm-omni.taomate-h3.max-num-seqs", "warning",
     stack(OMNI, "H100", model={"family": "taomate-h3"}, options={"vllm-omni": {"max-num-seqs": 4}}),
     stack(OMNI, "H100", model={"family": "taomate-h3"}, options={"vllm-omni": {"max-num-seqs": 1}})),
    ("vllm-omni.taomate-h3.scope", "info", stack(OMNI, "H100", model={"family": "taomate-h3"}), stack(OMNI, "H100")),
    ("vllm-omni.qwen-image-2.1.rope-path", "warning",
     stack(OMNI, "H200", model={"family": "qwen-image-2.1"}),
     stack({**OMNI, "torch": "2.13.0"}, "B300", model={"family": "qwen-image-2.1"})),
    ("vllm-omni.qwen-image-2.1.turbo-4xb300", "info",
     stack(OMNI, "B300", count=4, model={"family": "qwen-image-2.1", "checkpoint_dtype": "bf16"}, options={"vllm-omni": {"ulysses-degree": 4}}),
     stack(OMNI, "B300", count=8, model={"family": "qwen-image-2.1", "checkpoint_dtype": "bf16"}, options={"vllm-omni": {"ulysses-degree": 4}})),
    # -- items 3-7 and 14: SGLang
    ("sglang.spec-decoding.structured-output.mamba-state", "warning",
     stack({"sglang": "0.5.21"}, "H100", options={"sglang": {"speculative-algorithm": "EAGLE"}}, model={"family": "qwen3-next", "hybrid": True}),
     stack({"sglang": "0.5.21"}, "H100", options={"sglang": {"speculative-algorithm": "EAGLE"}}, model={"family": "glm-5", "hybrid": False})),
    ("sglang.hisparse.speculative-decoding", "warning",
     stack(SGL, "H100", options={"sglang": {"enable-hisparse": True, "speculative-algorithm": "EAGLE"}}),
     stack(SGL, "H100", options={"sglang": {"enable-hisparse": True}})),
    ("sglang.decode-cp.mtp", "warning",
     stack(SGL, "H100", count=4, options={"sglang": {"decode-context-parallel-size": 4, "speculative-algorithm": "NEXTN"}}),
     stack(SGL, "H100", count=4, options={"sglang": {"speculative-algorithm": "NEXTN"}})),
    ("sglang.apple-silicon.pytorch-path", "info",
     stack({"sglang": "0.5.22"}, "Apple M3", cuda=None, platform="macos-arm64"),
     stack(SGL, "H100")),
    ("sglang.vsa-h3.opt-in-quality", "warning",
     stack(SGL, "A100", options={"sglang": {"attention-backend": "video_sparse_attn_h3"}}),
     stack(SGL, "A100")),
    ("sglang.vsa-h3.sm80-pointer-path", "info",
     stack(SGL, "A100", options={"sglang": {"attention-backend": "video_sparse_attn_h3"}}),
     stack(SGL, "H100", options={"sglang": {"attention-backend": "video_sparse_attn_h3"}})),
    ("sglang.vsa-h3.sm90-descriptor-path", "info",
     stack(SGL, "H100", options={"sglang": {"attention-backend": "video_sparse_attn_h3"}}),
     stack(SGL, "A100", options={"sglang": {"attention-backend": "video_sparse_attn_h3"}})),
    ("sglang.vsa-h3.a100-measurement", "info",
     stack(SGL, "A100 80GB", options={"sglang": {"attention-backend": "video_sparse_attn_h3"}}, model={"family": "h3"}),
     stack({"sglang": "0.5.22"}, "A100 80GB", options={"sglang": {"attention-backend": "video_sparse_attn_h3"}}, model={"family": "h3"})),
    ("sglang.fp8-fa-sm120.compute-capability", "warning",  # the code falls back to cuDNN SDPA off SM120 (SM121 too)
     stack(SGL, "H100", options={"sglang": {"attention-backend": "fp8_fa_sm120"}}),
     stack(SGL, "RTX 5090", options={"sglang": {"attention-backend": "fp8_fa_sm120"}})),
    ("sglang.fp8-fa-sm120.block-scaled-mma", "info",
     stack(SGL, "RTX 5090", options={"sglang": {"attention-backend": "fp8_fa_sm120"}}),
     stack({"sglang": "0.5.22"}, "RTX 5090", options={"sglang": {"attention-backend": "fp8_fa_sm120"}})),
    ("sglang.fp8-fa-sm120.rtx5080-measurement", "info",
     stack(SGL, "RTX 5080", options={"sglang": {"attention-backend": "fp8_fa_sm120"}}, model={"head_dim": 128}),
     stack(SGL, "RTX 5090", options={"sglang": {"attention-backend": "fp8_fa_sm120"}}, model={"head_dim": 128})),
    ("sglang.h3.fp32-adaln-fused", "info",
     stack(SGL, "H100", model={"family": "h3", "checkpoint_dtype": "int8"}),
     stack(SGL, "H100", model={"family": "h3", "checkpoint_dtype": "bf16"})),
    ("sglang.h3.fp32-adaln-measurement", "info",
     stack(SGL, "RTX 4090", model={"family": "h3", "checkpoint_dtype": "int8"}),
     stack(SGL, "H100", model={"family": "h3", "checkpoint_dtype": "int8"})),
    ("sglang.triton-fast-launch.disabled", "info",
     stack(SGL, "H100", env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "0"}), stack(SGL, "H100")),
    ("sglang.triton-fast-launch.torch-compile", "info",
     stack(SGL, "H100", options={"sglang": {"enable-torch-compile": True}}), stack(SGL, "H100")),
    ("sglang.triton-fast-launch.host-bound-only", "info",
     stack(SGL, "GB300", model={"family": "z-image"}), stack(SGL, "GB300", model={"family": "z-image"}, env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "0"})),
    ("sglang.triton-fast-launch.old-triton", "info",
     stack(SGL, "H100", env={"SGLANG_DIFFUSION_TRITON_FAST_LAUNCH": "1"}), stack(SGL, "H100")),
    ("sglang.qwen-image-2.1.vae-measurement", "info",
     stack(SGL, "RTX PRO 6000 Blackwell Server Edition", model={"family": "qwen-image-2.1", "checkpoint_dtype": "bf16"},
           options={"sglang": {"attention-backend": "torch_sdpa"}}),
     stack(SGL, "H100", model={"family": "qwen-image-2.1", "checkpoint_dtype": "bf16"}, options={"sglang": {"attention-backend": "torch_sdpa"}})),
    ("sglang.qwen-image-2.1.vae-extra-high", "info",
     stack(SGL, "H100", model={"family": "qwen-image-2.1"}), stack(SGL, "H100", model={"family": "h3"})),
    # -- items 11 and 12: FlashInfer 0.7.2
    ("flashinfer.0.7.2rc5-is-pre-release", "warning", stack({"flashinfer-python": "0.7.2rc5"}, "H100"), stack(FI, "H100")),
    ("flashinfer.precompiled-kernels-refresh", "info", stack(FI, "H100"), stack({"flashinfer-python": "0.7.1"}, "H100")),
    ("flashinfer.sm107.toolchain", "warning", stack(FI, cc="10.7"), stack(FI, cc="10.0")),
    ("flashinfer.h100.bf16-ep-moe", "info",
     stack(FI, "H100", count=8, model={"moe": True, "checkpoint_dtype": "bf16"}), stack(FI, "H200", count=8, model={"moe": True, "checkpoint_dtype": "bf16"})),
    ("flashinfer.sm120.w4a8-megamoe", "info", stack(FI, "RTX 5090", model={"moe": True}), stack(FI, "B200", model={"moe": True})),
    ("flashinfer.moe.cudnn-frost-backend", "info",
     stack(FI, "B200", model={"moe": True, "checkpoint_dtype": "nvfp4"}), stack(FI, "B200", model={"moe": False, "checkpoint_dtype": "nvfp4"})),
    ("flashinfer.gemm.fp8-nvfp4-epilogues", "info",
     stack(FI, "B200", model={"checkpoint_dtype": "fp8"}), stack(FI, "B200", model={"checkpoint_dtype": "bf16"})),
    ("flashinfer.deepseek-v4.nvfp4-sparse-mla", "info",
     stack(FI, "B300", model={"family": "deepseek-v4"}), stack(FI, "H100", model={"family": "deepseek-v4"})),
    ("flashinfer.deepseek-v4.sm120-mla", "info",
     stack(FI, "RTX 5090", model={"family": "deepseek-v4"}), stack(FI, "RTX 5090", model={"family": "glm-5"})),
    ("flashinfer.decode.auto-cudnn", "warning",
     stack(FI, "B200", model={"head_dim": 128, "checkpoint_dtype": "bf16"}),
     stack(FI, "B200", model={"head_dim": 128, "checkpoint_dtype": "bf16"}, env={"FLASHINFER_DECODE_AUTO_CUDNN": "0"})),
    ("flashinfer.decode.auto-cudnn-off", "info", stack(FI, "B200", env={"FLASHINFER_DECODE_AUTO_CUDNN": "0"}), stack(FI, "B200")),
    # -- item 13: vLLM 0.32.0
    ("vllm.glm-5.sm100.fp8-kv-default", "warning",
     stack({"vllm": "0.32.0"}, "B200", model={"family": "glm-5"}),
     stack({"vllm": "0.32.0"}, "B200", model={"family": "glm-5"}, options={"vllm": {"kv-cache-dtype": "bf16"}})),
    ("vllm.cors-default-restricted", "info", stack({"vllm": "0.32.0"}, "H100"), stack({"vllm": "0.31.0"}, "H100")),
    ("vllm.removed-compile-cache-options", "info", stack({"vllm": "0.32.0"}, "H100"), stack({"vllm": "0.31.0"}, "H100")),
    ("vllm.rocm.four-bit-kv", "info", stack({"vllm": "0.32.0"}, "MI300X", cuda=None), stack({"vllm": "0.32.0"}, "H100")),
    ("vllm.nvfp4-kv.more-architectures", "info",
     stack({"vllm": "0.32.0"}, "B200", options={"vllm": {"kv-cache-dtype": "nvfp4"}}), stack({"vllm": "0.32.0"}, "B200")),
    # -- item 15: ComfyUI
    ("comfyui.moss-image.template-crash", "warning",
     stack({"comfyui": "0.42.0"}, "H100", model={"family": "moss-image"}),
     stack({"comfyui": "0.42.1"}, "H100", model={"family": "moss-image"})),
    ("comfyui.moss-image.memory-budget", "info",
     stack({"comfyui": "0.42.1"}, "H100", model={"family": "moss-image"}), stack({"comfyui": "0.42.1"}, "H100")),
    ("comfyui.cpu.low-precision-formats", "info",
     stack({"comfyui": "0.42.1"}, cuda=None, model={"checkpoint_dtype": "fp8"}),
     stack({"comfyui": "0.42.1"}, cuda=None, model={"checkpoint_dtype": "bf16"})),
    ("comfyui.cpu.low-precision-mismatch", "warning",
     stack({"comfyui": "0.41.0"}, cuda=None, model={"checkpoint_dtype": "nvfp4"}),
     stack({"comfyui": "0.42.0"}, cuda=None, model={"checkpoint_dtype": "nvfp4"})),
    # -- item 16: Transformers 5.20.x
    ("transformers.deepgemm-megamoe-ep", "warning",  # expert parallelism: more than one GPU
     stack({"transformers": "5.20.0"}, "H100", count=8, model={"moe": True}),
     stack({"transformers": "5.20.0"}, "H100", count=1, model={"moe": True})),
    ("transformers.old-torch-loading", "info", stack({"transformers": "5.20.0"}), stack({"transformers": "5.20.1"})),
    ("transformers.ep-zero-expert-gradients", "warning",  # NCCL zeroes the BF16 divide up to torch 2.13
     stack({"transformers": "5.20.1", "torch": "2.13.0"}, "H100", count=8, model={"moe": True}, options={"transformers": {"bf16": True}}),
     stack({"transformers": "5.20.1", "torch": "2.13.0"}, "H100", count=8, model={"moe": True})),
    ("transformers.generate-input-dict-cast", "warning",
     stack({"transformers": "5.20.0"}, model={"multimodal": True}), stack({"transformers": "5.20.0"}, model={"multimodal": False})),
    # -- foundations: driver, architectures, the CUDA of torch's wheels
    # (the driver floors are data/cuda.toml, the torch architectures its [[build]] tables: tests/test_builds.py)
    ("torch.cuda-13.architectures", "error", stack({"torch": "2.15.0"}, "V100"), stack({"torch": "2.15.0"}, "T4")),
    # -- lockstep packages and what the builds carry
    ("flashinfer.cubin.lockstep", "error",
     stack({"flashinfer-python": "0.7.2", "flashinfer-cubin": "0.7.1"}, "H100"),
     stack({"flashinfer-python": "0.7.2", "flashinfer-cubin": "0.7.2"}, "H100")),
    ("vllm-omni.vllm.lockstep", "error",
     stack({"vllm-omni": "0.30.0", "vllm": "0.31.0"}, "H100"), stack({"vllm-omni": "0.30.0", "vllm": "0.30.0"}, "H100")),
    ("sglang.compute-capability.sm75", "error", stack({"sglang": "0.5.23"}, "V100"), stack({"sglang": "0.5.23"}, "T4")),
    ("flashinfer.jit.sm75-floor", "warning",  # inferred: the code refuses; whether the engine calls it on this GPU is not stated
     stack({"flashinfer-python": "0.7.2", "torch": "2.10.0"}, "V100", cuda="12.8"),
     stack({"flashinfer-python": "0.7.2", "torch": "2.10.0"}, "T4", cuda="12.8")),
    ("sglang.cuda-13", "error", stack({"sglang": "0.5.22"}, "H100", cuda="12.9"), stack({"sglang": "0.5.22"}, "H100")),
    ("vllm.jetson-thor.cu130-no-sm110", "warning",
     stack({"vllm": "0.19.0"}, cc="11.0"), stack({"vllm": "0.19.0"}, cc="10.0")),
    ("torch.index-wheels.cuda-13.0", "info",
     stack({"torch": "2.13.0"}, "H100", cuda="12.6"), stack({"torch": "2.13.0"}, "H100", cuda="13.0")),
    ("torch.index-wheels.cuda-13.2", "info",
     stack({"torch": "2.15.0"}, "H100", cuda="13.0"), stack({"torch": "2.15.0"}, "H100", cuda="13.2")),
    ("torch.index-wheels.cuda-12.1", "info",
     stack({"torch": "2.4.1"}, "H100", cuda="12.4"), stack({"torch": "2.4.1"}, "H100", cuda="12.1")),
    ("torch.index-wheels.cuda-12.4", "info",
     stack({"torch": "2.6.0"}, "H100", cuda="12.8"), stack({"torch": "2.6.0"}, "H100", cuda="12.4")),
    ("torch.index-wheels.cuda-12.6", "info",
     stack({"torch": "2.7.1"}, "H100", cuda="12.8"), stack({"torch": "2.7.1"}, "H100", cuda="12.6")),
    ("torch.index-wheels.cuda-12.8", "info",
     stack({"torch": "2.8.0"}, "H100", cuda="12.6"), stack({"torch": "2.8.0"}, "H100", cuda="12.8")),
    ("vllm.transformers-5.tokenizer", "error",
     stack({"vllm": "0.11.0", "transformers": "5.0.0"}, "H100", cuda="12.8"),
     stack({"vllm": "0.11.0", "transformers": "4.57.1"}, "H100", cuda="12.8")),
    ("vllm.transformers-5.tokenizer.earlier", "warning",
     stack({"vllm": "0.10.2", "transformers": "5.0.0"}, "H100", cuda="12.8"),
     stack({"vllm": "0.10.2", "transformers": "4.57.1"}, "H100", cuda="12.8")),
    ("vllm.fp8-moe.pre-ada", "error",
     stack({"vllm": "0.8.5"}, "RTX 3090", cuda="12.4", model={"moe": True, "checkpoint_dtype": "fp8"}),
     stack({"vllm": "0.9.0"}, "RTX 3090", cuda="12.4", model={"moe": True, "checkpoint_dtype": "fp8"})),
    ("sglang.fp8-checkpoint.pre-ada", "warning",
     stack({"sglang": "0.4.3"}, "A100 80GB", cuda="12.4", model={"checkpoint_dtype": "fp8"}),
     stack({"sglang": "0.4.3"}, "H100", cuda="12.4", model={"checkpoint_dtype": "fp8"})),
    ("vllm.compressed-tensors.nvfp4.min-capability", "error",
     stack({"vllm": "0.14.0"}, "T4", cuda="12.9", options={"vllm": {"quantization": "compressed-tensors"}},
           model={"checkpoint_dtype": "nvfp4"}),
     stack({"vllm": "0.14.0"}, "A100 80GB", cuda="12.9", options={"vllm": {"quantization": "compressed-tensors"}},
           model={"checkpoint_dtype": "nvfp4"})),
    ("vllm.compressed-tensors.mxfp4.min-capability", "error",
     stack({"vllm": "0.14.0"}, "T4", cuda="12.9", options={"vllm": {"quantization": "compressed-tensors"}},
           model={"checkpoint_dtype": "mxfp4"}),
     stack({"vllm": "0.14.0"}, "A100 80GB", cuda="12.9", options={"vllm": {"quantization": "compressed-tensors"}},
           model={"checkpoint_dtype": "mxfp4"})),
    ("vllm.fp8-kv.default-backend.pre-ampere", "warning",
     stack({"vllm": "0.24.0"}, "T4", cuda="13.0", options={"vllm": {"kv-cache-dtype": "fp8"}}),
     stack({"vllm": "0.24.0"}, "T4", cuda="13.0", options={"vllm": {"kv-cache-dtype": "auto"}})),
    ("vllm.fp8-kv.default-backend.0.11.0-ampere", "warning",
     stack({"vllm": "0.11.0"}, "RTX 3090", cuda="12.8", options={"vllm": {"kv-cache-dtype": "fp8"}}),
     stack({"vllm": "0.11.0"}, "RTX 3090", cuda="12.8", options={"vllm": {"kv-cache-dtype": "auto"}})),
    ("vllm.v1-engine.pre-ampere", "error",
     stack({"vllm": "0.7.2"}, "V100", cuda="12.4", env={"VLLM_USE_V1": "1"}),
     stack({"vllm": "0.7.2"}, "A100 80GB", cuda="12.4", env={"VLLM_USE_V1": "1"})),
    ("torchaudio.2.11.0.torch-floor", "warning",
     stack({"torch": "2.9.0", "torchaudio": "2.11.0"}, cuda=None, platform="macos-arm64"),
     stack({"torch": "2.11.0", "torchaudio": "2.11.0"}, cuda=None, platform="macos-arm64")),
]


@pytest.fixture(scope="module")
def db():
    return Database.load()


@pytest.mark.parametrize(("rule", "severity", "shown", "hidden"), CASES, ids=[c[0] for c in CASES])
def test_rule_is_shown_only_where_its_conditions_hold(db, rule, severity, shown, hidden):
    report = check(shown, database=db)
    found = [f for f in report.findings if f.id == rule]
    assert found, f"{rule} not shown; got {[f.id for f in report.findings]}"
    assert found[0].severity == severity
    assert found[0].source is not None
    assert rule not in {f.id for f in check(hidden, database=db).findings}


def test_every_rule_has_a_case(db):
    # (the rules of data/derived/ are written by a script from the line they cite: tests/test_derived_*.py)
    rules = {rule.id for component in db.components() for rule in component.rules
             if os.path.basename(os.path.dirname(rule.file or "")) != "derived"}
    assert rules == {c[0] for c in CASES}


def test_driver_not_given_is_noted_not_assumed(db):
    report = check(stack({"torch": "2.14.1"}, "H100"), database=db)
    finding = next(f for f in report.findings if f.id == "driver:unknown")
    assert finding.severity == "info" and "580" in finding.message
