"""FlashInfer's derived facts (tools/derive_flashinfer.py, data/derived/flashinfer-python.toml).

(a) The script's parsers, on small texts written here (no mirror, no network).
(b) Stacks users reported in the upstream trackers, each as the user described it:
    the failures the derived facts (or the hand-written ones beside them) must
    catch, those they cannot (xfail, with the reason), and working setups that
    must stay free of FlashInfer errors.
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
SM12_RULE = "flashinfer-python.derived.0.6.7.sm12x-cuda-floor"
SM75_RULE = "flashinfer.jit.sm75-floor"  # hand-written, data/constraints/flashinfer-python.toml


tool = load_tool("derive_flashinfer")


# -- (a) the parsers ----------------------------------------------------------------------

CONTEXT = '''\
import os
import torch


class CompilationContext:
    @staticmethod
    def _normalize_cuda_arch(major: int, minor: int) -> tuple[int, str]:
        """Normalize.

        SM 12.x -> 'f' suffix. Requires CUDA >= 12.9.
        """
        if major == 9:
            return (major, str(minor) + "a")
        elif major == 12:
            from flashinfer.jit.cpp_ext import is_cuda_version_at_least

            if is_cuda_version_at_least("12.9"):
                return (major, "0f")
            else:
                raise RuntimeError("SM 12.x requires CUDA >= 12.9")
        elif major >= 10:
            return (major, str(minor) + "a")
        return (major, str(minor))

    def __init__(self):
        self.TARGET_CUDA_ARCHS = set()
        if "FLASHINFER_CUDA_ARCH_LIST" in os.environ:
            for arch in os.environ["FLASHINFER_CUDA_ARCH_LIST"].split(" "):
                pass
        else:
            try:
                for device in range(torch.cuda.device_count()):
                    major, minor = torch.cuda.get_device_capability(device)
                    self.TARGET_CUDA_ARCHS.add(self._normalize_cuda_arch(major, minor))
            except Exception as e:
                logger.warning(f"Failed to get device capability: {e}.")
'''

OLD_CONTEXT = '''\
class CompilationContext:
    def __init__(self):
        self.TARGET_CUDA_ARCHS = set()
        try:
            for device in range(torch.cuda.device_count()):
                major, minor = torch.cuda.get_device_capability(device)
                if major >= 9:
                    minor = str(minor) + "a"
                self.TARGET_CUDA_ARCHS.add((int(major), str(minor)))
        except Exception as e:
            logger.warning(f"Failed to get device capability: {e}.")
'''

CORE = '''\
def check_cuda_arch():
    eligible = False
    for major, minor in current_compilation_context.TARGET_CUDA_ARCHS:
        if major >= 8:
            eligible = True

    # Raise error only if all detected architectures are lower than sm75
    if not eligible:
        raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")


def gen_jit_spec(
    name,
    sources,
):
    check_cuda_arch()
    return JitSpec(name, sources)
'''

WORKFLOW = '''\
jobs:
  build-flashinfer-jit-cache:
    strategy:
      matrix:
        cuda: ["12.8", "12.9", "13.0"]
        arch: ['x86_64', 'aarch64']
    steps:
      - name: Build wheel in container
        env:
          FLASHINFER_CUDA_ARCH_LIST: ${{ matrix.cuda < '12.9' && '7.5 8.0 9.0a 12.0a' || (matrix.cuda < '13.0' && \
'7.5 8.0 9.0a 12.0f' || (matrix.arch == 'aarch64' && '7.5 8.0 9.0a 11.0a 12.0f' || '7.5 8.0 9.0a 12.0f')) }}
'''


def test_the_sm12_cuda_floor_is_read_with_its_line_and_the_warning_that_swallows_it():
    [floor] = tool.parse_cuda_floors(CONTEXT)
    assert (floor.majors, floor.label, floor.cuda) == (">=12.0,<13.0", "12", "12.9")
    assert floor.message.text == "SM 12.x requires CUDA >= 12.9"
    assert CONTEXT.splitlines()[floor.message.line - 1].strip() == 'raise RuntimeError("SM 12.x requires CUDA >= 12.9")'
    assert floor.caught is not None and floor.caught.text == "Failed to get device capability: {e}."
    assert "logger.warning" in CONTEXT.splitlines()[floor.caught.line - 1]
    assert floor.env_bypass


def test_a_context_without_a_cuda_test_states_no_floor():
    assert tool.parse_cuda_floors(OLD_CONTEXT) == []
    assert tool.parse_cuda_floors("") == []


def test_check_cuda_arch_is_read_with_the_call_in_gen_jit_spec():
    check_ = tool.parse_arch_check(CORE)
    assert check_.message.text == "FlashInfer requires GPUs with sm75 or higher"
    assert check_.raises_when_empty
    assert CORE.splitlines()[check_.message.line - 1].strip().startswith("raise RuntimeError")
    assert CORE.splitlines()[check_.call.line - 1].strip() == "check_cuda_arch()"


def test_the_jit_cache_arch_expression_is_evaluated_per_cuda_and_cpu():
    line, lists = tool.parse_jit_cache_archs(WORKFLOW)
    assert "FLASHINFER_CUDA_ARCH_LIST" in WORKFLOW.splitlines()[line - 1]
    assert lists[("12.8", "x86_64")] == ["7.5", "8.0", "9.0a", "12.0a"]
    assert lists[("12.9", "aarch64")] == ["7.5", "8.0", "9.0a", "12.0f"]
    assert lists[("13.0", "aarch64")] == ["7.5", "8.0", "9.0a", "11.0a", "12.0f"]
    assert lists[("13.0", "x86_64")] == ["7.5", "8.0", "9.0a", "12.0f"]


def _release(version, context=CONTEXT, core=CORE):
    release = tool.Release(version, f"v{version}", f"{version.replace('.', '')[:1]}" * 40, "2026-03-24")
    release.floors = tool.parse_cuda_floors(context)
    release.arch_check = tool.parse_arch_check(core)
    return release


def test_runs_end_at_a_missing_tag_and_rules_cite_both_ends():
    releases = [_release("0.6.6", OLD_CONTEXT), _release("0.6.7"), _release("0.6.8"), None, _release("0.6.10")]
    sources, rules = tool.facts(releases)
    assert [r["releases"] for r in rules] == [">=0.6.7,<=0.6.8", "==0.6.10"]
    first = rules[0]
    assert first["when"]["compute_capability"] == ">=12.0,<13.0"
    assert first["when"]["not"] == {"env": {"FLASHINFER_CUDA_ARCH_LIST": True}}
    assert first["require"] == {"cuda": ">=12.9"}
    assert "FlashInfer requires GPUs with sm75 or higher" in first["message"]
    ids = {s["id"] for s in sources}
    assert first["source"] in ids and set(first["also"]) <= ids
    assert any(s["ref"] == "v0.6.7" for s in sources) and any(s["ref"] == "v0.6.8" for s in sources)
    for source in sources:
        assert source["url"].endswith(f"/{source['path']}#L{source['line']}")


def test_the_written_file_parses_and_says_where_each_fact_was_read(tmp_path):
    import tomllib

    sources, rules = tool.facts([_release("0.6.7"), _release("0.6.8")])
    text = tool.render(sources, rules, ["0.6.7", "0.6.8"], ["0.7.0"])
    assert text.startswith("# Written by tools/derive_flashinfer.py from flashinfer-ai/flashinfer")
    data = tomllib.loads(text)
    assert data["package"] == "flashinfer-python" and data["tool"] == "tools/derive_flashinfer.py"
    assert [r["id"] for r in data["rule"]] == [SM12_RULE]
    assert tool.render(sources, rules, ["0.6.7", "0.6.8"], ["0.7.0"]) == text  # deterministic


def test_the_database_file_is_the_scripts_output():
    import tomllib

    data = tomllib.loads((ROOT / "data" / "derived" / "flashinfer-python.toml").read_text())
    assert data["schema"] == 1 and data["package"] == "flashinfer-python"
    sources = {s["id"]: s for s in data["source"]}
    for rule in data["rule"]:
        assert rule["id"].startswith("flashinfer-python.derived.")
        for cited in [rule["source"], *rule.get("also", [])]:
            assert len(sources[cited]["commit"]) == 40 and sources[cited]["line"] >= 1


# -- (b) stacks users reported -------------------------------------------------------------


def stack(packages: dict, gpu: str | None, cuda: str | None, python: str = "3.12", **extra) -> dict:
    system = {"python": python, **extra.pop("system", {})}
    if cuda is not None:
        system["cuda"] = cuda
    out: dict = {"system": system, "packages": packages, **extra}
    if gpu is not None:
        out["hardware"] = {"gpu": gpu}
    return out


def errors(report) -> set[str]:
    return {f.id for f in report.errors}


def flashinfer_findings(report, severity: str) -> set[str]:
    return {f.id for f in report.findings if f.severity == severity and f.id.startswith("flashinfer")}


@pytest.mark.parametrize("version", ["0.6.11.post1", "0.6.11.post2", "0.6.11.post3", "0.6.12"])
def test_rtx_5090_with_cuda_12_8_and_flashinfer_0_6_12(db, version):
    """https://github.com/flashinfer-ai/flashinfer/issues/3675 (and its twin #3674): an RTX 5090,
    CUDA 12.8, Python 3.12, vLLM-Omni's sampler -> "RuntimeError: FlashInfer requires GPUs with
    sm75 or higher" from check_cuda_arch. The traceback's lines (sampling.py 1820, jit/core.py
    413 and 108) are those of flashinfer 0.6.11.post1 to 0.6.12 only; each is checked."""
    report = check(stack({"flashinfer-python": version}, "RTX 5090", "12.8"), database=db)
    assert SM12_RULE in errors(report)
    message = next(f.message for f in report.errors if f.id == SM12_RULE)
    assert "FlashInfer requires GPUs with sm75 or higher" in message


def test_the_same_5090_with_flashinfer_arch_list_set_is_not_judged(db):
    """#3675's workaround: FLASHINFER_CUDA_ARCH_LIST replaces the detection that drops the GPU."""
    report = check(stack({"flashinfer-python": "0.6.12"}, "RTX 5090", "12.8",
                         env={"FLASHINFER_CUDA_ARCH_LIST": "12.0a"}), database=db)
    assert SM12_RULE not in errors(report)


