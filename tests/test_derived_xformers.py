"""xformers' derived facts (tools/derive_xformers.py, data/derived/xformers.toml).

(a) The script's readers on small texts shaped like the upstream's files (no
mirror, no network). (b) Stacks users reported in upstream trackers, as they
described them, against the bundled database: the failures the derived facts
catch, the ones they cannot (strict xfail, with why), and working setups that
must stay free of any finding of these facts.
"""

from __future__ import annotations

import functools
import json
import tomllib
from pathlib import Path

import pytest

import compat

from .conftest import load_tool

# The findings are the subject here: the search for the smallest changes that work (tested in
# test_resolve.py and test_upgrade.py) is left out of these checks.
check = functools.partial(compat.check, suggest=False)

ROOT = Path(__file__).resolve().parent.parent
derive = load_tool("derive_xformers")


# -- (a) the readers ------------------------------------------------------------------

WHEELS_YAML = """\
name: wheels
jobs:
  build:
    strategy:
      fail-fast: false
      matrix:
        os:
          - 8-core-ubuntu
          - windows-8-core
        python:
          - "3.10"
        torch_version:
          - "2.2.0"
        cuda_short_version:
          - "118"
          - "121"

    uses: ./.github/workflows/wheels_build.yml
  upload_pip:
    needs: build
    with:
      filter: "*torch2.2.0+cu121*"
  upload_pt_cu118:
    needs: build
    with:
      s3_path: s3://pytorch/whl/cu118/
      filter: "*torch2.2.0+cu118*"
"""

WHEELS_PY = """\
jobs:
  target_determinator:
    runs-on: ubuntu-latest
    steps:
    - id: set-matrix
      shell: python
      run: |
        CU_VERSIONS = ['118', '126', '128']
        include = []
        for os in ['8-core-ubuntu', 'windows-8-core']:
          for torch_version in ['2.7.0']:
            for python, cuda_short_version in PY_CU:
              if cuda_short_version < "124" and "windows" in os:
                print("Windows builder no longer compatible with cu<124")
                continue
  build:
    needs: target_determinator
  upload_pip:
    needs: build
    with:
      filter: "*torch2.7.0+cu126*"
  upload_pt:
    needs: build
    strategy:
      matrix:
        suffix:
          - cu118
          - cu126
          - rocm6.3
    with:
      s3_path: s3://pytorch/whl/${{ matrix.suffix }}/
      filter: "*torch2.7.0+${{ matrix.suffix }}*"
"""

BUILD_OLD = """\
env:
  TORCH_CUDA_ARCH_LIST: "5.0+PTX 6.0 6.1 7.0 7.5 8.0+PTX"
jobs:
  build:
    steps:
      - id: cuda_info
        shell: python
        run: |
          TORCH_CUDA_DEFAULT = "121"  # pytorch 2.1.0
          full_version, install_script = {
            "121": ("12.1.0", "https://example/cuda_12.1.0.run"),
            "118": ("11.8.0", "https://example/cuda_11.8.0.run"),
          }[cushort]
      - name: Add H100 if nvcc 11.08+
        run: |
          if cuda_short_version not in ["116", "117"]:
            arch_list += " 9.0"
      - name: Define version
        run: |
          echo "BUILD_VERSION=$version${{ steps.cuda_info.outputs.CUDA_VERSION_SUFFIX }}" >> ${GITHUB_ENV}
"""

BUILD_JOIN = """\
env:
  TORCH_CUDA_ARCH_LIST: ${{ join('6.0+PTX 7.0 7.5 8.0+PTX', fromJSON(inputs.cuda_short_version) >= 118 && ' 9.0a' || '') }}
jobs:
  build:
    steps:
      - id: cuda_info
        run: |
          echo "BUILD_VERSION=$version${{ steps.cuda_info.outputs.CUDA_VERSION_SUFFIX }}" >> ${GITHUB_ENV}
"""

