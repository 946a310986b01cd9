"""compat.check: every violated constraint, as findings with IDs and sources."""

from __future__ import annotations

import pytest

import compat
from compat import check

from .conftest import EXAMPLES, base


def ids(report) -> set[str]:
    return {f.id for f in report.findings if not f.suppressed}


def by_id(report, finding_id):
    return next(f for f in report.findings if f.id == finding_id)


# -- the examples --------------------------------------------------------------


def test_working_h200_example_passes():
    report = check(EXAMPLES / "h200-vllm.toml")
    assert report.ok and report.exit_code == 0
    assert report.errors == [] and report.warnings == []
    # the range is resolved to the newest release vLLM 0.32.0 accepts
    assert report.packages["transformers"] == "5.19.0"
    # and the packages vLLM pins come along
    assert report.resolved["flashinfer-python"] == "0.7.0.post1"


def test_broken_upgrade_reports_every_problem_not_the_first():
    report = check(EXAMPLES / "broken-upgrade.toml")
    assert not report.ok and report.exit_code == 1
    assert {f.id for f in report.errors} == {
        "requires-python:vllm==0.32.0",
        "requires:vllm==0.32.0:transformers",
        "requires:vllm==0.32.0:flashinfer-python",
    }
    # the known issues of the Transformers release it names are scoped to the models they affect
    # (MoE in BF16 training, multimodal generate): a stack without [model] is not warned of them
    assert not {"transformers.ep-zero-expert-gradients", "transformers.generate-input-dict-cast"} & {f.id for f in report.findings}
    transformers = by_id(report, "requires:vllm==0.32.0:transformers")
    assert transformers.severity == "error"
    assert transformers.components == ("vllm", "transformers")
    assert transformers.layer == "metadata"
    assert "transformers>=5.16.1,<5.20.0" in transformers.message and "5.20.1" in transformers.message
    assert transformers.source is not None and "vllm 0.32.0" in transformers.source.cite()


def test_fp8_scaled_mm_on_a100_is_an_error_with_both_sources_of_the_refusal():
    # LTX-2's FP8Linear calls torch._scaled_mm (its code), PyTorch refuses it below 8.9 (its code): certain
    report = check(EXAMPLES / "ltx2-fp8-a100.toml")
    finding = by_id(report, "ltx-2.fp8-scaled-mm.compute-capability")
    assert finding.severity == "error" and finding.layer == "curated" and finding.basis is None
    assert finding.source.id == "ltx-2-code-fp8-scaled-mm" and finding.source.commit == "d151147"
    assert [s.id for s in finding.also] == ["pytorch-code-scaled-mm-device"]
    assert finding.to_dict()["also"][0]["commit"] == "960a684"
    assert "gpu" in finding.components
    assert report.exit_code == 1


def test_vllm_omni_example_runs_with_a_pre_release_warning():
    report = check(EXAMPLES / "vllm-omni-fa3-fp8.toml")
    assert report.ok
    assert "pre-release:vllm-omni==0.32.0rc1" in {f.id for f in report.warnings}
    assert "vllm-omni.candidate-0.32.0rc1" in {f.id for f in report.infos}


# -- rules of the database, one behaviour each ----------------------------------


@pytest.mark.parametrize(("gpu", "ok"), [("A100", False), ("A10G", False), ("L4", True), ("RTX 4090", True), ("H100", True), ("B200", True)])
def test_ltx2_fp8_scaled_mm_needs_sm89(gpu, ok):
    report = check(base(hardware={"gpu": gpu}, packages={"ltx-2": "1.5.0"}, options={"ltx-2": {"quantization": "fp8-scaled-mm"}}))
    assert ("ltx-2.fp8-scaled-mm.compute-capability" not in ids(report)) is ok


def test_ltx2_fp8_scaled_mm_on_a_stack_without_cuda_is_not_judged_by_the_cuda_check():
    # PyTorch's refusal is of CUDA devices: a stack that names no CUDA is outside it
    report = check({"system": {"python": "3.12"}, "packages": {"ltx-2": "1.5.0"}, "options": {"ltx-2": {"quantization": "fp8-scaled-mm"}}})
    assert "ltx-2.fp8-scaled-mm.compute-capability" not in ids(report)


