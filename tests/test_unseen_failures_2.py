"""A second blind set: real failures (and working setups) from upstream
trackers, collected blind (without a look at compat's data), none cited
by another test here, written as the users described them and checked
against the bundled database (the conventions of test_unseen_failures.py).

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


def test_pytorch123835(db):
    """https://github.com/pytorch/pytorch/issues/123835 (2024-04-11) -- "Following any package manager install
    then running: import torch; torch.cuda.is_available() returns false". Expected: PyPI's torch 2.2.2 wheels
    for linux-aarch64 are CPU-only builds, so on a GH200 CUDA is unavailable; a CUDA build must come from
    another index (download.pytorch.org cu12x aarch64 wheels of a later release, or NGC/source). Gaps:
    collect_env: PyTorch 2.2.2 from pip/PyPI, 'CUDA used to build PyTorch: Could not collect', Python 3.12.1,
    Ubuntu 22.04 aarch64, GH200 480GB, driver 550.54.15, system CUDA runtime 12.1.105. The stack's cuda=12.1 is
    the host runtime the user meant to use, not what the wheel targets (it targets none)."""
    report = check({'system': {'python': '3.12.1',
                    'platform': 'linux-aarch64',
                    'cuda': '12.1',
                    'driver': '550.54.15',
                    'glibc': '2.35'},
         'hardware': {'gpu': 'GH200'},
         'packages': {'torch': '2.2.2'}}, database=db)
    assert "accelerator:torch==2.2.2" in flagged(report)


def test_wan2_1_30(db):
    """https://github.com/Wan-Video/Wan2.1/issues/30 (2025-02-26) -- "flash_attn-2.7.4.post1.tar.gz ...
    UserWarning: flash_attn was requested, but nvcc was not found ... CUDAExtension(". Expected: flash-attn has
    no macOS build and its source build needs CUDA (nvcc/CUDA_HOME); it cannot be installed on macOS arm64, so
    the dependency must be dropped (use SDPA) on that platform. Gaps: Apple Silicon Mac, pip install -r
    requirements.txt (Wan2.1) pulled flash_attn 2.7.4.post1 sdist; Python 3.11 read from the miniconda env path.
    torch version not stated: 2.6.0 (current on the report date, Wan2.1 asks torch>=2.4.0) assumed. No GPU
    table: Apple GPU (MPS) only."""
    report = check({'system': {'python': '3.11', 'platform': 'macos-arm64'},
         'packages': {'flash-attn': '2.7.4.post1', 'torch': '2.6.0'}}, database=db)
    assert "source-build:flash-attn==2.7.4.post1" in flagged(report)


def test_dynamicrafter86(db):
    """https://github.com/Doubiiu/DynamiCrafter/issues/86 (2024-06-01) -- "xFormers can't load C++/CUDA
    extensions. xFormers was built for: PyTorch 2.3.0+cu121 with CUDA None (you have 2.0.0+cu117) Python 3.11.9
    (you have 3.11.9)". Expected: xformers 0.0.26.post1 is built against (and requires) torch 2.3.0, but the
    environment has torch 2.0.0+cu117, so its C++/CUDA extensions do not load; pair torch and xformers releases
    (e.g. torch 2.0.0 with xformers 0.0.19/0.0.20). Gaps: The xformers version is not printed; the xformers
    release built for torch 2.3.0 is 0.0.26.post1, taken here. Platform and GPU not stated (fresh venv); Linux
    assumed, no GPU given."""
    report = check({'system': {'python': '3.11.9', 'platform': 'linux-x86_64', 'cuda': '11.7'},
         'packages': {'torch': '2.0.0+cu117', 'xformers': '0.0.26.post1'}}, database=db)
    assert "requires:xformers==0.0.26.post1:torch" in errors(report)


def test_dynamicrafter86_working(db):
    """https://github.com/Doubiiu/DynamiCrafter/issues/86 (2025-01-16) -- "I was able to get it working with the
    following modifications to the required lib versions torch==2.5.1 torchvision==0.20.1 xformers==0.0.29.post1
    av==12.0.0". Expected: No error: xformers 0.0.29.post1 is the build for torch 2.5.1 and torchvision 0.20.1
    matches torch 2.5.1. Gaps: Comment by another user (jbartolozzi) in the same thread. Python, platform, CUDA
    and GPU not given: 3.11 (as the reporter), Linux, and torch 2.5.1's default PyPI build (cu124) assumed."""
    report = check({'system': {'python': '3.11', 'platform': 'linux-x86_64', 'cuda': '12.4'},
         'packages': {'torch': '2.5.1', 'torchvision': '0.20.1', 'xformers': '0.0.29.post1'}}, database=db)
    assert not errors(report), errors(report)


def test_xformers1121(db):
    """https://github.com/facebookresearch/xformers/issues/1121 (2024-10-18) -- "xFormers was built for: PyTorch
    2.4.1+cu124 with CUDA 1204 (you have 2.5.0+cu124) Python 3.11.9 (you have 3.11.9) ... xformers version:
    0.0.28.post1". Expected: xformers 0.0.28.post1 is built for torch 2.4.1 and cannot load its extensions on
    torch 2.5.0; the maintainers say 0.0.28.post2 is the release for torch 2.5.0. Gaps: Comment by Piscabo in
    the thread. Platform and GPU not given (linux-x86_64 default left; likely a ComfyUI user, possibly Windows)."""
    report = check({'system': {'python': '3.11.9', 'cuda': '12.4'},
         'packages': {'torch': '2.5.0+cu124', 'xformers': '0.0.28.post1'}}, database=db)
    assert "requires:xformers==0.0.28.post1:torch" in errors(report)


def test_funasr2973(db):
    """https://github.com/modelscope/FunASR/issues/2973 (2026-06-11) -- "The NVIDIA driver on your system is too
    old (found version 12080)". Expected: torch 2.11.0 from PyPI is a CUDA 13.0 build, which needs an R580+
    driver; driver 570.86.10 only supports CUDA 12.8, so CUDA init fails — use a cu128 build (or a vLLM release
    pinning torch 2.10/cu128) or upgrade the driver. Gaps: Facts as restated by the maintainer in the thread:
    driver 570.86.10 (nvidia-smi CUDA 12.8), PyTorch 2.11.0 from a bare 'pip install torch' (PyPI default build
    for 2.11 is CUDA 13.0, so cuda=13.0 is inferred from that). Python, GPU and the vLLM version (thread
    mentions vllm>=0.12.0) not given; Python 3.12 assumed, vLLM left out. Date is that of the maintainer's
    comment; the issue opened shortly before."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64', 'cuda': '13.0', 'driver': '570.86.10'},
         'packages': {'torch': '2.11.0'}}, database=db)
    assert "driver:cuda-13" in errors(report)


def test_xformers1289(db):
    """https://github.com/facebookresearch/xformers/issues/1289 (2025-07-12) -- "pip install torch==2.5.1+cu121
    torchvision==0.20.1+cu121 torchaudio==2.5.1+cu121 ... PyTorch issues the following warning, correctly
    identifying the new GPU architecture (RTX 5070 / sm_120)". Expected: torch 2.5.1+cu121 carries no sm_120
    kernels, so an RTX 5070 (Blackwell, sm_120) cannot run it; torch >= 2.7.0 with a cu128 build is needed (and
    an xformers built for that torch). Gaps: Manual ComfyUI install on Windows 11 (ComfyUI version not stated,
    so left out). The report is titled about installing xformers; the torch build is what lacks the GPU's
    architecture. No driver given."""
    report = check({'system': {'python': '3.10.11', 'platform': 'windows-x86_64', 'cuda': '12.1'},
         'hardware': {'gpu': 'RTX 5070'},
         'packages': {'torch': '2.5.1+cu121', 'torchvision': '0.20.1+cu121', 'torchaudio': '2.5.1+cu121'}}, database=db)
    assert "arch:torch==2.5.1" in flagged(report)


def test_vllm21633(db):
    """https://github.com/vllm-project/vllm/issues/21633 (2025-07-25) -- "NVIDIA GeForce RTX 5070 Ti with CUDA
    capability sm_120 is not compatible with the current PyTorch installation. The current PyTorch install
    supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.". Expected: The torch in this vLLM
    0.10.0 stack (2.7.1, CUDA 12.6 build) has no sm_120 kernels, so it cannot run on an RTX 5070 Ti; a cu128
    torch 2.7.1 build (and a vLLM built for it) is required. Gaps: Docker image vllm/vllm-openai v0.10.0
    (python3.12 dist-packages). The torch build is not printed: vLLM 0.10.0 pins torch==2.7.1, and the arch list
    sm_50..sm_90 is that of the cu126 build, so 2.7.1+cu126 is assumed. The user says v0.9.2 worked on the same
    card."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64', 'cuda': '12.6'},
         'hardware': {'gpu': 'RTX 5070 Ti'},
         'packages': {'vllm': '0.10.0', 'torch': '2.7.1+cu126'}}, database=db)
    assert "arch:torch==2.7.1" in errors(report)