BUILD_NEW = """\
env:
  TORCH_CUDA_ARCH_LIST: ${{ contains(inputs.toolkit_type, 'cuda') && '7.5 8.0+PTX' || '' }}
jobs:
  build:
    steps:
      - if: contains(inputs.toolkit_type, 'cuda') && fromJSON(inputs.toolkit_short_version) >= 120 && fromJSON(inputs.toolkit_short_version) < 130
        run: |
          echo "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST 8.0 9.0a" >> ${GITHUB_ENV}

      - if: contains(inputs.toolkit_type, 'cuda') && fromJSON(inputs.toolkit_short_version) >= 130
        run: |
          echo "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST 8.0 9.0a 10.0a 12.0a" >> ${GITHUB_ENV}
      - name: Setup Runner
        uses: ./.github/actions/setup-build-cuda
      - name: Define version
        run: |
          echo "BUILD_VERSION=$version${{ steps.cuda_info.outputs.CUDA_VERSION_SUFFIX }}" >> ${GITHUB_ENV}
"""

ACTION = """\
runs:
  steps:
    - id: cuda_info
      run: |
        TORCH_CUDA_DEFAULT = "126"  # since pytorch 2.7.0
        full_version, install_script = {
          "128": ("12.8.1", "https://example/cuda_12.8.1.run"),
          "126": ("12.8.1", "https://example/cuda_12.8.1.run"),
          "118": ("11.8.0", "https://example/cuda_11.8.0.run"),
        }[cushort]
"""

CUTLASS = '''\
class FwOp(AttentionFwOpBase):
    """xFormers' MHA kernel based on CUTLASS."""

    CUDA_MAXIMUM_COMPUTE_CAPABILITY = (9, 0)
    SUPPORTED_DEVICES: Set[str] = {"cuda"}
    NAME = "cutlassF-pt"


class BwOp(AttentionBwOpBase):
    NAME = "cutlassB-pt"
'''

COMMON = '''\
class AttentionOpBase:
    CUDA_MINIMUM_COMPUTE_CAPABILITY: Tuple[int, int] = (5, 0)

    def not_supported_reasons(cls, d):
        if device_type == "cuda":
            if device_capability < cls.CUDA_MINIMUM_COMPUTE_CAPABILITY:
                reasons.append("too old")
            elif (
                cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY is not None
                and device_capability > cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY
            ):
                reasons.append(
                    f"requires device with capability <= {cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY} "
                    f"but your GPU has capability {device_capability} (too new)"
                )
'''