def test_ltx2_fp8_scaled_mm_with_unknown_gpu_cannot_be_verified():
    report = check(base(packages={"ltx-2": "1.5.0"}, options={"ltx-2": {"quantization": "fp8-scaled-mm"}}))
    finding = by_id(report, "ltx-2.fp8-scaled-mm.compute-capability")
    assert finding.severity == "warning" and finding.kind == "unverified"
    assert report.ok


def test_ltx2_fp8_cast_runs_on_a100_with_a_note():
    report = check(base(hardware={"gpu": "A100"}, packages={"ltx-2": "1.5.0"}, options={"ltx-2": {"quantization": "fp8-cast"}}))
    assert report.ok
    assert "ltx-2.fp8-cast.storage-only" in {f.id for f in report.infos}


def test_ltx2_without_the_option_has_no_fp8_findings():
    report = check(base(hardware={"gpu": "A100"}, packages={"ltx-2": "1.5.0"}))
    assert not any(i.startswith("ltx-2.fp8") for i in ids(report))


@pytest.mark.parametrize(("gpu", "ok"), [("H100", True), ("H200", True), ("L20X", True), ("A100", False), ("B200", False), ("RTX 5090", False)])
def test_vllm_omni_fa3_fp8_runs_on_sm90_only(gpu, ok):
    report = check(
        base(
            hardware={"gpu": gpu},
            packages={"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"},
            options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}},
            model={"head_dim": 128},
        )
    )
    assert ("vllm-omni.fa3-fp8.sm90" not in ids(report)) is ok
    assert report.ok is ok


@pytest.mark.parametrize(("head_dim", "ok"), [(64, True), (128, True), (256, True), (120, False), (272, False)])
def test_vllm_omni_fa3_fp8_head_dim_limits(head_dim, ok):
    report = check(
        base(
            hardware={"gpu": "H100"},
            packages={"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"},
            options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}},
            model={"head_dim": head_dim},
        )
    )
    assert ("vllm-omni.fa3-fp8.head-dim" not in ids(report)) is ok


