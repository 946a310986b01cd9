"""Stacks as users described them when their installs broke, against the
bundled database: each must fail for the reason the user hit, and its
working neighbour must pass.

The causes live outside Requires-Dist: the CUDA a build was made with, the
GPU architectures it carries, packages that move in lockstep, the platform
and C library, releases that do not exist, the dependencies of the
dependencies, releases older than the newest few.
"""

from __future__ import annotations

import pytest

from compat import CompatError, check, load_stack


def stack(packages: dict, gpu: str | None = "H100", **system) -> dict:
    out: dict = {"system": {"python": "3.12", **system}, "packages": packages}
    if gpu is not None:
        out["hardware"] = {"gpu": gpu}
    return out


def errors(report) -> set[str]:
    return {f.id for f in report.errors}


# -- which CUDA a wheel was built for ---------------------------------------------------

def test_torch_as_pip_freeze_prints_it_is_a_known_release(db):
    report = check(stack({"torch": "2.10.0+cu130"}, cuda="13.0", driver="580.95.05"), database=db)
    assert report.ok and not any(f.id.startswith("unknown-release") for f in report.findings)


def test_index_torch_2_11_on_a_cuda_12_8_stack_with_driver_570(db):
    report = check(stack({"torch": "2.11.0"}, cuda="12.8", driver="570.133.20"), database=db)
    assert {"build-cuda:torch==2.11.0", "driver:torch==2.11.0"} <= errors(report)
    fixed = check(stack({"torch": "2.11.0+cu128"}, cuda="12.8", driver="570.133.20"), database=db)
    assert fixed.ok, [f.message for f in fixed.errors]


def test_a_cuda_13_vllm_wheel_in_a_cuda_12_stack(db):
    report = check(stack({"vllm": "0.32.0"}, cuda="12.8", driver="570.133.20"), database=db)
    assert "build-cuda:vllm==0.32.0" in errors(report)
    assert "build-cuda:vllm==0.32.0" not in errors(check(stack({"vllm": "0.32.0+cu129"}, cuda="12.9"), database=db))


# -- which GPU architectures a build carries ------------------------------------------------

def test_a_50_series_card_with_a_torch_build_without_sm_120(db):
    report = check(stack({"torch": "2.10.0+cu126"}, gpu="RTX 5090", cuda="12.6"), database=db)
    assert "arch:torch==2.10.0" in errors(report)
    assert check(stack({"torch": "2.10.0+cu128"}, gpu="RTX 5090", cuda="12.8"), database=db).ok


def test_volta_left_torch_2_11_cuda_12_8_builds(db):
    # pytorch#172352: 2.11 dropped Volta from its CUDA 12.8 build; 2.10's still has it
    assert "arch:torch==2.11.0" in errors(check(stack({"torch": "2.11.0+cu128"}, gpu="V100", cuda="12.8"), database=db))
    assert check(stack({"torch": "2.10.0+cu128"}, gpu="V100", cuda="12.8"), database=db).ok


def test_jetson_thor_with_vllm_0_19_cuda_13(db):
    data = stack({"vllm": "0.19.0+cu130"}, gpu=None, cuda="13.0", platform="linux-aarch64")
    data["hardware"] = {"compute_capability": "11.0"}
    report = check(data, database=db)
    assert "vllm.jetson-thor.cu130-no-sm110" in {f.id for f in report.warnings}


def test_vllm_on_a_v100_with_torch_left_open_names_torch_s_kernels_as_the_cause(db):
    # vLLM 0.32.0 pins torch 2.13.0, whose index build carries no Volta kernels; the stack names no torch
    report = check(stack({"vllm": "0.32.0"}, gpu="V100", cuda="13.0"), database=db)
    finding = next(f for f in report.errors if f.id == "arch:torch==2.13.0")
    assert "which vllm 0.32.0 requires" in finding.message and "V100 is sm_70" in finding.message
    assert "vllm 0.32.0 requires torch==2.13.0" in report.explanation.text()
    assert "V100 is sm_70" in report.explanation.text()
    assert not any(f.id == "unresolvable" for f in report.findings)
    assert check(stack({"vllm": "0.32.0"}, gpu="H100", cuda="13.0"), database=db).ok