def test_arch_list_keeps_arch_specific_entries_and_the_highest_ptx():
    assert derive.parse_arch_list("7.5 8.0+PTX 8.0 9.0a 10.0a 12.0a") == (
        ["7.5", "8.0", "9.0a", "10.0a", "12.0a"], "8.0")
    assert derive.parse_arch_list("5.0+PTX 6.0 6.1 7.0 7.5 8.0+PTX 9.0") == (
        ["5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "9.0"], "8.0")
    assert derive.parse_arch_list("7.0;7.5") == (["7.0", "7.5"], None)


def test_yaml_matrix_upload_jobs_and_the_label_of_the_old_workflow():
    wheels = derive.parse_wheels(WHEELS_YAML)
    assert wheels.matrix.cudas == ["118", "121"] and wheels.matrix.torch == "2.2.0"
    assert wheels.matrix.built("118") == ["8-core-ubuntu", "windows-8-core"]
    assert (wheels.pypi.cushort, wheels.pypi.line) == ("121", 22)
    assert list(wheels.variants) == ["cu118"] and wheels.variants["cu118"].line == 26
    recipe = derive.parse_wheels_build(BUILD_OLD)
    assert recipe.labelled and recipe.base_line == 2
    assert derive.effective_arch_list(recipe, "121")[0] == "5.0+PTX 6.0 6.1 7.0 7.5 8.0+PTX 9.0"
    assert derive.effective_arch_list(recipe, "117")[0] == "5.0+PTX 6.0 6.1 7.0 7.5 8.0+PTX"
    toolkits = derive.parse_toolkits(BUILD_OLD, derive.WHEELS_BUILD)
    assert toolkits.default == "121" and toolkits.full["118"][0] == "11.8.0"


def test_join_of_a_string_appends_nothing():
    # GitHub's join() given a string returns it: 0.0.27's wheels carry no 9.0a
    # (their cpp_lib.json says TORCH_CUDA_ARCH_LIST "6.0+PTX 7.0 7.5 8.0+PTX").
    recipe = derive.parse_wheels_build(BUILD_JOIN)
    assert recipe.base_expression == "join"
    assert derive.effective_arch_list(recipe, "121")[0] == "6.0+PTX 7.0 7.5 8.0+PTX"


def test_python_matrix_windows_skips_and_the_appending_steps():
    wheels = derive.parse_wheels(WHEELS_PY)
    assert wheels.matrix.cudas == ["118", "126", "128"] and wheels.matrix.torch == "2.7.0"
    assert wheels.matrix.built("118") == ["8-core-ubuntu"]           # "118" < "124": Windows skipped
    assert wheels.matrix.built("126") == ["8-core-ubuntu", "windows-8-core"]
    assert wheels.pypi.cushort == "126"
    assert sorted(wheels.variants) == ["cu118", "cu126"]              # rocm6.3 is no CUDA build
    recipe = derive.parse_wheels_build(BUILD_NEW)
    assert not recipe.labelled                                          # cuda_info is a step of the action
    assert derive.effective_arch_list(recipe, "118")[0] == "7.5 8.0+PTX"
    assert derive.effective_arch_list(recipe, "126")[0] == "7.5 8.0+PTX 8.0 9.0a"
    assert derive.effective_arch_list(recipe, "130")[0] == "7.5 8.0+PTX 8.0 9.0a 10.0a 12.0a"


def test_builds_of_a_release_cite_their_lines():
    release = derive.Release("0.0.30", "v0.0.30", "a" * 40, "2025-04-28", derive.parse_wheels(WHEELS_PY),
                             derive.parse_wheels_build(BUILD_NEW), derive.parse_toolkits(ACTION, derive.ACTION))
    builds, sources, warnings = derive.builds_of(release, {"0.0.30": "==2.7.0"})
    assert not warnings
    by_index = {b["index"]: b for b in builds}
    assert set(by_index) == {"pypi", "cu118", "cu126"}
    pypi = by_index["pypi"]
    assert pypi["cuda"] == "12.6" and pypi["archs"] == ["7.5", "8.0", "9.0a"] and pypi["ptx"] == "8.0"
    assert pypi["platforms"] == ["linux-x86_64", "windows-x86_64"] and "label" not in pypi
    assert "CUDA 12.8.1 toolkit" in pypi["note"] and "torch" not in pypi["note"].split("toolkit")[-1]
    assert by_index["cu118"]["platforms"] == ["linux-x86_64"] and by_index["cu118"]["archs"] == ["7.5", "8.0"]
    ids = {s["id"] for s in sources}
    assert pypi["source"] in ids and pypi["archs_source"] == "xformers@v0.0.30:.github/workflows/wheels_build.yml#L2"
    assert all(s["commit"] == "a" * 40 and s["line"] >= 1 for s in sources)


def test_the_cutlass_operator_s_maximum_capability_is_a_quoted_inferred_rule():
    refusal = derive.parse_refusal(CUTLASS, COMMON)
    assert refusal is not None and refusal.maximum == (9, 0) and refusal.maximum_line == 4
    assert refusal.message == "requires device with capability <= (9, 0) but your GPU has capability (<major>, <minor>) (too new)"
    release = derive.Release("0.0.34", "v0.0.34", "b" * 40, "2026-01-23", None, None, None)  # type: ignore[arg-type]
    (rule,), sources = derive.rules_of(release, refusal)
    assert rule["inferred"] is True and rule["severity"] == "warning"
    assert rule["require"] == {"compute_capability": "<=9.0"}
    assert {rule["source"], *rule["also"]} == {s["id"] for s in sources}
    assert derive.parse_refusal(CUTLASS.replace("    CUDA_MAXIMUM_COMPUTE_CAPABILITY = (9, 0)\n", ""), COMMON) is None


def test_the_rendered_file_parses_and_is_sorted():
    text = derive.render([{"id": "s", "date": "2025-01-01", "line": 3}],
                         [{"id": "b", "archs": ["8.0"]}], [{"id": "r", "when": {"accelerator": "cuda"}}])
    data = tomllib.loads(text)
    assert data["package"] == "xformers" and data["rule"][0]["when"] == {"accelerator": "cuda"}
    assert text.startswith("# Written by tools/derive_xformers.py")


def test_the_bundled_file_matches_the_wheels_the_index_holds():
    """Each derived build for the package index covers exactly the platforms of
    the release's wheels in the snapshot (0.0.28 to 0.0.29.post1: Linux only,
    the workflow building CUDA 12.1 on Windows no more)."""
    data = tomllib.loads((ROOT / "data" / "derived" / "xformers.toml").read_text(encoding="utf-8"))
    tags = {}
    with (ROOT / "data" / "metadata" / "xformers.wheels.jsonl").open(encoding="utf-8") as f:
        f.readline()
        for line in f:
            record = json.loads(line)
            names = [w.get("file") or w.get("filename") for w in record.get("wheels", record.get("files", []))]
            tags[record["version"]] = {"linux-x86_64" if "linux" in n else "windows-x86_64" for n in names}
    pypi = [b for b in data["build"] if b["index"] == "pypi"]
    assert len(pypi) >= 20
    for build in pypi:
        assert set(build["platforms"]) == tags[build["releases"].lstrip("=")], build["id"]


# -- (b) stacks users reported --------------------------------------------------------

def stack(packages: dict, gpu: str, **system) -> dict:
    return {"system": {"python": "3.12", **system}, "packages": packages, "hardware": {"gpu": gpu}}


def ids(report, severity: str) -> set[str]:
    return {f.id for f in report.findings if f.severity == severity}


def xformers_findings(report) -> set[str]:
    return {f.id for f in report.findings
            if f.severity in ("error", "warning") and ("xformers" in f.id)}


def test_pascal_card_with_xformers_0_0_32_post2(db):
    """xformers 0.0.31 on builds for "7.5 8.0+PTX" only; a GTX 1080 Ti (sm_61)
    after ComfyUI's move to torch 2.8.0: "CUDA error: no kernel image is
    available for execution on the device"
    (https://github.com/Comfy-Org/ComfyUI/issues/9650, GTX 1080 Ti, Windows 10,
    torch 2.8.0+cu128; the xformers wheel of that torch is 0.0.32.post2)."""
    report = check(stack({"xformers": "0.0.32.post2", "torch": "2.8.0"}, "GTX 1080 Ti", cuda="12.8",
                         platform="windows-x86_64"), database=db)
    assert "arch:xformers==0.0.32.post2" in ids(report, "error")
    assert not xformers_findings(check(stack({"xformers": "0.0.30", "torch": "2.7.0"}, "GTX 1080 Ti",
                                             cuda="12.6", platform="windows-x86_64"), database=db))


def test_xformers_built_for_another_torch_on_a_v100(db):
    """vLLM 0.7.2 on a V100, torch 2.5.1+cu121, and the newest xformers, built for
    "PyTorch 2.6.0+cu124 (you have 2.5.1+cu121)": xFormers can't load its
    C++/CUDA extensions (https://github.com/vllm-project/vllm/issues/13116,
    Python 3.11, CUDA 12.1). The derived build says the index's 0.0.29.post2 is
    the CUDA 12.4 one; its torch pin is the metadata's."""
    report = check(stack({"vllm": "0.7.2", "torch": "2.5.1", "xformers": "0.0.29.post2"}, "V100",
                         cuda="12.1", python="3.11"), database=db)
    assert {"requires:xformers==0.0.29.post2:torch", "requires:vllm==0.7.2:xformers"} <= ids(report, "error")


def test_rtx_5070_float32_attention_with_xformers_0_0_33(db):
    """RTX 5070 (sm_120), xformers 0.0.33.post1: "No operator found for
    `memory_efficient_attention_forward` ... `cutlassF-pt` is not supported
    because: requires device with capability < (5, 0) but your GPU has
    capability (12, 0) (too new)" (https://github.com/facebookresearch/xformers/issues/1356).
    The refusal is of one operator, so the derived rule is inferred: a warning."""
    report = check(stack({"xformers": "0.0.33.post1", "torch": "2.9.0"}, "RTX 5070", cuda="12.8"), database=db)
    assert "xformers.derived.0.0.33.post1.cutlass-max-sm90" in ids(report, "warning")
    assert not ids(report, "error")


def test_rtx_5070_ti_windows_with_xformers_0_0_35(db):
    """Windows, RTX 5070 Ti (12.0), Python 3.14, torch 2.13.0+cu130, xformers
    0.0.35, float16: "`cutlassF-pt` is not supported because: requires device
    with capability <= (9, 0) but your GPU has capability (12, 0) (too new)"
    (https://github.com/YanWenKun/ComfyUI-Windows-Portable/issues/134)."""
    report = check(stack({"xformers": "0.0.35", "torch": "2.13.0+cu130"}, "RTX 5070 Ti", cuda="13.0",
                         python="3.14", platform="windows-x86_64", index="cu130"), database=db)
    assert "xformers.derived.0.0.35.cutlass-max-sm90" in ids(report, "warning")


@pytest.mark.xfail(strict=True, reason="the cu128 build's TORCH_CUDA_ARCH_LIST carries 8.0+PTX, which by the check's "
                   "model runs on sm_120; the FA3 (hopper) kernels it dispatches to fail anyway, which no derived "
                   "list states")
def test_rtx_5090_half_precision_with_xformers_0_0_30(db):
    """RTX 5090, Ubuntu 24.04, Python 3.12, torch 2.7 with CUDA 12.8, xformers
    0.0.30, float16: "CUDA error (.../flash-attention/hopper/flash_fwd_launch_template.h:175):
    no kernel image is available for execution on the device"
    (https://github.com/facebookresearch/xformers/issues/1251)."""
    report = check(stack({"xformers": "0.0.30", "torch": "2.7.0+cu128"}, "RTX 5090", cuda="12.8", index="cu128"),
                   database=db)
    assert any("xformers" in f for f in ids(report, "error"))


@pytest.mark.xfail(strict=True, reason="xformers 0.0.28.post3 carries sm_70 kernels; what refuses the V100 is the "
                   "operators' dtype checks (bf16 is only supported on A100+ GPUs), and a stack does not say the "
                   "dtype an application calls attention with")
def test_vllm_0_6_4_on_a_v100(db):
    """vLLM 0.6.4.post1, xformers 0.0.28.post3, V100: "No operator found for
    `memory_efficient_attention_forward` ... requires device with capability
    ... (7, 0) (too old)" (https://github.com/vllm-project/vllm/issues/10662)."""
    report = check(stack({"vllm": "0.6.4.post1", "xformers": "0.0.28.post3"}, "V100", cuda="12.4"), database=db)
    assert any("xformers" in f for f in ids(report, "error"))


@pytest.mark.xfail(strict=True, reason="bf16 attention on a V100: the flash and cutlass operators refuse bf16 "
                   "below sm_80 (a dtype check), which no derived fact can condition on")
def test_mistral_finetune_bf16_on_v100(db):
    """mistral-finetune on V100s, Python 3.11, bf16: "`flshattF@v2.3.6` is not
    supported because: requires device with capability > (8, 0) but your GPU
    has capability (7, 0) (too old); bf16 is only supported on A100+ GPUs"
    (https://github.com/mistralai/mistral-finetune/issues/107; flash 2.3.6 is
    xformers 0.0.23.post1's)."""
    report = check(stack({"xformers": "0.0.23.post1", "torch": "2.1.2"}, "V100", cuda="12.1", python="3.11"),
                   database=db)
    assert any("xformers" in f for f in ids(report, "error"))


def test_working_pascal_gpu_with_xformers_0_0_28_post3(db):
    """A Pascal GPU with xformers 0.0.28.post3, cutlassF-pt available
    (https://github.com/vllm-project/vllm/issues/10662#issuecomment, Isotr0py's
    xformers.info; the comment names no card: both Pascal capabilities checked)."""
    for gpu in ("P100", "GTX 1080"):
        report = check(stack({"xformers": "0.0.28.post3", "torch": "2.5.1"}, gpu, cuda="12.1"), database=db)
        assert not xformers_findings(report), gpu


def test_working_t4_with_xformers_0_0_26_post1(db):
    """Kaggle T4, torch 2.3.0+cu121, xformers 0.0.26.post1: "it runs without
    issues on T4 GPUs" (https://github.com/unslothai/unsloth/issues/813)."""
    report = check(stack({"xformers": "0.0.26.post1", "torch": "2.3.0"}, "T4", cuda="12.1", python="3.10"),
                   database=db)
    assert not xformers_findings(report) and not ids(report, "error")


def test_working_h100_with_xformers_0_0_35_cu130(db):
    """xformers 0.0.35's CUDA 13.0 wheel on Linux working (`python -m xformers.info`:
    cutlassF-pt and fa2F available), https://github.com/facebookresearch/xformers/issues/1388;
    an H100 (sm_90, where cutlassF serves) stands for the unnamed card."""
    report = check(stack({"xformers": "0.0.35", "torch": "2.10.0"}, "H100", cuda="13.0", index="cu130"),
                   database=db)
    assert not xformers_findings(report)