def test_vllm_omni_fa3_fp8_without_head_dim_is_a_warning():
    report = check(
        base(hardware={"gpu": "H100"}, packages={"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"},
             options={"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}})
    )
    assert by_id(report, "vllm-omni.fa3-fp8.head-dim").severity == "warning"


def test_vllm_omni_auto_dtype_is_not_gated():
    report = check(
        base(hardware={"gpu": "A100"}, packages={"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"},
             options={"vllm-omni": {"diffusion-kv-cache-dtype": "auto"}})
    )
    assert report.ok


def test_vllm_0_32_drops_python_3_10():
    assert "requires-python:vllm==0.32.0" in ids(check({"system": {"python": "3.10"}, "hardware": {"gpu": "H100"},
                                                         "packages": {"vllm": "0.32.0"}}))
    assert check({"system": {"python": "3.11"}, "hardware": {"gpu": "H100"}, "packages": {"vllm": "0.32.0"}}).ok


@pytest.mark.parametrize(("version", "ok"), [("5.16.1", True), ("5.19.0", True), ("5.16.0", False), ("5.20.0", False), ("5.20.2", False)])
def test_vllm_0_32_transformers_window(version, ok):
    report = check(base(packages={"vllm": "0.32.0", "transformers": version}))
    assert report.ok is ok


def test_vllm_0_32_pins_torch():
    report = check(base(packages={"vllm": "0.32.0", "torch": "2.14.1"}))
    assert "requires:vllm==0.32.0:torch" in ids(report)


def test_sglang_0_5_22_raises_python_floor_to_3_11():
    assert "requires-python:sglang==0.5.22" in ids(check({"system": {"python": "3.10"}, "packages": {"sglang": "0.5.22"}}))
    assert "requires-python:sglang==0.5.21" not in ids(check({"system": {"python": "3.10"}, "packages": {"sglang": "0.5.21"}}))


def test_sglang_0_5_22_pins_its_own_torch():
    report = check(base(packages={"sglang": "0.5.22", "torch": "2.13.0"}))
    finding = by_id(report, "requires:sglang==0.5.22:torch")
    assert "torch==2.14.1" in finding.message


def test_vllm_and_sglang_disagree_on_torch_even_when_the_stack_does_not_name_it():
    report = check(base(packages={"vllm": "0.32.0", "sglang": "0.5.22"}))
    assert not report.ok
    conflict = by_id(report, "conflict:torch")
    assert "torch==2.13.0" in conflict.message and "torch==2.14.1" in conflict.message


def test_flashinfer_0_7_2_needs_a_newer_cudnn_frontend():
    report = check(base(packages={"flashinfer-python": "0.7.2", "nvidia-cudnn-frontend": "1.30.0"}))
    assert "requires:flashinfer-python==0.7.2:nvidia-cudnn-frontend" in ids(report)


def test_flashinfer_0_7_2_wants_the_cutedsl_extra_of_cudnn_frontend():
    # the curated requirement asks for nvidia-cudnn-frontend[cutedsl]: pip and uv install the extra
    # because flashinfer asks for it, wherever else the stack names the package without it
    report = check(base(packages={"flashinfer-python": "0.7.2", "nvidia-cudnn-frontend": "1.31.0"}))
    assert "extras:flashinfer-python==0.7.2:nvidia-cudnn-frontend" not in {f.id for f in report.findings}
    assert "cuda-python" in report.resolved  # what the cutedsl extra of 1.31.0 adds
    ok = check(base(packages={"flashinfer-python": "0.7.2", "nvidia-cudnn-frontend": {"version": "1.31.0", "extras": ["cutedsl"]}}))
    assert ok.ok and ok.warnings == []


def test_flashinfer_0_7_2rc5_is_a_pre_release_not_the_release():
    report = check(base(packages={"flashinfer-python": "0.7.2rc5"}))
    assert {"pre-release:flashinfer-python==0.7.2rc5", "flashinfer.0.7.2rc5-is-pre-release"} <= {f.id for f in report.warnings}


def test_range_does_not_pick_a_pre_release_unless_asked():
    report = check(base(packages={"flashinfer-python": ">=0.7.2,<0.7.3"}))
    assert report.packages["flashinfer-python"] == "0.7.2.post1"
    # PEP 440: "<0.7.2" excludes the pre-releases of 0.7.2 itself
    report = check(base(packages={"flashinfer-python": ">=0.7.2rc1,<=0.7.2rc5"}))
    assert report.packages["flashinfer-python"] == "0.7.2rc5"


def test_range_the_database_has_no_release_for_is_a_warning_not_a_conflict():
    report = check(base(packages={"flashinfer-python": ">=0.1,<0.2"}))
    assert report.ok
    assert by_id(report, "unknown-release:flashinfer-python").severity == "warning"


def test_range_resolves_within_the_other_packages_bounds():
    report = check(base(packages={"vllm": "0.32.0", "transformers": ">=5.16"}))
    assert report.ok and report.packages["transformers"] == "5.19.0"


def test_range_with_no_compatible_release_is_an_error():
    report = check(base(packages={"vllm": "0.32.0", "transformers": ">=5.20"}))
    assert not report.ok
    finding = by_id(report, "requires:vllm==0.32.0:transformers")
    assert "the stack's transformers>=5.20 admits no such release" in finding.message


# -- stack-level findings --------------------------------------------------------


def test_untracked_package_is_a_warning_and_checked_through_metadata():
    report = check(base(packages={"boto3": "1.40.0"}))
    assert by_id(report, "untracked:boto3").severity == "warning"


def test_untracked_package_pin_is_checked_against_requirements():
    # vLLM 0.32.0 requires requests>=2.33.0
    report = check(base(packages={"vllm": "0.32.0", "requests": "2.30.0"}))
    assert "requires:vllm==0.32.0:requests" in ids(report)


def test_external_package_takes_part_without_a_warning():
    report = check(base(packages={"vllm": "0.32.0", "requests": {"version": "2.33.1", "external": True}}))
    assert report.ok and report.warnings == []


def test_marker_excludes_requirements_for_other_platforms():
    # protobuf==7.36.1 applies only on s390x
    report = check(base(packages={"vllm": "0.32.0", "protobuf": "6.33.5"}))
    assert "requires:vllm==0.32.0:protobuf" not in ids(report)


def test_unknown_release_of_a_tracked_package_is_a_warning_not_a_conflict():
    report = check(base(packages={"transformers": "5.99.0"}))
    assert by_id(report, "unknown-release:transformers==5.99.0").severity == "warning"
    assert report.ok


def test_requirement_only_a_release_absent_from_the_index_meets_is_an_error():
    # vllm 0.34.0 pins flashinfer-python==0.7.3, which the index never had (its snapshot lists every release)
    report = check(base(packages={"vllm": "0.34.0"}))
    missing = by_id(report, "missing:vllm==0.34.0:flashinfer-python")
    assert missing.severity == "error" and "flashinfer-python==0.7.3" in missing.message
    # and a harmless range beside it turns it into no range conflict
    beside = check(base(packages={"vllm": "0.34.0", "flashinfer-python": ">=0.7"}))
    assert "missing:vllm==0.34.0:flashinfer-python" in ids(beside)
    assert "requires:vllm==0.34.0:flashinfer-python" not in ids(beside)


def test_unknown_option_is_a_warning():
    # LTX-2's command line is not listed flag by flag: a flag the database does not know may exist
    report = check(base(packages={"ltx-2": "1.5.0"}, options={"ltx-2": {"no-such-flag": True}}))
    assert by_id(report, "unknown-option:ltx-2:no-such-flag").severity == "warning"


def test_a_flag_a_fully_listed_release_lacks_is_an_error():
    report = check(base(packages={"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"}, options={"vllm-omni": {"no-such-flag": True}}))
    assert by_id(report, "option-unknown:vllm-omni:no-such-flag").severity == "error"


def test_option_value_outside_known_values_is_a_warning():
    report = check(base(packages={"ltx-2": "1.5.0"}, options={"ltx-2": {"quantization": "int3"}}))
    assert by_id(report, "option-value:ltx-2:quantization").severity == "warning"


# -- strict and ignore -----------------------------------------------------------


def test_strict_makes_warnings_fail():
    stack = base(packages={"boto3": "1.40.0"})
    assert check(stack).ok
    assert not check(stack, strict=True).ok
    assert not check({**stack, "compat": {"strict": True}}).ok


def test_ignored_finding_is_listed_as_suppressed():
    report = check(EXAMPLES / "ltx2-fp8-a100.toml", ignore=["ltx-2.fp8-scaled-mm.*"])
    assert report.ok
    finding = by_id(report, "ltx-2.fp8-scaled-mm.compute-capability")
    assert finding.suppressed
    assert report.to_dict()["findings"][0]["suppressed"] is True


def test_ignore_in_the_stack_file():
    report = check({**base(packages={"numpy": "2.3.0"}), "compat": {"ignore": ["untracked:numpy"], "strict": True}})
    assert report.ok


# -- the report --------------------------------------------------------------------


def test_json_report_has_the_contract_fields():
    data = check(EXAMPLES / "broken-upgrade.toml").to_dict()
    assert data["schema"] == 1 and data["ok"] is False
    assert data["stack"]["packages"] == {"vllm": "0.32.0", "transformers": "5.20.1", "flashinfer-python": "0.7.2"}
    for finding in data["findings"]:
        assert {"id", "severity", "message", "components", "source"} <= set(finding)
        assert isinstance(finding["source"], str)


def test_report_accepts_a_stack_object(db):
    stack = compat.load_stack(EXAMPLES / "h200-vllm.toml", db)
    assert compat.check(stack, database=db).ok


def test_findings_are_deterministic():
    first = check(EXAMPLES / "broken-upgrade.toml").to_dict()
    second = check(EXAMPLES / "broken-upgrade.toml").to_dict()
    assert first == second