def test_krita1828(db):
    """https://github.com/Acly/krita-ai-diffusion/issues/1828 (2025-06-17) -- "After updating from version 1.33
    to 1.35 I started getting this error: ... CUDA error: no kernel image is available for execution on the
    device". Expected: torch 2.7.1's CUDA 12.8 build dropped Maxwell/Pascal kernels (minimum sm_70), so a GTX
    1060 (sm_61) gets 'no kernel image'; use the cu126 build of torch 2.7.1 (or older). Gaps: Reporter: Ubuntu
    22.04, GTX 1060, driver 570.133.07, plugin 1.35 managed server. The package versions (torch 2.7.1+cu128
    etc., Python 3.12.9) are those another user in the thread listed for the server 'as it comes with plugin
    v1.35'. ComfyUI version not stated, left out."""
    report = check({'system': {'python': '3.12.9', 'platform': 'linux-x86_64', 'cuda': '12.8', 'driver': '570.133.07'},
         'hardware': {'gpu': 'GTX 1060'},
         'packages': {'torch': '2.7.1+cu128', 'torchvision': '0.22.1+cu128', 'torchaudio': '2.7.1+cu128'}}, database=db)
    assert "arch:torch==2.7.1" in errors(report)


def test_krita1828_working(db):
    """https://github.com/Acly/krita-ai-diffusion/issues/1828 (2025-06-20) -- "And this is how they look now
    after downgrading them: torch 2.7.1 torchaudio 2.7.1 torchvision 0.22.1 ... now it works again". Expected:
    No error: the CUDA 12.6 build of torch 2.7.1 still includes sm_50/sm_60/sm_61 kernels, so it runs on a GTX
    1060. Gaps: Comment by eridanired123 ('Torch 2.7.1+cu128 indeed dropped support for my GPU'); their GPU
    model is not named, the thread's GTX 1060 (Pascal) is assumed. The plain PyPI torch 2.7.1 build for Linux is
    CUDA 12.6, hence cuda=12.6."""
    report = check({'system': {'python': '3.12.9', 'platform': 'linux-x86_64', 'cuda': '12.6'},
         'hardware': {'gpu': 'GTX 1060'},
         'packages': {'torch': '2.7.1', 'torchvision': '0.22.1', 'torchaudio': '2.7.1'}}, database=db)
    assert not errors(report), errors(report)


