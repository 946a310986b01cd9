"""Failures users hit in 2025-2026 with releases older than 2.9.1 / 0.11.1,
against the bundled database: each stack must fail for the reason the user
hit, and its working neighbour must pass.

The facts are the builds of torch 2.1-2.8 (torch.toml, "releases before
2.9.1") and the vLLM 0.11.0 / Transformers 5 rule (vllm.toml).
"""

from __future__ import annotations

import functools

import compat

from .test_reported_failures import stack

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)


def ids(report, severity: str) -> set[str]:
    return {f.id for f in report.findings if f.severity == severity}


# -- GPU architectures of torch 2.7 and 2.8 builds ------------------------------------------

def test_an_rtx_5090_with_torch_2_8_cu126_has_no_sm_120_kernels(db):
    # vllm-project/vllm#16901, #18995: "no kernel image is available" on 50-series cards
    report = check(stack({"torch": "2.8.0+cu126"}, gpu="RTX 5090", cuda="12.6"), database=db)
    finding = next(f for f in report.errors if f.id == "arch:torch==2.8.0")
    assert finding.details["build"] == "torch.cu126-2.8" and "RTX 5090 is sm_120" in finding.message
    assert check(stack({"torch": "2.8.0+cu128"}, gpu="RTX 5090", cuda="12.8"), database=db).ok


def test_a_v100_with_torch_2_7_cu128_has_no_volta_kernels(db):
    # pytorch/pytorch#147607 dropped sm_70 from the CUDA 12.8 build before 2.7; cu126 keeps it
    assert "arch:torch==2.7.1" in ids(check(stack({"torch": "2.7.1+cu128"}, gpu="V100", cuda="12.8"), database=db),
                                      "error")
    # 2.7.0's list is 2.7.1's, carried back on the strength of a merge before the branch cut: a warning, inferred
    report = check(stack({"torch": "2.7.0+cu128"}, gpu="V100", cuda="12.8"), database=db)
    warning = next(f for f in report.warnings if f.id == "arch:torch==2.7.0")
    assert warning.basis and "branch cut" in warning.basis
    assert check(stack({"torch": "2.7.1+cu126"}, gpu="V100", cuda="12.6"), database=db).ok
    assert check(stack({"torch": "2.7.0+cu126"}, gpu="V100", cuda="12.6"), database=db).ok


def test_volta_came_back_to_the_cuda_12_8_build_in_2_8_but_not_to_the_index_s_wheels(db):
    assert check(stack({"torch": "2.8.0+cu128"}, gpu="V100", cuda="12.8"), database=db).ok
    assert "arch:torch==2.8.0" in ids(check(stack({"torch": "2.8.0+cu128"}, gpu="P100", cuda="12.8"), database=db),
                                      "error")
    # the CUDA 12.8 build of the build script carries Volta; the index's own 2.8.0 wheels, read, do not
    # (torch.cuda.get_arch_list() in their libtorch_python.so starts at sm_75): an error, with a build that fits
    for gpu in ("V100", "P100"):
        report = check(stack({"torch": "2.8.0"}, gpu=gpu, cuda="12.8"), database=db)
        finding = next(f for f in report.errors if f.id == "arch:torch==2.8.0")
        # the hint names a build of PyTorch's own index that carries the GPU's kernels
        assert "sm_75, sm_80" in finding.message and ' fits: [system] index = "cu12' in finding.message
        assert finding.details["build"] == "torch.derived.2.8.0.pypi.linux-x86_64"


def test_the_architectures_hold_only_on_the_platform_their_source_measured(db):
    # 2.7.1+cu128 on Windows still carries sm_70 (CorridorKey #141); 2.7.0 on Windows is not known
    for version in ("2.7.1", "2.7.0"):
        windows = stack({"torch": f"{version}+cu128"}, gpu="V100", cuda="12.8", platform="windows-x86_64")
        report = check(windows, database=db)
        assert report.ok and not any(f.id.startswith("build-platform") for f in report.findings)


# -- the CUDA of the index's wheels -------------------------------------------------------------

def test_torch_2_6_from_the_index_is_a_cuda_12_4_build(db):
    # the metadata of 2.5.0-2.6.0 pins nvidia-cuda-runtime-cu12==12.4.127 (x86_64 Linux)
    twelve_eight = check(stack({"torch": "2.6.0"}, cuda="12.8"), database=db)
    note = next(f for f in twelve_eight.findings if f.id == "torch.index-wheels.cuda-12.4")
    assert "CUDA 12.4" in note.message and note.severity == "info"
    # the same major is no error (build-cuda compares majors); another major is
    assert twelve_eight.ok
    thirteen = check(stack({"torch": "2.6.0"}, cuda="13.0"), database=db)
    finding = next(f for f in thirteen.errors if f.id == "build-cuda:torch==2.6.0")
    assert "CUDA 12.4 build" in finding.message and finding.details["build"] == "torch.derived.2.6.0.pypi.linux-x86_64"
    fits = check(stack({"torch": "2.6.0"}, cuda="12.4"), database=db)
    assert fits.ok and not any(f.id.startswith("torch.index-wheels") for f in fits.findings)