@pytest.mark.xfail(strict=True, reason="FlashInfer reads the CUDA of nvcc (12.8 here) before PyTorch's; compat's "
                   "[system] cuda is the CUDA the wheels target (torch 2.13.0 from the index: 13.0), and no stack "
                   "key holds the local toolkit's version")
def test_rtx_5090_vllm_0_27_1_with_a_cuda_12_8_toolkit(db):
    """https://github.com/vllm-project/vllm/issues/50705 (comment of 2026-08-21): RTX 5090, driver
    595.71.05, nvcc 12.8.93, vLLM 0.27.1, flashinfer-python 0.6.16.post3, torch 2.13.0:
    `vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8` crashes in FlashInfer's JIT
    ("SM 12.x requires CUDA >= 12.9")."""
    report = check(stack({"flashinfer-python": "0.6.16.post3", "torch": "2.13.0"}, "RTX 5090", "13.0",
                         system={"driver": "595.71.05"}), database=db)
    assert SM12_RULE in errors(report)


@pytest.mark.xfail(strict=True, reason="vLLM 0.14.1 pins flashinfer-python 0.5.3, whose CompilationContext has no "
                   "CUDA gate for SM 12.x (it keeps (12, '0a')); the report does not say what emptied the targets")
def test_rtx_5090_vllm_0_14_1_torch_2_9_1_cu128(db):
    """https://github.com/vllm-project/vllm/issues/42393: RTX 5090, driver 595.58.03, Python 3.12.3,
    torch 2.9.1+cu128, vLLM 0.14.1: "RuntimeError: FlashInfer requires GPUs with sm75 or higher"
    when the server starts."""
    report = check(stack({"flashinfer-python": "0.5.3", "torch": "2.9.1+cu128"}, "RTX 5090", "12.8"), database=db)
    assert flashinfer_findings(report, "error")