def test_a_torch_range_on_an_mi300x_says_its_builds_run_on_nvidia_gpus(db):
    report = check(stack({"torch": ">=2.10"}, gpu="MI300X", rocm="6.4"), database=db)
    causes = [f for f in report.errors if f.id.startswith("accelerator:torch==")]
    assert causes and all("which the stack's torch>=2.10 admits" in f.message for f in causes)
    assert "wheel:torch" not in errors(report)  # the reasons replace the bare "none can run here"
    assert "the stack runs on ROCm" in report.explanation.text()
    assert check(stack({"torch": ">=2.11,<2.14"}, gpu="MI300X", rocm="7.2", index="rocm7.2"), database=db).ok


def test_a_finding_on_an_inferred_compute_capability_says_so(db):
    # NVIDIA's tables do not list the B100: its 10.0 is the B200's chip
    options = {"options": {"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}, "model": {"head_dim": 128}}
    packages = {"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"}
    b100 = check({**stack(packages, gpu="B100", cuda="13.0"), **options}, database=db)
    finding = next(f for f in b100.errors if f.id == "vllm-omni.fa3-fp8.sm90")
    assert "B100's compute capability 10.0 is not in NVIDIA's tables" in finding.basis
    b200 = check({**stack(packages, gpu="B200", cuda="13.0"), **options}, database=db)
    assert next(f for f in b200.errors if f.id == "vllm-omni.fa3-fp8.sm90").basis is None



def test_a_range_whose_newest_torch_is_a_cuda_13_build_says_what_pip_installs(db):
    # pip and uv take the newest torch the range admits, a CUDA 13 build, on a CUDA 12.8 machine;
    # the check judges the newest that fits, and says which one to pin
    report = check(stack({"torch": ">=2.6"}, gpu="V100", cuda="12.8", driver="570.86"), database=db)
    (finding,) = [f for f in report.warnings if f.id.startswith("passed-over:torch==")]
    newest = max(v for v in db.component("torch").releases if not v.is_prerelease)
    assert finding.id == f"passed-over:torch=={newest}" and report.packages["torch"] == "2.10.0"
    assert "the stack says CUDA 12.8" in finding.message and "pin torch==2.10.0" in finding.message
    assert check(stack({"torch": "2.10.0"}, gpu="V100", cuda="12.8", driver="570.86"), database=db).ok
    strict = check({**stack({"torch": ">=2.6"}, gpu="V100", cuda="12.8", driver="570.86"),
                    "compat": {"strict": True}}, database=db)
    assert strict.exit_code == 1


def test_a_range_whose_newest_release_fits_says_nothing_more(db):
    report = check(stack({"torch": ">=2.12"}, gpu="H100", cuda="13.0", driver="580.95.05"), database=db)
    assert report.ok and not any(f.id.startswith("passed-over:") for f in report.findings)


def test_vllm_left_open_on_a_machine_without_a_gpu_fails_with_every_release_it_admits(db):
    # every wheel of vLLM on the index is a CUDA build (read: derived/vllm.archs.toml), which needs an
    # NVIDIA GPU: no release the range admits runs, and the finding names the newest and the others
    report = check(stack({"vllm": ">=0.15"}, gpu=None), database=db)
    finding = next(f for f in report.errors if f.id == "accelerator:vllm==0.34.0")
    assert "which needs an NVIDIA GPU; the stack has no GPU" in finding.message
    assert "0.20.0 likewise" in finding.message and not report.ok

# -- packages that move in lockstep ----------------------------------------------------------

def test_flashinfer_cubin_behind_flashinfer_python(db):
    report = check(stack({"flashinfer-python": "0.7.2", "flashinfer-cubin": "0.6.13"}, cuda="13.0"), database=db)
    assert "flashinfer.cubin.lockstep" in errors(report)


def test_vllm_omni_with_a_vllm_of_another_minor(db):
    report = check(stack({"vllm-omni": "0.30.0", "vllm": "0.32.0"}, cuda="13.0"), database=db)
    assert "vllm-omni.vllm.lockstep" in errors(report)


# -- platform and accelerator ----------------------------------------------------------------

def test_vllm_on_a_rocm_stack_is_not_the_index_build(db):
    report = check(stack({"vllm": "0.32.0"}, gpu="MI300X", rocm="6.4"), database=db)
    assert "accelerator:vllm==0.32.0" in errors(report)


def test_vllm_without_a_gpu(db):
    assert "accelerator:vllm==0.32.0" in errors(check(stack({"vllm": "0.32.0"}, gpu=None), database=db))


def test_an_mi300x_with_cuda_is_bad_input(db):
    with pytest.raises(CompatError, match="AMD GPU"):
        load_stack(stack({"vllm": "0.32.0"}, gpu="MI300X", cuda="13.0"), db)


def test_a_gh200_on_the_default_x86_64_platform_is_flagged(db):
    # a Grace Hopper superchip's host CPU is the Arm-based Grace: its stack is linux-aarch64
    report = check(stack({"vllm": "0.32.0"}, gpu="GH200", cuda="13.0"), database=db)
    finding = next(f for f in report.errors if f.id == "platform:gpu")
    assert 'platform = "linux-aarch64"' in finding.message and "not given" in finding.message
    assert "Grace" in finding.source.title
    assert check(stack({"vllm": "0.32.0"}, gpu="GH200", cuda="13.0", platform="linux-aarch64"), database=db).ok


# -- releases that do not exist ----------------------------------------------------------------

def test_a_vllm_release_nobody_published_gets_no_vllm_rules(db):
    report = check(stack({"vllm": "99.0.0"}, cuda="13.0"), database=db)
    assert any(f.id == "unknown-release:vllm==99.0.0" for f in report.warnings)
    assert not any(f.id.startswith("vllm.") for f in report.findings)
    assert not check(stack({"vllm": "99.0.0"}, cuda="13.0"), database=db, require_known=True).ok


def test_vllm_99_names_the_age_of_the_snapshot(db):
    report = check(stack({"vllm": "99.0.0"}, cuda="13.0"), database=db)
    warning = next(f for f in report.warnings if f.id == "unknown-release:vllm==99.0.0")
    assert str(db.component("vllm").snapshot_taken) in warning.message and "db sync" in warning.message


def test_vllm_0_34_pins_a_flashinfer_the_index_never_had(db):
    report = check(stack({"vllm": "0.34.0", "flashinfer-python": ">=0.7"}, cuda="13.0"), database=db)
    assert "missing:vllm==0.34.0:flashinfer-python" in errors(report)
    assert not any("admits no such release" in f.message for f in report.errors)


# -- platform and C library ------------------------------------------------------------------

@pytest.mark.parametrize("platform,gpu", [("windows-x86_64", None), ("macos-arm64", "Apple M3")])
def test_vllm_on_windows_or_macos_has_no_wheel(db, platform, gpu):
    # no wheel: pip and uv build vLLM's sdist there, which the check says; --only-binary refuses it
    report = check(stack({"vllm": "0.32.0"}, gpu=gpu, platform=platform), database=db)
    assert "source-build:vllm==0.32.0" in {f.id for f in report.warnings}
    forbidding = stack({"vllm": "0.32.0"}, gpu=gpu, platform=platform)
    forbidding["compat"] = {"only_binary": True}
    assert "wheel:vllm==0.32.0" in errors(check(forbidding, database=db))


def test_sglang_0_5_22_needs_glibc_2_34(db):
    assert "wheel:sglang==0.5.22" in errors(check(stack({"sglang": "0.5.22"}, cuda="13.0", glibc="2.31"), database=db))
    assert check(stack({"sglang": "0.5.22"}, cuda="13.0", glibc="2.35"), database=db).ok
    note = next(f for f in check(stack({"sglang": "0.5.22"}, cuda="13.0"), database=db).findings if f.id == "glibc:unknown")
    assert "2.34" in note.message


# -- the dependencies of the dependencies ------------------------------------------------------

def test_vllm_with_a_numpy_its_numba_excludes(db):
    # vLLM 0.32.0 pins numba 0.65.0, and numba 0.65.0 requires numpy<2.5
    report = check(stack({"vllm": "0.32.0", "numpy": "2.5.5"}, cuda="13.0"), database=db)
    finding = next(f for f in report.errors if f.id == "requires:numba==0.65.0:numpy")
    assert "vllm 0.32.0" in finding.message and "numpy 2.5.5" in finding.message
    assert "use numpy" in " ".join(s.text() for s in report.suggestions)


def test_resolve_locks_the_whole_closure(tmp_path):
    from click.testing import CliRunner

    from compat.cli import cli

    path = tmp_path / "stack.toml"
    path.write_text('[system]\npython = "3.12"\ncuda = "13.0"\n[hardware]\ngpu = "H100"\n[packages]\nvllm = "0.32.0"\n')
    result = CliRunner().invoke(cli, ["resolve", str(path), "--format", "requirements"])
    assert result.exit_code == 0, result.output
    pinned = [line for line in result.output.splitlines() if "==" in line and not line.startswith("#")]
    names = {line.split("==")[0] for line in pinned}
    assert {"numba", "numpy", "xgrammar", "compressed-tensors", "fastapi"} <= names and len(pinned) > 80


# -- history -----------------------------------------------------------------------------------

def test_a_2024_stack_is_judged(db):
    report = check(stack({"vllm": "0.6.3", "torch": "2.4.0"}, cuda="12.4"), database=db)
    # the releases it names are known (a dependency's range reaching past the snapshot may still be said)
    assert report.ok and not any(f.id.startswith(("unknown-release:vllm", "unknown-release:torch"))
                                 for f in report.findings)
    assert "requires:vllm==0.6.3:torch" in errors(check(stack({"vllm": "0.6.3", "torch": "2.5.1"}, cuda="12.4"), database=db))


def test_a_release_whose_requirements_the_index_does_not_state_is_never_taken_as_having_none(db):
    # flash-attn publishes only sdists, with dynamic metadata
    version = db.component("flash-attn").newest_first()[0]
    report = check(stack({"flash-attn": str(version)}, cuda="13.0"), database=db)
    assert f"unknown-metadata:flash-attn=={version}" in {f.id for f in report.warnings}
    assert f"unknown-metadata:flash-attn=={version}" in errors(
        check(stack({"flash-attn": str(version)}, cuda="13.0"), database=db, require_known=True))


# -- reported by users trying compat ----------------------------------------------------------

def test_a_labelled_build_is_not_judged_by_the_package_index_s_wheel_tags(db):
    """vLLM's +cu129 wheels come from its own index, tagged manylinux_2_31
    (vllm-project/vllm#41103); the index's 0.20.0 wheels need glibc 2.35."""
    labelled = check(stack({"vllm": "0.20.0+cu129"}, gpu="A100", cuda="12.9", driver="575.57.08", glibc="2.34",
                           index="cu129"), database=db)
    assert not any(f.id.startswith("wheel:vllm==0.20.0") and f.severity == "error" for f in labelled.findings)
    assert "wheel:vllm==0.20.0+cu129" in {f.id for f in labelled.findings if f.severity == "info"}
    plain = stack({"vllm": "0.20.0"}, gpu="A100", cuda="12.9", driver="575.57.08", glibc="2.34")
    assert "source-build:vllm==0.20.0" in {f.id for f in check(plain, database=db).warnings}
    plain["compat"] = {"only_binary": True}
    assert "wheel:vllm==0.20.0" in errors(check(plain, database=db))


def test_an_extra_that_asks_for_another_extra_of_its_own_package_is_installed_by_pip(db):
    """sglang[srt] requires sglang[runtime_common]: pip installs both."""
    report = check(stack({"sglang": {"version": "0.4.9.post3", "extras": ["srt"]}}, gpu="A100", cuda="12.8",
                         driver="570.86.15", glibc="2.35", python="3.11"), database=db)
    assert not any(f.id.startswith("extras:") for f in report.findings)


def test_quiet_under_strict_shows_the_warnings_that_fail_the_stack(tmp_path):
    from click.testing import CliRunner

    from compat.cli import cli

    path = tmp_path / "stack.toml"
    path.write_text('[system]\npython = "3.12"\ncuda = "13.0"\n[hardware]\ngpu = "H200"\n'
                    '[packages]\nvllm = "9.9.9"\n')  # newer than the snapshot: a warning
    result = CliRunner().invoke(cli, ["check", str(path), "--strict", "--quiet"])
    assert result.exit_code == 1 and "Warnings (" in result.output and "unknown-release:vllm==9.9.9" in result.output
    relaxed = CliRunner().invoke(cli, ["check", str(path), "--quiet"])
    assert relaxed.exit_code == 0 and "Warnings (" not in relaxed.output


def test_an_old_release_on_another_accelerator_s_index_says_its_build_is_not_checked(db):
    """vLLM 0.11.0 from the package index is a CUDA build; nothing in the
    database says whether a ROCm build of it exists: a warning, not silence."""
    rocm = check({"system": {"python": "3.12", "rocm": "6.4", "index": "rocm6.4"},
                  "hardware": {"gpu": "AMD Instinct MI300X", "count": 8}, "packages": {"vllm": "0.11.0"}}, database=db)
    warning = next(f for f in rocm.warnings if f.id == "build:vllm==0.11.0")
    assert "rocm6.4" in warning.message and "ROCm" in warning.message
    assert "build:vllm==0.11.0" in errors(check({"system": {"python": "3.12", "rocm": "6.4", "index": "rocm6.4"},
                                                 "hardware": {"gpu": "MI300X"}, "packages": {"vllm": "0.11.0"}},
                                                database=db, require_known=True))
    cpu = check({"system": {"python": "3.12", "index": "cpu", "glibc": "2.35"}, "packages": {"vllm": "0.30.0"}},
                database=db)
    assert "without a GPU is not checked" in next(f for f in cpu.warnings if f.id == "build:vllm==0.30.0").message


def test_a_suggestion_can_leave_a_label_behind_when_the_labelled_build_is_what_fails(db):
    """A pip-freeze pin, torch 2.10.0+cu130, on a 575 driver: the CUDA 13
    build is what fails, and vLLM 0.16.0 pins torch 2.9.1, whose index build
    (CUDA 12.8) runs there."""
    report = check(stack({"torch": "2.10.0+cu130", "vllm": "0.16.0", "flashinfer-python": "0.6.3"},
                         gpu="NVIDIA H100 80GB HBM3", python="3.12.3", cuda="12.9", driver="575.57.08", glibc="2.39"),
                   database=db)
    assert not report.ok
    texts = [s.text() for s in report.suggestions]
    assert any(t.startswith("use torch 2.9.1 (downgrade from 2.10.0+cu130)") for t in texts), texts
    for suggestion in report.suggestions:
        assert check(suggestion.stack, database=db).ok


def test_a_dependency_pinned_to_a_release_gone_from_the_index_is_said_so(db):
    """SGLang 0.5.4 pins flashinfer-python 0.4.1, which pins
    apache-tvm-ffi==0.1.0b15, no longer on the index: that, with its source,
    not a conflict without one."""
    report = check(stack({"sglang": {"version": "0.5.4", "extras": ["srt"]}}, gpu="A100", cuda="12.8",
                         driver="570.86.15", glibc="2.35", python="3.11"), database=db)
    error = next(f for f in report.errors if f.id == "missing:flashinfer-python==0.4.1:apache-tvm-ffi")
    assert "no such release" in error.message and error.source is not None
    assert "sglang" in error.components  # what pulls it in: the package a fix may move
    assert "unresolvable" not in errors(report)


def test_a_suggestion_can_move_the_index_to_a_build_that_fits(db):
    """vLLM 0.30.0's index wheels, and the torch 2.13.0 it pins, are CUDA
    13.0 builds that need a 580 driver; their cu129 builds run on 575, and
    the suggestion says so. (SGLang 0.5.19 on the same machine is no such
    case: its sglang-kernel's index wheels are CUDA 13.0 builds too, read
    from their cubins, and no build of another index is known.)"""
    report = check(stack({"vllm": "0.30.0"}, cuda="12.9", driver="575.57.08", glibc="2.35"), database=db)
    assert not report.ok
    assert "use [system] index cu129 (instead of pypi)" in [s.text() for s in report.suggestions]
    for suggestion in report.suggestions:
        assert check(suggestion.stack, database=db).ok
    sglang = check(stack({"sglang": {"version": "0.5.19", "extras": ["srt"]}}, cuda="12.9", driver="575.57.08",
                         glibc="2.35", python="3.11"), database=db)
    assert {"build-cuda:sglang-kernel==0.4.6.post1", "driver:sglang-kernel==0.4.6.post1"} <= errors(sglang)


def test_a_suggestion_can_move_the_platform_to_the_host_a_gpu_comes_with(db):
    report = check(stack({"vllm": "0.32.0"}, gpu="GB200", cuda="13.0", driver="580.95.05"), database=db)
    assert "platform:gpu" in errors(report)
    assert "use [system] platform linux-aarch64 (instead of linux-x86_64; not a change pip can make)" in \
        [s.text() for s in report.suggestions]


def test_a_release_whose_build_the_database_does_not_hold_is_not_silent(db):
    """A development release of xformers on a machine with no GPU: its build
    is not known, and the check says what it therefore does not judge."""
    given = {"system": {"python": "3.11", "glibc": "2.35"}, "packages": {"xformers": "0.0.34.dev1095", "torch": "2.2.2"}}
    report = check(given, database=db)
    warning = next(f for f in report.warnings if f.id == "build:xformers==0.0.34.dev1095")
    assert "without a GPU is not checked" in warning.message
    assert "build:xformers==0.0.34.dev1095" in errors(check(given, database=db, require_known=True))


def test_vllm_0_11_0_on_a_machine_without_a_gpu_is_an_error_now_its_wheel_is_read(db):
    report = check({"system": {"python": "3.12", "glibc": "2.35"}, "packages": {"vllm": "0.11.0"}}, database=db)
    finding = next(f for f in report.errors if f.id == "accelerator:vllm==0.11.0")
    assert "CUDA 12.8 build, which needs an NVIDIA GPU" in finding.message


def test_a_fix_for_missing_kernels_takes_a_build_whose_kernels_are_known(db):
    """torch 2.7.1+cu126 on an RTX 5090: no sm_120 kernels (vllm-project/vllm#16901
    reports the failure). A build whose architectures the database does not
    know passes a check unjudged, one whose list is only inferred passes with
    a warning: neither the hint nor a suggestion may name one."""
    report = check(stack({"torch": "2.7.1+cu126"}, gpu="RTX 5090", cuda="12.8", driver="575.51.03", glibc="2.39"),
                   database=db)
    error = next(f for f in report.errors if f.id == "arch:torch==2.7.1")
    assert "the cu128 build (CUDA 12.8) fits" in error.message
    texts = [s.text() for s in report.suggestions]
    assert texts and all("cu128" in t or "2.8" in t for t in texts), texts
    for suggestion in report.suggestions:
        findings = check(suggestion.stack, database=db).findings
        assert not any(f.id.startswith(("arch:", "arch-unknown:")) for f in findings), suggestion.text()



def test_a_build_known_only_for_other_platforms_is_unknown_on_this_one(db):
    """torch 2.9.1+cu130 on a GB300 (linux-aarch64): the database states its
    cu130 build for x86_64; an aarch64 one exists (sgl-project/sglang#14327
    runs it). Not known is a warning, never "has wheels for x86_64 only"."""
    report = check(stack({"torch": "2.9.1+cu130"}, gpu="GB300", cuda="13.0", driver="580.82.07",
                         platform="linux-aarch64", index="cu130"), database=db)
    assert not any(f.id.startswith("build-platform:") for f in report.findings)
    assert "build:torch==2.9.1" in {f.id for f in report.warnings}


def test_an_upgrade_plan_shows_the_index_its_new_stack_needs(db):
    """The plan's new stack may install from another index: the table says so."""
    import compat

    plan = compat.upgrade({"system": {"python": "3.12", "cuda": "12.9", "driver": "575.57.08"},
                           "hardware": {"gpu": "H100"}, "packages": {"vllm": "0.24.0"}},
                          "vllm==0.30.0", database=db)
    assert plan.ok and plan.new.system.index == "cu129"
    row = next(m for m in plan.moves if m.kind == "index")
    assert (row.old, row.new, row.by_pip) == ("pypi", "cu129", True) and "CUDA 13.0 build" in row.why


def test_the_index_wheels_note_speaks_only_to_stacks_that_take_the_index_s_wheels(db):
    """"torch's wheels on the package index target CUDA 13.0" is for a stack
    that installs them, not one whose [system] index already chose PyTorch's build."""
    taken = check(stack({"torch": "2.13.0"}, cuda="12.8"), database=db)
    assert "torch.index-wheels.cuda-13.0" in {f.id for f in taken.findings}
    own = check(stack({"torch": "2.13.0"}, cuda="12.6", index="cu126"), database=db)
    assert "torch.index-wheels.cuda-13.0" not in {f.id for f in own.findings}


def test_a_fix_does_not_trade_the_error_for_its_own_inferred_warning(db):
    """vLLM 0.11.0 with Transformers 5 fails; vLLM 0.10.2 with it is only
    expected to (an inferred warning): not a fix to propose."""
    report = check(stack({"vllm": "0.11.0", "transformers": "5.0.0"}, gpu="A100", cuda="12.8", python="3.11"),
                   database=db)
    texts = [s.text() for s in report.suggestions]
    assert texts and not any("vllm 0.10" in t for t in texts), texts
    assert any(t.startswith("use transformers 4.") for t in texts)
