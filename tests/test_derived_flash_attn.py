"""flash-attn's derived facts (tools/derive_flash_attn.py, data/derived/flash-attn.toml).

(a) The script's parsers on small texts shaped like flash-attention's setup.py,
publish.yml and flash_api.cpp (no mirror, no network). (b) Stacks users
reported in issue trackers, checked against the bundled database with the
derived rules: the failures the rules must catch, the ones they cannot (strict
xfail, with why), and working setups that must stay free of their errors.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import compat

from .conftest import load_tool

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)

ROOT = Path(__file__).resolve().parent.parent
derive = load_tool("derive_flash_attn")

SETUP = '''
@functools.lru_cache(maxsize=None)
def cuda_archs() -> str:
    return os.getenv("FLASH_ATTN_CUDA_ARCHS", "80;90;100;120").split(";")

if not SKIP_CUDA_BUILD and not IS_ROCM:
    cc_flag = []
    if CUDA_HOME is not None:
        _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
        if bare_metal_version < Version("11.7"):
            raise RuntimeError(
                "FlashAttention is only supported on CUDA 11.7 and above.  "
                "Note: make sure nvcc has a supported version by running nvcc -V."
            )
    # cc_flag.append("arch=compute_75,code=sm_75")
    if "80" in cuda_archs():
        cc_flag.append("-gencode")
        cc_flag.append("arch=compute_80,code=sm_80")
    if CUDA_HOME is not None:
        if bare_metal_version >= Version("11.8") and "90" in cuda_archs():
            cc_flag.append("-gencode")
            cc_flag.append("arch=compute_90,code=sm_90")
        if bare_metal_version >= Version("12.8") and "120" in cuda_archs():
            cc_flag.append("-gencode")
            cc_flag.append("arch=compute_120,code=sm_120")

def get_wheel_url():
    if IS_ROCM:
        pass
    else:
        torch_cuda_version = parse(torch.version.cuda)
        torch_cuda_version = parse("11.8") if torch_cuda_version.major == 11 else parse("12.3")
        # cuda_version = f"{cuda_version_raw.major}{cuda_version_raw.minor}"
        cuda_version = f"{torch_cuda_version.major}"
'''

WORKFLOW = '''
jobs:
  build_wheels:
    strategy:
      matrix:
          os: [ubuntu-20.04]
          python-version: ['3.9', '3.10', '3.11', '3.12', '3.13']
          torch-version: ['2.4.0', '2.5.1', '2.6.0']
          cuda-version: ['12.4.1']
          cxx11_abi: ['FALSE', 'TRUE']
          exclude:
            # Pytorch < 2.5 does not support Python 3.13
            - torch-version: '2.4.0'
              python-version: '3.13'
    steps:
      - name: Build wheel
        run: |
          tmpname=cu${WHEEL_CUDA_VERSION}torch${MATRIX_TORCH_VERSION}cxx11abi${{ matrix.cxx11_abi }}
'''

API_OLD = '''
    auto dprops = at::cuda::getCurrentDeviceProperties();
    // bool is_sm75 = dprops->major == 7 && dprops->minor == 5;
    bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
    bool is_sm90 = dprops->major == 9 && dprops->minor == 0;
    TORCH_CHECK(is_sm90 || is_sm8x, "FlashAttention only supports Ampere GPUs or newer.");
    // TORCH_CHECK(is_sm90 || is_sm8x || is_sm75, "FlashAttention only supports Turing GPUs or newer.");
    TORCH_CHECK(head_size_og <= 256, "FlashAttention forward only supports head dimension at most 256");
'''

API_NEW = '''
    auto [cc_major, cc_minor] = get_compute_capability(get_current_device());
    bool is_sm8x_min = cc_major >= 8;
    TORCH_CHECK(is_sm8x_min, "FlashAttention only supports Ampere GPUs or newer.");
    TORCH_CHECK(head_size <= 256, "FlashAttention forward only supports head dimension at most 256");
'''


# -- (a) the parsers ---------------------------------------------------------------------------

def test_setup_gencodes_follow_cuda_thresholds_and_the_archs_env_default():
    setup = derive.parse_setup(SETUP)
    assert [(g.arch, str(g.min_cuda), g.archs_key) for g in setup.gencodes] == [
        ("8.0", "None", "80"), ("9.0", "11.8", "90"), ("12.0", "12.8", "120")]
    assert setup.archs(Version("12.4"))[0] == ["8.0", "9.0"]
    assert setup.archs(Version("12.9"))[0] == ["8.0", "9.0", "12.0"]
    assert setup.archs(Version("11.7"))[0] == ["8.0"]
    floor, message, _ = setup.nvcc_floor
    assert floor == Version("11.7") and message.startswith("FlashAttention is only supported on CUDA 11.7")
    assert setup.wheel_cuda(11)[0] == Version("11.8") and setup.wheel_cuda(12)[0] == Version("12.3")
    assert setup.label_minor is False  # the commented f-string with the minor is not read


def test_workflow_matrix_and_its_exclusions():
    wf = derive.parse_workflow(WORKFLOW)
    assert wf.cuda[0] == ["12.4.1"] and wf.label_var == "WHEEL_CUDA_VERSION"
    assert wf.wheel_label(Version("12.4.1")) == "cu12"
    built = wf.builds("12.4.1")
    assert built["2.4.0"] == ["3.9", "3.10", "3.11", "3.12"] and "3.13" in built["2.6.0"]


def test_capability_check_old_and_new():
    old, new = derive.parse_api(API_OLD), derive.parse_api(API_NEW)
    assert old.capability == ">=8.0,<=9.0" and new.capability == ">=8.0"
    assert old.capability_line == 6 and old.head_max == 256
    assert Version("12.0") not in SpecifierSet(old.capability) and Version("8.9") in SpecifierSet(old.capability)


def test_arch_specifiers_follow_binary_compatibility():
    assert derive.arch_spec(["8.0", "9.0"], None) == ">=8.0,<10"
    spec = SpecifierSet(derive.arch_spec(["8.0", "9.0", "10.0", "12.0"], None))
    assert [Version(v) in spec for v in ("7.5", "8.7", "10.3", "11.0", "12.1")] == [False, True, True, False, True]


def test_a_release_whose_setup_asks_for_a_wheel_label_the_workflow_never_builds_has_no_wheel_rule():
    # setup.py asks for cu123 (major and minor), the workflow builds cu124: pip compiles instead
    setup = derive.parse_setup(SETUP.replace('cuda_version = f"{torch_cuda_version.major}"',
                                             'cuda_version = f"{torch_cuda_version.major}{torch_cuda_version.minor}"'))
    wf = derive.parse_workflow(WORKFLOW.replace("WHEEL_CUDA_VERSION", "MATRIX_CUDA_VERSION"))
    api = derive.parse_api(API_NEW)
    release = derive.Release("9.9.9", "v9.9.9", "a" * 40, "2025-01-01", setup, wf, api)
    whats = {f["what"] for f in derive.facts_of(release)}
    assert not any(w.startswith("wheel-archs") for w in whats)
    assert {"capability", "head-dim", "nvcc-floor", "source-archs.cuda-12.8-plus"} <= whats


def test_a_wheel_the_workflow_builds_against_a_torch_pre_release_is_an_inferred_known_issue():
    # flash-attn 2.5.7's matrix: ['1.12.1', ..., '2.2.0', '2.3.0.dev20240207'] (publish.yml line 47)
    text = WORKFLOW.replace("'2.6.0'", "'2.7.0.dev20250110'")
    assert text != WORKFLOW
    setup, wf, api = derive.parse_setup(SETUP), derive.parse_workflow(text), derive.parse_api(API_NEW)
    release = derive.Release("9.9.9", "v9.9.9", "a" * 40, "2025-01-01", setup, wf, api)
    (fact,) = [f for f in derive.facts_of(release) if f["what"].startswith("nightly-wheel")]
    assert fact["what"] == "nightly-wheel.torch-2.7" and fact["kind"] == "known-issue" and fact["inferred"]
    assert fact["when"]["packages"] == {"torch": "==2.7.*"} and fact["when"]["env"] == {"FLASH_ATTENTION_FORCE_BUILD": False}
    assert "2.7.0.dev20250110" in fact["message"] and "require" not in fact
    assert not [f for f in derive.facts_of(derive.Release("9.9.9", "v9.9.9", "a" * 40, "2025-01-01", setup,
                                                          derive.parse_workflow(WORKFLOW), api))
                if f["what"].startswith("nightly-wheel")]


def test_flash_attn_2_5_7_s_torch_2_3_wheel_is_a_nightly_s(db):
    """Dao-AILab/flash-attention#931: 2.5.7 with torch 2.3.0, "undefined symbol"; 2.5.8's wheel, built against
    the release, loads."""
    given = stack({"flash-attn": "2.5.7", "torch": "2.3.0"}, None, cuda="12.1")
    finding = next(f for f in check(given, database=db).warnings
                   if f.id == "flash-attn.derived.2.5.7.nightly-wheel.torch-2.3")
    assert "2.3.0.dev20240207" in finding.message and finding.basis
    assert finding.source.path == ".github/workflows/publish.yml" and finding.source.line == 47
    later = check(stack({"flash-attn": "2.5.8", "torch": "2.3.0"}, None, cuda="12.1"), database=db)
    assert not any("nightly-wheel" in f.id for f in later.findings)
    forced = check({**given, "env": {"FLASH_ATTENTION_FORCE_BUILD": "TRUE"}}, database=db)
    assert not any("nightly-wheel" in f.id for f in forced.findings)


# -- (b) real stacks -----------------------------------------------------------------------------

def stack(packages: dict, gpu: str | None, python: str = "3.10", **system) -> dict:
    out: dict = {"system": {"python": python, **system}, "packages": packages}
    if gpu is not None:
        out["hardware"] = {"gpu": gpu}
    return out


def derived_errors(report) -> set[str]:
    return {f.id for f in report.errors if f.id.startswith("flash-attn.derived.")}


def test_v100s_with_flash_attn_2_6_0_post1(db):
    """https://github.com/microsoft/MInference/issues/51: flash-attn 2.6.0.post1 on a Tesla V100S,
    Python 3.10: "RuntimeError: FlashAttention only supports Ampere GPUs or newer." """
    report = check(stack({"flash-attn": "2.6.0.post1"}, "V100"), database=db)
    assert "flash-attn.derived.2.7.2.post1.capability" in derived_errors(report)


def test_rtx_5090_with_the_prebuilt_2_7_4_post1_wheel_for_torch_2_6(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1644 (torch 2.6.0+cu124 is the torch the pip
    install of flash_attn 2.7.4.post1 works with) and https://github.com/Dao-AILab/flash-attention/issues/1638
    (RTX 5090: "CUDA error: no kernel image is available for execution on the device"): the +cu12torch2.6
    wheel setup.py downloads is built with CUDA 12.4 and carries sm_80 and sm_90 only."""
    report = check(stack({"flash-attn": "2.7.4.post1", "torch": "2.6.0"}, "RTX 5090", cuda="12.4"), database=db)
    assert "flash-attn.derived.2.7.4.post1.wheel-archs.cuda-12" in derived_errors(report)