@pytest.mark.xfail(strict=True, reason="flashinfer 0.6.18 has no tag in the mirror (it ends at v0.6.18rc7), so no fact "
                   "is derived for it; and the toolkit (nvcc 12.8) differs from the wheels' CUDA (13.2)")
def test_rtx_pro_6000_flashinfer_0_6_18_with_nvcc_12_8(db):
    """https://github.com/flashinfer-ai/flashinfer/pull/3633 (comment of 2026-09-07): RTX PRO 6000
    Blackwell Server Edition, driver 580.173.02, flashinfer-python 0.6.18, torch 2.13.0+cu132, a
    CUDA 12.8.1 toolkit on CUDA_HOME/PATH: every nvcc JIT entry fails ("No supported CUDA
    architectures found for major versions [12]", "FlashInfer requires GPUs with sm75 or higher")."""
    report = check(stack({"flashinfer-python": "0.6.18"}, "RTX PRO 6000 Blackwell Server Edition", "13.2"),
                   database=db)
    assert flashinfer_findings(report, "error")


def test_v100_with_flashinfer_built_from_source(db):
    """https://github.com/flashinfer-ai/flashinfer/issues/1107: Tesla V100-SXM2-32GB, torch CUDA 12.6,
    FlashInfer installed from source (June 2025: the 0.2.5 line) -> "SingleDecodeWithKVCache
    kernel launch failed ... no kernel image is available". The hand-written sm75 floor
    (checked at every tag by the script) warns; it is inferred, so not an error."""
    report = check(stack({"flashinfer-python": "0.2.5"}, "V100 32GB", "12.6"), database=db)
    assert SM75_RULE in flashinfer_findings(report, "warning")


