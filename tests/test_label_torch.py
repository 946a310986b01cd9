"""A local label that names the torch a build was made for
(``+cu12torch2.6cxx11abiFALSE``, FlashAttention's prebuilt wheels) is read
as such: beside another torch minor, the build's extension fails to load."""

from __future__ import annotations

from pathlib import Path

from compat import check
from compat.engine.builds import label_torch
from compat.knowledge.inputs import Inputs, load_inputs
from packaging.version import Version

WHEEL = ("https://github.com/Dao-AILab/flash-attention/releases/download/v{v}/"
         "flash_attn-{v}+cu12torch{t}cxx11abiFALSE-cp311-cp311-linux_x86_64.whl")


def stack(packages: dict, **system) -> dict:
    return {"system": {"python": "3.11", "cuda": "12.6", **system}, "hardware": {"gpu": "H100"},
            "packages": packages}


def errors(report) -> set[str]:
    return {f.id for f in report.errors}


def test_the_label_says_the_cuda_and_the_torch():
    assert label_torch("cu12torch2.6cxx11abifalse") == (Version("12"), Version("2.6"))
    assert label_torch("cu118torch2.2cxx11abitrue") == (Version("11.8"), Version("2.2"))
    assert label_torch("cu126") is None and label_torch("cu12torch") is None and label_torch("torch2.6") is None


def test_a_cu12torch2_6_wheel_beside_torch_2_7_fails_to_load(db, tmp_path: Path):
    """https://github.com/Dao-AILab/flash-attention/issues/1724: installing
    flash_attn-2.8.0.post2+cu12torch2.6cxx11abiFALSE-cp311 pulled torch 2.7.1 in
    (its metadata does not pin torch), and the import failed with an undefined
    symbol (#1696)."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"torch==2.7.1\nflash-attn @ {WHEEL.format(v='2.8.0.post2', t='2.6')}\n")
    machine = tmp_path / "machine.toml"
    machine.write_text('[system]\npython = "3.11"\ncuda = "12.6"\n[hardware]\ngpu = "H100"\n')
    [merged] = load_inputs(Inputs(stacks=(str(machine),), requirements=(str(requirements),)), db)
    report = check(merged, database=db)
    found = next(f for f in report.errors if f.id == "label-torch:flash-attn==2.8.0.post2")
    assert "torch 2.6" in found.message and "torch 2.7.1" in found.message
    assert found.source is not None and "setup.py" in found.source.title


def test_the_matching_torch_passes(db):
    """https://github.com/Dao-AILab/flash-attention/issues/1783 (workaround):
    flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE works with torch 2.6.0+cu124."""
    report = check(stack({"flash-attn": "2.7.4.post1+cu12torch2.6cxx11abiFALSE", "torch": "2.6.0+cu124"},
                         cuda="12.4"), database=db)
    assert not any(f.id.startswith("label-torch:") for f in report.findings)
    assert not any(f.id.startswith("source-build:flash-attn") for f in report.findings)  # a wheel, not the sdist


def test_a_label_without_torch_in_the_stack_is_a_note(db):
    # flash-attn's sdist states no requirements (dynamic metadata): nothing brings torch in to judge the label against
    report = check(stack({"flash-attn": "2.6.0+cu122torch2.4cxx11abiFALSE"}), database=db)
    assert "torch" not in report.resolved
    found = next(f for f in report.findings if f.id == "label-torch:flash-attn==2.6.0")
    assert found.severity == "info" and "installs no torch" in found.message