def test_vllm8189(db):
    """https://github.com/vllm-project/vllm/issues/8189 (2025-02-10) -- "In the latest vllm v0.7.2 and
    Flashinfer-0.2.0.post2, sm7.5's 2080ti still has this problem, which makes it impossible to use Flashinfer
    as the backend. ... RuntimeError: FlashAttention only supports Ampere GPUs or newer.". Expected: Selecting
    the FlashInfer attention backend on Turing (sm_75) fails in vLLM 0.7.2 with FlashInfer 0.2.0.post2: its
    attention path needs sm_80+ ('FlashAttention only supports Ampere GPUs or newer'); on a 2080 Ti use XFORMERS
    (V0) instead. Gaps: Comment by HelloCard in the thread (WSL2 on Windows, treated as linux-x86_64). Python,
    CUDA and driver not given; Python 3.12 assumed. FlashInfer given as PyPI project flashinfer-python (the user
    wrote 'Flashinfer-0.2.0.post2'). Model was a W8A8 phi-4 (compressed-tensors), not needed for the finding."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64'},
         'hardware': {'gpu': 'RTX 2080 Ti', 'count': 2},
         'packages': {'vllm': '0.7.2', 'flashinfer-python': '0.2.0.post2'},
         'options': {'vllm': {'dtype': 'half', 'tensor-parallel-size': 2, 'num-scheduler-steps': 50}},
         'env': {'VLLM_ATTENTION_BACKEND': 'FLASHINFER'}}, database=db)
    # A miss when the set was measured; caught since (not blind) by tools/derive_vllm_backends.py, written after
    # it: the V0 FlashInfer backend profiles memory through FlashAttention 2, which refuses sm_75.
    assert "Ampere" in flagged(report)["vllm.derived.0.7.3.flashinfer-backend.profiling-fa2"]
    assert "vllm.derived.0.7.3.flashinfer-backend.profiling-fa2" in errors(report)


@pytest.mark.xfail(strict=True, reason='the asymmetric (zero-point) W4A16 scheme of compressed-tensors and its'
                    ' sm_80 floor are not read; [model] checkpoint_dtype int4 does not say '
                    'zero points')
def test_vllm20216(db):
    """https://github.com/vllm-project/vllm/issues/20216 (2025-06-28) -- "('Quantization scheme is not supported
    for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')". Expected: An asymmetric (zero-
    point) W4A16 compressed-tensors checkpoint needs compute capability 8.0 in vLLM 0.9.1 (Marlin/Machete WNA16
    kernels), so it cannot load on sm_75; only symmetric schemes or a GPTQ/AWQ kernel path supporting Turing
    would work. Gaps: Title says vllm 0.9.2 but the engine log reads 'Initializing a V0 LLM engine (v0.9.1)':
    0.9.1 taken. GPU given only as capability 7.5 (the same user's 2x RTX 2080 Ti). quantization=compressed-
    tensors comes from the checkpoint (vLLM log), not a flag; the checkpoint is an asymmetric W4A16 (AWQ-style)
    compressed-tensors model. Python 3.12 from the miniconda path."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64'},
         'hardware': {'compute_capability': '7.5', 'count': 2},
         'packages': {'vllm': '0.9.1'},
         'options': {'vllm': {'quantization': 'compressed-tensors', 'dtype': 'float16', 'tensor-parallel-size': 2}},
         'model': {'name': 'Qwen3-32B-abliterated-awq-asym', 'checkpoint_dtype': 'int4'}}, database=db)
    assert set(flagged(report)) - {
        'unknown-release:transformers==5.25.0:kernels',
        'vllm.transformers-5.tokenizer.earlier',
    }