@pytest.mark.xfail(strict=True, reason="sm87 passes check_cuda_arch; MLC-LLM compiled with no GPU in the targets "
                   "(the workaround sets FLASHINFER_CUDA_ARCH_LIST=8.7), which no fact can see")
def test_jetson_orin_with_mlc_llm(db):
    """https://github.com/flashinfer-ai/flashinfer/issues/2579: Jetson AGX Orin (sm87), Ubuntu 22.04,
    MLC-LLM's `mlc_llm compile` stops with FlashInfer's "not sm75 or higher" error (February 2026:
    flashinfer 0.6.3)."""
    report = check(stack({"flashinfer-python": "0.6.3"}, "Jetson AGX Orin", "12.6",
                         system={"platform": "linux-aarch64"}), database=db)
    assert flashinfer_findings(report, "error")


@pytest.mark.xfail(strict=True, reason="the kernels came from vLLM's own AOT build of FlashInfer in its Docker image "
                   "(the architecture list is vLLM's Dockerfile's, not a FlashInfer file); flashinfer-python from "
                   "the index is JIT and compiles for the GPU present")
def test_rtx_50_series_vllm_docker_with_flashinfer_0_2_6_post1(db):
    """https://github.com/vllm-project/vllm/issues/19810: vLLM's image after the update to FlashInfer
    0.2.6.post1 (CUDA 12.8.1) broke RTX 50xx / RTX PRO (SM 120): the FlashInfer sampler
    (VLLM_USE_FLASHINFER_SAMPLER=1, the default) fails; the image of 10 June still worked."""
    report = check(stack({"flashinfer-python": "0.2.6.post1"}, "RTX 5090", "12.8"), database=db)
    assert flashinfer_findings(report, "error")


@pytest.mark.xfail(strict=True, reason="attention sinks on SM120 are refused by vLLM's FlashInfer backend selection "
                   "(an engine option and a model feature), not by flashinfer-python's own code")
def test_gpt_oss_on_rtx_pro_6000_with_the_flashinfer_backend_forced(db):
    """https://github.com/vllm-project/vllm/issues/40153: GPT-OSS-20B on an RTX PRO 6000 (SM120), vLLM
    0.17.0, flashinfer-python 0.6.4, torch 2.10.0 (CUDA 12.8 libraries): forcing FLASHINFER fails
    with "sink setting not supported"."""
    report = check(stack({"flashinfer-python": "0.6.4", "torch": "2.10.0"},
                         "RTX PRO 6000 Blackwell Workstation Edition", "12.8"), database=db)
    assert flashinfer_findings(report, "error")