def test_the_index_s_aarch64_wheels_before_2_11_are_cpu_only(db):
    # pytorch/pytorch#160162: a GH200 gets CPU torch from `pip install torch` up to 2.8; the wheels, read,
    # say the same of 2.9 and 2.10 (no libtorch_cuda.so, torch.version.cuda None), and 2.11 is a CUDA build
    for version in ("2.9.1", "2.10.0"):
        report = check(stack({"torch": version}, gpu="GH200", cuda="12.8", platform="linux-aarch64"), database=db)
        assert f"accelerator:torch=={version}" in ids(report, "warning")
    assert check(stack({"torch": "2.11.0"}, gpu="GH200", cuda="13.0", driver="580.95.05",
                       platform="linux-aarch64"), database=db).ok
    report = check(stack({"torch": "2.8.0"}, gpu="GH200", cuda="12.8", platform="linux-aarch64"), database=db)
    assert "accelerator:torch==2.8.0" in ids(report, "warning")
    arm = check(stack({"torch": "2.8.0+cu128"}, gpu="GH200", cuda="12.8", platform="linux-aarch64"), database=db)
    assert not any(f.id.startswith(("accelerator:", "build-platform:")) for f in arm.findings)


# -- vLLM up to 0.11.0 with Transformers 5 --------------------------------------------------------

def test_vllm_0_11_0_with_transformers_5_fails_at_tokenizer_init(db):
    # worker-vllm#258, rllm-org/rllm#388: AttributeError ... all_special_tokens_extended
    report = check(stack({"vllm": "0.11.0", "transformers": "5.0.0"}, cuda="12.8"), database=db)
    finding = next(f for f in report.errors if f.id == "vllm.transformers-5.tokenizer")
    assert "all_special_tokens_extended" in finding.message
    fixed = check(stack({"vllm": "0.11.0", "transformers": "4.57.1"}, cuda="12.8"), database=db)
    assert "vllm.transformers-5.tokenizer" not in {f.id for f in fixed.findings} and fixed.ok


def test_earlier_vllm_with_transformers_5_is_an_inferred_warning(db):
    report = check(stack({"vllm": "0.10.2", "transformers": "5.0.0"}, cuda="12.8"), database=db)
    finding = next(f for f in report.findings if f.id == "vllm.transformers-5.tokenizer.earlier")
    assert finding.severity == "warning" and finding.basis and "reported for 0.11.0 only" in finding.basis
    assert "vllm.transformers-5.tokenizer" not in {f.id for f in report.errors}
    fixed = check(stack({"vllm": "0.10.2", "transformers": "4.57.1"}, cuda="12.8"), database=db)
    assert not any(f.id.startswith("vllm.transformers-5") for f in fixed.findings)


# -- a build made with a CUDA too old for the GPU's family (cuda.toml [[sass]]) ----------------------

def test_a_build_of_a_cuda_before_12_8_runs_on_blackwell_only_through_ptx(db):
    # NVIDIA's Blackwell compatibility guide: CUDA 12.7 and older build no Blackwell kernels
    report = check(stack({"torch": "2.6.0+cu126"}, gpu="RTX 5090", cuda="12.6"), database=db)
    finding = next(f for f in report.warnings if f.id == "arch:torch==2.6.0")
    assert "no CUDA before 12.8" in finding.message and "PTX" in finding.message
    assert finding.basis and finding.basis.startswith("inferred") and "CUDA 12.6" in finding.basis
    assert finding.source and finding.source.id == "nvidia-blackwell-compatibility-guide"
    # not before Blackwell, and not for a build of CUDA 12.8 (its own list, where known, decides)
    assert "arch:torch==2.6.0" not in ids(check(stack({"torch": "2.6.0+cu126"}, gpu="H100", cuda="12.6"),
                                                database=db), "warning")
    assert not any(f.id == "arch:torch==2.8.0" and "no CUDA before" in f.message
                   for f in check(stack({"torch": "2.8.0+cu128"}, gpu="RTX 5090", cuda="12.8"), database=db).findings)


def test_a_build_whose_list_is_known_is_judged_by_its_list_not_by_its_cuda(db):
    # the index's 2.6.0 wheels (CUDA 12.4) list sm_50-sm_90, read: a certain error, not the inferred warning
    report = check(stack({"torch": "2.6.0"}, gpu="RTX 5090", cuda="12.4"), database=db)
    finding = next(f for f in report.errors if f.id == "arch:torch==2.6.0")
    assert "sm_90 only" in finding.message and "no CUDA before" not in finding.message