def test_vllm17581(db):
    """https://github.com/vllm-project/vllm/issues/17581 (2025-05-02) -- "When I use FP8 quant of Qwen 3 30BA3
    on 0.8.5 ... ValueError("type fp8e4nv not supported in this architecture. The supported fp8 dtypes are
    ('fp8e4b15', 'fp8e5')")". Expected: Qwen3-30B-A3B-FP8 is a block-quantized FP8 MoE; vLLM 0.8.5 runs it
    through Triton fp8e4nv kernels that need compute capability >= 8.9, so it fails on Ampere (RTX 3090, sm_86)
    — no weight-only Marlin fallback for this FP8 MoE path in that release. Gaps: Env: 2x RTX 3090, Ubuntu
    24.04, CUDA 12.4, driver 570.124.04, vLLM 0.8.5. Python and torch not given; Python 3.12 assumed, torch left
    to vLLM's pin (2.6.0)."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64', 'cuda': '12.4', 'driver': '570.124.04'},
         'hardware': {'gpu': 'RTX 3090', 'count': 2},
         'packages': {'vllm': '0.8.5'},
         'options': {'vllm': {'tensor-parallel-size': 2, 'dtype': 'auto'}},
         'model': {'name': 'Qwen/Qwen3-30B-A3B-FP8', 'family': 'qwen3', 'checkpoint_dtype': 'fp8'}}, database=db)
    # A miss when the set was measured; caught since (not blind): vllm.fp8-moe.pre-ada was written after it,
    # and the model catalog now knows Qwen3-30B-A3B (and its -FP8 repo) as a mixture of experts.
    assert "fp8e4nv" in flagged(report)["vllm.fp8-moe.pre-ada"]
    assert "vllm.fp8-moe.pre-ada" in errors(report)


def test_sglang13471(db):
    """https://github.com/sgl-project/sglang/issues/13471 (2025-11-18) -- "0.5.4.post3 run minimax-m2 FAILED
    with errors 'type fp8e4nv not supported in this architecture". Expected: MiniMax-M2 is an FP8 checkpoint and
    SGLang 0.5.4.post3 runs it with Triton fp8e4nv (e4m3) kernels that need sm_89+; A800/A100 (sm_80) cannot run
    them and SGLang has no FP8 weight-only fallback there — use a BF16 or INT4/AWQ variant. Gaps: Docker image
    v0.5.4.post3 on 4x A800 80GB (given as compute capability 8.0, the A800 being an A100 variant).
    Python/torch/CUDA of the image not stated; Python 3.12 assumed. MiniMax-M2's official checkpoint is FP8
    (block-wise)."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64'},
         'hardware': {'compute_capability': '8.0', 'count': 4},
         'packages': {'sglang': '0.5.4.post3'},
         'options': {'sglang': {'tp-size': 4}},
         'model': {'name': 'MiniMax-M2', 'checkpoint_dtype': 'fp8'}}, database=db)
    # A miss when the set was measured; caught since by tools/derive_sglang_fp8.py, written after it (not
    # blind): 0.5.1-0.5.5.post3 take Marlin's FP8 functions from vLLM, which the image did not have. A
    # warning: the stack cannot show that vLLM is absent, nor that the checkpoint is in the fp8 format.
    assert "fp8" in flagged(report)["sglang.derived.0.5.5.post3.fp8-linear.marlin-needs-vllm.checkpoint"]