@pytest.mark.xfail(strict=True, reason="a module-level bug (jit topk/norm hard-code sm89 nvcc flags) in a release "
                   "after the mirror's last tag; no fact of a refusal")
def test_rtx_3080_norm_module_without_sm86_kernels(db):
    """https://github.com/flashinfer-ai/flashinfer/issues/5355 (comment of 2026-09-20): on an RTX 3080
    (sm_86) `flashinfer.norm.rmsnorm` fails with cudaErrorNoKernelImageForDevice (209) while the
    RTX 4080 SUPER (sm_89) of the same box works (flashinfer 0.6.18 era)."""
    report = check(stack({"flashinfer-python": "0.6.18"}, "RTX 3080", "12.8"), database=db)
    assert flashinfer_findings(report, "error")


# -- working setups -----------------------------------------------------------------------


def test_dual_dgx_spark_gb10_cuda_13_0_flashinfer_0_6_17(db):
    """https://github.com/sgl-project/sglang/pull/36806 (comment of 2026-08-28): 2x NVIDIA GB10
    (SM121), PyTorch 2.13.0+cu130, CUDA 13.0, driver 580.173.02, FlashInfer 0.6.17: a full
    two-node run works. CUDA 13.0 meets the SM 12.x floor."""
    report = check(stack({"flashinfer-python": "0.6.17"}, "DGX Spark GB10", "13.0",
                         system={"platform": "linux-aarch64", "driver": "580.173.02"}), database=db)
    assert not flashinfer_findings(report, "error")
    assert SM12_RULE not in {f.id for f in report.findings}


def test_rtx_pro_6000_vllm_0_17_flashinfer_0_6_4_cuda_12_8(db):
    """https://github.com/vllm-project/vllm/issues/40153: the same RTX PRO 6000 with vLLM 0.17.0,
    flashinfer-python 0.6.4 and the CUDA 12.8 libraries serves GPT-OSS-20B when vLLM picks its own
    backend (TRITON_ATTN): 0.6.4 predates the SM 12.x CUDA gate (first in 0.6.7)."""
    report = check(stack({"flashinfer-python": "0.6.4"}, "RTX PRO 6000 Blackwell Workstation Edition", "12.8"),
                   database=db)
    assert not flashinfer_findings(report, "error")


def test_rtx_2080_with_flashinfer_0_5_3(db):
    """https://github.com/sgl-project/mini-sglang/issues/128: on an RTX 2080 (sm75) mini-sglang
    works after `uv pip install flashinfer-python==0.5.3`; sm75 is FlashInfer's floor, not below it."""
    report = check(stack({"flashinfer-python": "0.5.3"}, "RTX 2080", "12.8"), database=db)
    assert not flashinfer_findings(report, "error") and not flashinfer_findings(report, "warning")


def test_rtx_5090_with_cuda_12_9_and_flashinfer_0_6_12(db):
    """The fix users of #3675 and vllm-project/vllm#50705 report: the same RTX 5090 with a CUDA 12.9
    toolkit ("With nvcc 12.9 on the same box the same modules compile and run", flashinfer PR #3633)."""
    report = check(stack({"flashinfer-python": "0.6.12"}, "RTX 5090", "12.9"), database=db)
    assert SM12_RULE not in {f.id for f in report.findings}


@pytest.mark.parametrize(("version", "judged"), [("0.6.6", False), ("0.6.7", True), ("0.6.8rc1", True),
                                                 ("0.6.17", True), ("0.6.18rc10", False)])
def test_the_sm12_floor_covers_the_tags_that_state_it_and_no_other(db, version, judged):
    """v0.6.6 has no CUDA gate for SM 12.x; v0.6.7 to v0.6.17 (pre-releases too) state it; 0.6.18rc10
    has no tag in the mirror, so nothing is said of it."""
    report = check(stack({"flashinfer-python": version}, "RTX 5090", "12.8"), database=db)
    assert (SM12_RULE in errors(report)) is judged