@pytest.mark.xfail(strict=True, reason="flash_api.cpp at v2.7.4.post1 accepts any compute capability >= 8 and a "
                   "CUDA 12.8 source build compiles sm_120: the user's refusal came from another flash-attn install "
                   "than the one they built, which no stack file can say")
def test_rtx_5090_2_7_4_post1_built_from_source_still_refused(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1540: 2.7.4.post1 built from source on Windows 11,
    CUDA 12.8, PyTorch 2.7, Python 3.11, RTX 5090: "FlashAttention only supports Ampere GPUs or newer." """
    report = check(stack({"flash-attn": "2.7.4.post1", "torch": "2.7.0"}, "RTX 5090", python="3.11",
                         cuda="12.8", platform="windows-x86_64"), database=db)
    assert derived_errors(report)


@pytest.mark.xfail(strict=True, reason="2.8.3's wheel matrix stops at torch 2.8, so setup.py compiles with the "
                   "image's CUDA 12.8, which builds sm_120; the kernels the user got are not what setup.py at v2.8.3 "
                   "says (a prebuilt wheel of another source, or FLASH_ATTN_CUDA_ARCHS set)")
def test_rtx_5090_flash_attn_2_8_3_with_torch_2_9_nightly(db):
    """https://github.com/ostris/ai-toolkit/issues/475: nvidia/cuda:12.8.1-devel-ubuntu22.04, torch
    2.9.0.dev20250909+cu128, flash-attn 2.8.3, RTX 5090: "no kernel image is available for execution on the device" """
    report = check(stack({"flash-attn": "2.8.3", "torch": "2.9.0"}, "RTX 5090", cuda="12.8"), database=db)
    assert derived_errors(report)


@pytest.mark.xfail(strict=True, reason="an undefined C++ symbol between the torch the prebuilt wheel was built "
                   "against and the installed torch (its C++ ABI) is no GPU fact: setup.py's wheel choice by torch "
                   "minor is not a rule here")
def test_torch_2_7_cu128_with_flash_attn_2_7_4_post1_undefined_symbol(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1644: torch 2.7.0 (CUDA 12.8) with
    flash_attn-2.7.4.post1, Python 3.10: "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs" """
    report = check(stack({"flash-attn": "2.7.4.post1", "torch": "2.7.0"}, None, cuda="12.8"), database=db)
    assert derived_errors(report)


@pytest.mark.xfail(strict=True, reason="an A800 is sm_80, which every derived rule accepts: the user's refusal "
                   "came from an install the stack cannot describe")
def test_a800_refused_as_not_ampere(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1485: "RuntimeError: FlashAttention only supports
    Ampere GPUs or newer." on an A800 (transformers, attn_implementation="flash_attention_2", Python 3.12);
    the report names no flash-attn release, the newest of its day (2.7.4.post1) is assumed."""
    report = check(stack({"flash-attn": "2.7.4.post1"}, "A800", python="3.12"), database=db)
    assert derived_errors(report)


@pytest.mark.xfail(strict=True, reason="with FLASH_ATTN_CUDA_ARCHS set the derived rules state nothing (the list "
                   "is the user's), and nvcc crashing while compiling is not a fact of setup.py")
def test_rtx_5070_ti_build_of_2_8_3_for_sm_120_crashes_nvcc(db):
    """https://github.com/Dao-AILab/flash-attention/issues/2361: FLASH_ATTN_CUDA_ARCHS=120 pip install flash-attn
    (2.8.3) with CUDA 12.8, PyTorch 2.9.1+cu128, RTX 5070 Ti: nvcc segfaults on the backward kernels."""
    report = check({**stack({"flash-attn": "2.8.3", "torch": "2.9.1"}, "RTX 5070 Ti", cuda="12.8"),
                    "env": {"FLASH_ATTN_CUDA_ARCHS": "120"}}, database=db)
    assert derived_errors(report)


# -- working setups ----------------------------------------------------------------------------

def test_rtx_4090_with_2_7_4_post1_built_from_source_worked(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1540: the same ComfyUI workflows "were working fine on
    an RTX 4090" with 2.7.4.post1 built from source on Windows 11, CUDA 12.8, PyTorch 2.7, Python 3.11."""
    report = check(stack({"flash-attn": "2.7.4.post1", "torch": "2.7.0"}, "RTX 4090", python="3.11",
                         cuda="12.8", platform="windows-x86_64"), database=db)
    assert not derived_errors(report), [f.message for f in report.errors]


def test_torch_2_6_cu124_with_the_pip_install_of_2_7_4_post1_worked(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1644: "the only torch which works for pip version of
    flash_attn is 2.6.0+cu124" (flash_attn 2.7.4.post1, Python 3.10); the GPU is not named, an H100 is assumed."""
    report = check(stack({"flash-attn": "2.7.4.post1", "torch": "2.6.0+cu124"}, "H100", cuda="12.4"), database=db)
    assert not derived_errors(report), [f.message for f in report.errors]