def test_flash_attention928(db):
    """https://github.com/Dao-AILab/flash-attention/issues/928 (2024-04-25) -- "I got the same error with
    PyTorch 2.3.0 when I installed it with the wheel file flash_attn-2.5.7+cu122torch2.3cxx11abiFALSE-
    cp311-cp311-linux_x86_64.whl". Expected: flash-attn 2.5.7's prebuilt extension was compiled against a pre-
    release torch 2.3 whose c10::cuda::SetDevice ABI differs from torch 2.3.0 final, so it fails to import
    (undefined symbol); flash-attn 2.5.8 ships wheels built for torch 2.3.0. Gaps: Comment by Galaxy-Husky (the
    error quoted in the thread is 'undefined symbol: _ZN3c104cuda9SetDeviceEi'). Python 3.11 from the cp311
    wheel; torch 2.3.0's default PyPI build (cu121) assumed. GPU not given."""
    report = check({'system': {'python': '3.11', 'platform': 'linux-x86_64', 'cuda': '12.1'},
         'packages': {'torch': '2.3.0', 'flash-attn': '2.5.7'}}, database=db)
    # the same failure as flash-attention#931, from which the rule's basis quotes: not blind for this one
    assert "flash-attn.derived.2.5.7.nightly-wheel.torch-2.3" in flagged(report)


def test_flash_attention928_working(db):
    """https://github.com/Dao-AILab/flash-attention/issues/928 (2024-04-27) -- "The _ZN3c104cuda9SetDeviceEi
    import error seems to be fixed with v2.5.8, i.e. latest pip package of flash-attn==2.5.8 works with PyTorch
    2.3.0!". Expected: No error: flash-attn 2.5.8 wheels are built for torch 2.3.0. Gaps: Comment by
    andreaskoepf. Python/CUDA not given (3.11 and cu121 assumed as above). Note: a later comment (comaniac,
    2024-05-09) reports the same error with 2.5.8, so this working claim is not unanimous (possibly a
    cxx11abi/cached-build difference)."""
    report = check({'system': {'python': '3.11', 'platform': 'linux-x86_64', 'cuda': '12.1'},
         'packages': {'torch': '2.3.0', 'flash-attn': '2.5.8'}}, database=db)
    assert not errors(report), errors(report)


