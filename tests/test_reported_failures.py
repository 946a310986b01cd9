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

from compat import CompatError, Database, check, load_stack


@pytest.fixture(scope="module")
def db() -> Database:
    return Database.load()


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


# -- releases that do not exist ----------------------------------------------------------------

def test_a_vllm_release_nobody_published_gets_no_vllm_rules(db):
    report = check(stack({"vllm": "99.0.0"}, cuda="13.0"), database=db)
    assert any(f.id == "unknown-release:vllm==99.0.0" for f in report.warnings)
    assert not any(f.id.startswith("vllm.") for f in report.findings)
    assert not check(stack({"vllm": "99.0.0"}, cuda="13.0"), database=db, require_known=True).ok