def test_vllm3941(db):
    """https://github.com/vllm-project/vllm/issues/3941 (2024-04-09) -- "How you are installing vllm: pip
    install vllm ... youkaichao: native windows is not supported". Expected: vLLM publishes no Windows wheels
    and its source build does not support native Windows; pip falls back to building the sdist, which fails —
    use WSL2/Linux. Gaps: Native Windows (PowerShell collect_env output). No vLLM version: 0.4.0.post1, the
    release current on the report date, assumed. Python, GPU, CUDA not given; Python 3.10 assumed."""
    report = check({'system': {'python': '3.10', 'platform': 'windows-x86_64'},
                    'packages': {'vllm': '0.4.0.post1'}}, database=db)
    assert "wheel:vllm==0.4.0.post1" in errors(report)


@pytest.mark.xfail(strict=True, reason="no build of torch 2.9.0+cu128 for linux-aarch64 is known (PyTorch's "
                    "own index), and vLLM 0.12.0's NVFP4 kernels' sm_120a/sm_121 split is "
                    'not in the derived list')
def test_vllm30855(db):
    """https://github.com/vllm-project/vllm/issues/30855 (2025-12-17) -- "Qwen3-30B-A3B-NVFP4 fails on Dell Pro
    Max GB10 ... torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device".
    Expected: The vLLM 0.12.0 / torch cu128 aarch64 builds ship no sm_121 kernels for the NVFP4 path (arch-
    specific sm_120a cubins do not run on sm_121), so GB10 gets 'no kernel image'; a build that targets 12.1
    (e.g. CUDA 13 / later vLLM) is needed. Gaps: Dell Pro Max GB10 (GB10, compute capability 12.1, aarch64),
    Ubuntu 24, host CUDA toolkit 13.0, vllm 0.12.0, torch 2.9.0+cu128 (so cuda=12.8 for the wheels). Python not
    given; 3.12 assumed. No driver given."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-aarch64', 'cuda': '12.8'},
         'hardware': {'compute_capability': '12.1'},
         'packages': {'vllm': '0.12.0', 'torch': '2.9.0+cu128'},
         'model': {'repo': 'RedHatAI/Qwen3-30B-A3B-NVFP4', 'checkpoint_dtype': 'nvfp4'}}, database=db)
    assert set(flagged(report)) - {
        'build:torch==2.9.0',
    }


def test_comfyui_hidiffusion7_working(db):
    """https://github.com/florestefano1975/ComfyUI-HiDiffusion/issues/7 (2024-05-01) -- "This installs Pytorch
    2.1.2 + cu121 ... For Pytorch 2.1.2, it's xformers v0.0.23.post1 ... pip install xformers==0.0.23.post1 Now,
    ComfyUI is running without any issues.". Expected: No error: xformers 0.0.23.post1 is the release built for
    torch 2.1.2 (cu121). Gaps: Python, platform, GPU and ComfyUI version not given; Python 3.11 assumed,
    platform left at the default. The failure before the fix was the latest xformers (built for torch 2.3.0)
    next to torch 2.1.2."""
    report = check({'system': {'python': '3.11', 'cuda': '12.1'},
         'packages': {'torch': '2.1.2+cu121', 'xformers': '0.0.23.post1'}}, database=db)
    assert not errors(report), errors(report)


def test_vllm39610_working(db):
    """https://github.com/vllm-project/vllm/issues/39610 (2026-04-12) -- "[Regression] MiniMax-M2.7/Qwen3.5 and
    other FP8 models fail on A100/Ampere with nightly while loading correctly on v0.19.0". Expected: No error:
    vLLM 0.19.0 serves FP8 checkpoints on Ampere (sm_80) through its weight-only FP8 (Marlin) fallback, with a
    warning that FP8 compute is not native. Gaps: The working half of a regression report: the reporter (ehfd)
    states FP8 models load correctly on vLLM 0.19.0 on 4x A100 (NVLink NV12, SXM form assumed, memory size not
    given); the nightly that failed is not a release and is left out. Python 3.12 from a commenter's venv path;
    torch left to vLLM 0.19.0's pin."""
    report = check({'system': {'python': '3.12', 'platform': 'linux-x86_64'},
         'hardware': {'gpu': 'A100', 'count': 4},
         'packages': {'vllm': '0.19.0'},
         'model': {'name': 'MiniMax-M2.7', 'checkpoint_dtype': 'fp8'}}, database=db)
    assert not errors(report), errors(report)
