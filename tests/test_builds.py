"""What really gets installed: builds, wheel tags, glibc, lockstep packages,
releases that do not exist.

Each behaviour has a stack that shows the failure it prevents and one that
must stay OK. The database is a small one written here, shaped like the
real one (a snapshot header listing every release on the index, release
lines with their wheel tags, [[build]] tables and lockstep rules), so that
each test says exactly which fact it rests on.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from packaging.version import Version

from compat import CompatError, Database, check, load_stack
from compat.cli import cli
from compat.engine.resolver import resolve
from compat.errors import DatabaseError

from .conftest import copy_database

SOURCES = """
schema = 1

[[source]]
id = "kern-build-script"
project = "kern"
title = "kern build script (TORCH_CUDA_ARCH_LIST)"
kind = "commit"

[[source]]
id = "kern-runtime-check"
project = "kern"
title = "kern: the cubin package's version check at import"
kind = "commit"

[[source]]
id = "nvidia-cuda-minor-version-compat"
project = "NVIDIA"
title = "CUDA minor version compatibility"
kind = "vendor-table"
"""

CUDA = """
schema = 1

[[driver]]
cuda = "12"
linux = "525.60.13"
source = "nvidia-cuda-minor-version-compat"

[[driver]]
cuda = "13"
linux = "580"
source = "nvidia-cuda-minor-version-compat"

[runtime]
packages = ["nvidia-cuda-runtime", "cuda-toolkit"]
source = "kern-build-script"

[labels]
cuda = "cu"
rocm = "rocm"
cpu = "cpu"
source = "kern-build-script"
"""

KERN = """
schema = 1

[component]
name = "kern"
kind = "package"

[[build]]
id = "kern.pypi-cu12"
releases = "<2.0"
index = "pypi"
accelerator = "cuda"
cuda = "12.8"
archs = ["8.0", "8.9", "9.0a"]
source = "kern-build-script"

[[build]]
id = "kern.pypi-cu13"
releases = ">=2.0"
index = "pypi"
accelerator = "cuda"
cuda = "13.0"
archs = ["8.0", "9.0", "10.0", "12.0"]
source = "kern-build-script"

[[build]]
id = "kern.cu126"
releases = ">=1.0"
index = "cu126"
label = "cu126"
accelerator = "cuda"
cuda = "12.6"
archs = ["7.5", "8.0", "8.6", "9.0"]
platforms = ["linux-x86_64"]
source = "kern-build-script"

[[build]]
id = "kern.rocm"
releases = ">=1.0"
index = "rocm6.4"
label = "rocm6.4"
accelerator = "rocm"
rocm = "6.4"
source = "kern-build-script"

[[rule]]
id = "kern.cubin.lockstep"
kind = "lockstep"
releases = ">=1.0"
with = ["kern-cubin"]
same = "version"
message = "the cubin package must be the same release as kern (kern checks it at import)"
source = "kern-runtime-check"

[[rule]]
id = "kern.sm90.note"
kind = "note"
releases = ">=1.0"
when = { compute_capability = "==9.0" }
message = "a note for SM90 stacks"
source = "kern-build-script"
"""

LINUX = ["cp312-cp312-manylinux_2_28_x86_64", "cp312-cp312-manylinux_2_28_aarch64"]


def _snapshot(root: Path, name: str, releases: list[dict], versions: list[str] | None = None, tracked: bool = True) -> None:
    header = {"schema": 1, "name": name, "index": "https://index.example/simple/", "taken": "2026-12-01",
              "tracked": tracked}
    if versions is not None:
        header["versions"] = versions
    lines = [json.dumps(header)] + [json.dumps(r) for r in releases]
    (root / "metadata" / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Database:
    root = tmp_path_factory.mktemp("db")
    (root / "constraints").mkdir()
    (root / "metadata").mkdir()
    (root / "constraints" / "_sources.toml").write_text(SOURCES)
    (root / "constraints" / "kern.toml").write_text(KERN)
    (root / "cuda.toml").write_text(CUDA)
    (root / "gpus.toml").write_text(Path(Database.load().root, "gpus.toml").read_text())
    _snapshot(root, "kern", [
        {"version": "1.0.0", "requires_dist": [], "tags": LINUX},
        {"version": "1.1.0", "requires_dist": [], "tags": ["cp312-cp312-manylinux_2_34_x86_64"]},
        {"version": "2.0.0", "requires_dist": [], "tags": LINUX},
    ], versions=["0.9.0", "1.0.0", "1.1.0", "2.0.0"])
    _snapshot(root, "kern-cubin", [
        {"version": "1.0.0", "requires_dist": [], "tags": ["py3-none-any"]},
        {"version": "2.0.0", "requires_dist": [], "tags": ["py3-none-any"]},
    ], versions=["1.0.0", "2.0.0"])
    # app 1.0 pins a kern release the index never had; app 1.1 pins one it has
    _snapshot(root, "app", [
        {"version": "1.0.0", "requires_dist": ["kern==1.5.0"], "tags": ["py3-none-any"]},
        {"version": "1.1.0", "requires_dist": ["kern==2.0.0"], "tags": ["py3-none-any"]},
    ], versions=["1.0.0", "1.1.0"])
    _snapshot(root, "runtime", [
        {"version": "2.0.0", "requires_dist": ['nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"'],
         "tags": LINUX},
        {"version": "3.0.0", "requires_dist": ['cuda-toolkit[cudart]==13.0.2; platform_system == "Linux"'],
         "tags": LINUX},
    ], versions=["2.0.0", "3.0.0"])
    # numba-like: an untracked dependency that bounds numpy
    _snapshot(root, "needs-old-numpy", [
        {"version": "1.0.0", "requires_dist": ["numpy<2.5"], "tags": ["py3-none-any"]},
    ], versions=["1.0.0"], tracked=False)
    _snapshot(root, "serve", [
        {"version": "1.0.0", "requires_dist": ["needs-old-numpy==1.0.0"], "tags": ["py3-none-any"]},
    ], versions=["1.0.0"])
    _snapshot(root, "numpy", [
        {"version": "2.4.0", "requires_dist": [], "tags": ["cp312-cp312-manylinux_2_28_x86_64"]},
        {"version": "2.5.5", "requires_dist": [], "tags": ["cp312-cp312-manylinux_2_28_x86_64"]},
    ], versions=["2.4.0", "2.5.5"], tracked=False)
    # a release for a Python newer than any this stack names: only its own metadata says which
    _snapshot(root, "future", [
        {"version": "1.0.0", "requires_python": ">=3.15", "requires_dist": [],
         "tags": ["cp315-cp315-manylinux_2_28_x86_64"]},
    ], versions=["1.0.0"])
    return Database.load(root)


def stack(packages: dict, *, gpu: str | None = "H100", cuda: str | None = "13.0", **system) -> dict:
    out: dict = {"system": {"python": "3.12", **system}, "packages": packages}
    if cuda is not None:
        out["system"]["cuda"] = cuda
    if gpu is not None:
        out["hardware"] = {"gpu": gpu}
    return out


def ids(report) -> set[str]:
    return {f.id for f in report.findings}


def errors(report) -> set[str]:
    return {f.id for f in report.errors}


# -- which build, and its CUDA ---------------------------------------------------

def test_the_index_build_is_judged_against_the_stated_cuda(db):
    report = check(stack({"kern": "2.0.0"}, cuda="12.8"), database=db)
    assert "build-cuda:kern==2.0.0" in errors(report)
    message = next(f.message for f in report.errors if f.id == "build-cuda:kern==2.0.0")
    assert "CUDA 13.0" in message and "CUDA 12.8" in message
    assert check(stack({"kern": "2.0.0"}, cuda="13.0"), database=db).ok


def test_a_build_that_would_fit_is_named(db):
    report = check(stack({"kern": "2.0.0"}, cuda="12.6"), database=db)
    message = next(f.message for f in report.errors if f.id == "build-cuda:kern==2.0.0")
    assert 'the cu126 build (CUDA 12.6) fits: [system] index = "cu126" or kern==2.0.0+cu126' in message


def test_a_local_label_selects_its_build(db):
    # kern 2.0.0+cu126 is a CUDA 12.6 build: fine on CUDA 12.8, wrong on 13.0
    assert check(stack({"kern": "2.0.0+cu126"}, cuda="12.8"), database=db).ok
    report = check(stack({"kern": "2.0.0+cu126"}, cuda="13.0"), database=db)
    assert "build-cuda:kern==2.0.0" in errors(report)
    assert report.packages["kern"] == "2.0.0+cu126"


def test_a_label_the_database_does_not_know_is_a_warning_or_with_require_known_an_error(db):
    report = check(stack({"kern": "2.0.0+xyz"}), database=db)
    assert "build:kern==2.0.0" in {f.id for f in report.warnings}
    assert "build:kern==2.0.0" in errors(check(stack({"kern": "2.0.0+xyz"}), database=db, require_known=True))


def test_a_pytorch_style_label_says_its_cuda_when_the_database_lists_no_such_build(db):
    # kern lists no +cu130 build: the label itself says CUDA 13.0, and the finding cites the stack
    report = check(stack({"kern": "2.0.0+cu130"}, cuda="12.8"), database=db)
    finding = next(f for f in report.errors if f.id == "build-cuda:kern==2.0.0")
    assert "+cu130" in finding.message and finding.layer == "stack" and finding.source.id == "kern-build-script"
    assert not any(f.id.startswith(("unknown-release", "build:")) for f in report.findings)
    assert "build-cuda:kern==2.0.0" not in errors(check(stack({"kern": "2.0.0+cu130"}, cuda="13.0"), database=db))


def test_torch_as_pip_freeze_prints_it_is_judged_by_its_build():
    report = check(stack({"torch": "2.10.0+cu130"}, cuda="12.8"))
    finding = next(f for f in report.errors if f.id == "build-cuda:torch==2.10.0")
    assert finding.details["build"] == "torch.cu130" and "CUDA 13.0" in finding.message
    assert "from the package index, with no local label" in finding.message  # the CUDA 12.8 build fits
    assert not any(f.id.startswith("unknown-release") for f in report.findings)
    assert check(stack({"torch": "2.10.0+cu130"}, cuda="13.0", driver="580.95.05")).ok
    rocm = check(stack({"torch": "2.10.0+rocm7.1"}, cuda="13.0"))
    assert "accelerator:torch==2.10.0" in errors(rocm)


def test_the_stack_index_selects_the_build(db):
    report = check(stack({"kern": "2.0.0"}, cuda="12.6", index="cu126"), database=db)
    assert report.ok, [f.message for f in report.errors]
    assert "build-cuda:kern==2.0.0" in errors(check(stack({"kern": "2.0.0"}, cuda="12.6"), database=db))


def test_driver_is_checked_against_the_cuda_of_the_build(db):
    # the stack says nothing of CUDA, but kern 2.0.0's build needs CUDA 13, hence driver 580
    report = check(stack({"kern": "2.0.0"}, cuda=None, driver="570.86.15"), database=db)
    assert "driver:kern==2.0.0" in errors(report)
    assert check(stack({"kern": "2.0.0"}, cuda=None, driver="580.95.05"), database=db).ok


def test_stated_cuda_against_the_driver(db):
    report = check(stack({"kern-cubin": "2.0.0"}, cuda="13.0", driver="570.86.15"), database=db)
    assert "driver:cuda-13" in errors(report)
    assert check(stack({"kern-cubin": "2.0.0"}, cuda="12.8", driver="570.86.15"), database=db).ok


def test_metadata_pins_of_the_cuda_runtime_tell_the_build(db):
    # runtime 3.0's wheels pin cuda-toolkit 13.0.x, and the database lists no build of it
    report = check(stack({"runtime": "3.0.0"}, cuda="12.8", driver="570.86.15"), database=db)
    assert {"build-cuda:runtime==3.0.0", "driver:runtime==3.0.0"} <= errors(report)
    finding = next(f for f in report.errors if f.id == "build-cuda:runtime==3.0.0")
    assert finding.layer == "metadata" and "cuda-toolkit==13.0.2" in finding.message
    assert check(stack({"runtime": "2.0.0"}, cuda="12.8", driver="570.86.15"), database=db).ok


def test_runtime_packages_and_label_prefixes_come_from_cuda_toml(db, tmp_path):
    # the same database without [runtime] and [labels]: neither the pin nor the label says anything
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(db.root, bare)
    text = (bare / "cuda.toml").read_text()
    (bare / "cuda.toml").write_text(text[: text.index("[runtime]")])
    other = Database.load(bare)
    assert "build-cuda:runtime==3.0.0" not in errors(check(stack({"runtime": "3.0.0"}, cuda="12.8"), database=other))
    report = check(stack({"kern": "2.0.0+cu130"}, cuda="12.8"), database=other)
    assert "build:kern==2.0.0" in {f.id for f in report.warnings}  # an unknown label, not a CUDA 13.0 build


def test_torch_2_11_from_the_index_is_a_cuda_13_build():
    # the index's torch 2.11.0 wheels pin cuda-toolkit 13.0.x: a CUDA 12.8 stack with driver 570 fails twice
    report = check(stack({"torch": "2.11.0"}, cuda="12.8", driver="570.86.15"))
    assert {"build-cuda:torch==2.11.0", "driver:torch==2.11.0"} <= errors(report)
    assert not errors(check(stack({"torch": "2.10.0"}, cuda="12.8", driver="570.86.15")))


# -- architectures -----------------------------------------------------------------

@pytest.mark.parametrize("capability,ok", [
    ("8.0", True),    # sm_80 listed
    ("8.6", True),    # sm_86 runs sm_80 kernels (binary compatibility within a major)
    ("8.9", True),    # sm_89 listed
    ("9.0", True),    # sm_90a listed: exactly sm_90
    ("7.5", False),   # sm_75: nothing for Turing
    ("10.0", False),  # sm_100: 9.0a does not run on Blackwell, and there is no PTX
])
def test_compute_capability_against_the_build_architectures(db, capability, ok):
    data = stack({"kern": "1.0.0"}, cuda="12.8", gpu=None)
    data["hardware"] = {"compute_capability": capability}
    report = check(data, database=db)
    assert ("arch:kern==1.0.0" not in errors(report)) == ok, [f.message for f in report.findings]


def test_architecture_message_names_the_kernels_and_the_gpu(db):
    report = check(stack({"kern": "1.0.0"}, cuda="12.8", gpu="T4"), database=db)
    message = next(f.message for f in report.errors if f.id.startswith("arch:"))
    assert "sm_80" in message and "sm_75" in message and "no kernel image" in message


def test_a_range_resolves_to_a_release_whose_build_fits(db):
    # 2.0.0 is CUDA 13 only; on a CUDA 12.8 stack the range settles on 1.x
    report = check(stack({"kern": ">=1.0"}, cuda="12.8", gpu="A100"), database=db)
    assert report.ok and report.packages["kern"] == "1.1.0"


# -- accelerator and vendor ---------------------------------------------------------

def test_a_cuda_build_on_rocm_is_an_error_and_the_rocm_build_is_fine(db):
    report = check(stack({"kern": "2.0.0"}, cuda=None, gpu="MI300X", rocm="6.4"), database=db)
    assert "accelerator:kern==2.0.0" in errors(report)
    assert check(stack({"kern": "2.0.0+rocm6.4"}, cuda=None, gpu="MI300X", rocm="6.4"), database=db).ok


def test_a_cuda_only_package_on_cpu_or_apple_is_an_error(db):
    assert "accelerator:kern==2.0.0" in errors(check(stack({"kern": "2.0.0"}, cuda=None, gpu=None), database=db))
    apple = stack({"kern": "2.0.0"}, cuda=None, gpu="Apple M3", platform="macos-arm64")
    assert "accelerator:kern==2.0.0" in errors(check(apple, database=db))


@pytest.mark.parametrize("system,gpu", [({"cuda": "13.0"}, "MI300X"), ({"rocm": "6.4"}, "H100")])
def test_gpu_vendor_contradicting_cuda_or_rocm_is_bad_input(db, system, gpu):
    with pytest.raises(CompatError, match="GPU, but \\[system\\]"):
        load_stack({"system": {"python": "3.12", **system}, "hardware": {"gpu": gpu}}, db)


def test_vendor_contradiction_exits_2_on_the_command_line(tmp_path):
    path = tmp_path / "stack.toml"
    path.write_text('[system]\npython = "3.12"\ncuda = "13.0"\n[hardware]\ngpu = "MI300X"\n')
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2 and "[hardware] gpu" in result.output and "Traceback" not in result.output


# -- platform and glibc ----------------------------------------------------------------

def test_no_wheel_for_the_platform_is_an_error(db):
    report = check(stack({"kern-cubin": "2.0.0", "numpy": "2.4.0"}, gpu=None, cuda=None, platform="windows-x86_64"),
                   database=db)
    assert "wheel:numpy==2.4.0" in errors(report)
    assert "wheel:kern-cubin==2.0.0" not in errors(report)  # pure Python installs anywhere


def test_glibc_older_than_the_wheels_need_is_an_error(db):
    report = check(stack({"kern": "1.1.0"}, cuda="12.8", gpu="A100", glibc="2.31"), database=db)
    assert "wheel:kern==1.1.0" in errors(report)
    assert check(stack({"kern": "1.1.0"}, cuda="12.8", gpu="A100", glibc="2.35"), database=db).ok


def test_unknown_glibc_is_a_note_naming_the_floor(db):
    report = check(stack({"kern": "1.1.0"}, cuda="12.8", gpu="A100"), database=db)
    note = next(f for f in report.findings if f.id == "glibc:unknown")
    assert note.severity == "info" and "2.34" in note.message


def test_a_range_skips_releases_without_a_wheel_for_the_glibc(db):
    report = check(stack({"kern": ">=1.0,<2"}, cuda="12.8", gpu="A100", glibc="2.31"), database=db)
    assert report.ok and report.packages["kern"] == "1.0.0"


@pytest.mark.parametrize("bad", [{"glibc": "2"}, {"glibc": "3.1"}, {"glibc": 2.35}, {"index": "cuda128"},
                                 {"platform": "windows-x86_64", "glibc": "2.35"}])
def test_bad_glibc_and_index_values_are_bad_input(db, bad):
    with pytest.raises(CompatError):
        load_stack({"system": {"python": "3.12", **bad}}, db)


# -- lockstep ------------------------------------------------------------------------------

def test_lockstep_partners_must_match(db):
    report = check(stack({"kern": "2.0.0", "kern-cubin": "1.0.0"}), database=db)
    finding = next(f for f in report.errors if f.id == "kern.cubin.lockstep")
    assert "kern-cubin 1.0.0" in finding.message and finding.kind == "lockstep"
    assert check(stack({"kern": "2.0.0", "kern-cubin": "2.0.0"}), database=db).ok


def test_lockstep_moves_a_range_with_its_partner(db):
    report = check(stack({"kern": "1.0.0", "kern-cubin": ">=1.0"}, cuda="12.8", gpu="A100"), database=db)
    assert report.ok and report.packages["kern-cubin"] == "1.0.0"


def test_minor_lockstep():
    from compat.knowledge.model import Rule
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version
    from compat.knowledge.conditions import Condition

    rule = Rule("r", "a", "lockstep", SpecifierSet(), Condition(), None, "error", "m", "s", partners=("b",), same="minor")
    assert rule.in_step(Version("0.32.0"), Version("0.32.2"))
    assert not rule.in_step(Version("0.32.0"), Version("0.33.0"))


# -- existence --------------------------------------------------------------------------

def test_a_pin_to_a_release_that_does_not_exist_is_an_error(db):
    report = check(stack({"kern": "1.5.0"}), database=db)
    assert "missing:kern==1.5.0" in errors(report)


def test_a_pin_newer_than_the_snapshot_is_a_warning_that_dates_the_snapshot(db):
    report = check(stack({"kern": "9.0.0"}), database=db)
    warning = next(f for f in report.warnings if f.id == "unknown-release:kern==9.0.0")
    assert "2026-12-01" in warning.message and "not checked" in warning.message
    assert "unknown-release:kern==9.0.0" in errors(check(stack({"kern": "9.0.0"}), database=db, require_known=True))


def test_an_unknown_release_gets_the_rules_whose_range_covers_it(db):
    # kern.sm90.note covers >=1.0: stated of 9.0.0 too, which is newer than the snapshot; its metadata is unknown
    report = check(stack({"kern": "9.0.0"}), database=db)
    assert "kern.sm90.note" in ids(report)
    unknown = next(f for f in report.findings if f.id == "unknown-release:kern==9.0.0")
    assert "checked: the 2 rules whose releases cover it (kern.cubin.lockstep, kern.sm90.note)" in unknown.message
    # 0.9.0 is listed by the index but not held: no rule covers it
    assert "kern.sm90.note" not in ids(check(stack({"kern": "0.9.0"}), database=db))


def test_a_release_on_the_index_outside_the_snapshot_is_unknown_not_missing(db):
    report = check(stack({"kern": "0.9.0"}), database=db)
    assert "unknown-release:kern==0.9.0" in {f.id for f in report.warnings}
    assert "missing:kern==0.9.0" not in ids(report)


def test_require_known_from_the_stack_file(db):
    data = stack({"kern": "9.0.0"})
    data["compat"] = {"require_known": True}
    assert not check(data, database=db).ok


def test_a_requirement_only_a_missing_release_meets_is_an_error_not_a_gap(db):
    report = check(stack({"app": "1.0.0"}), database=db)
    assert not report.ok
    assert not any(f.id.startswith("gap:") for f in report.findings)
    assert "kern==1.5.0" in " ".join(f.message for f in report.errors)


def test_a_range_next_to_a_missing_pin_is_no_false_conflict(db):
    # the error is that kern 1.5.0 does not exist, not that the range excludes it
    report = check(stack({"app": "1.0.0", "kern": ">=1.0"}), database=db)
    assert report.errors and all("admits no such release" not in f.message for f in report.errors)


def test_a_range_resolves_past_a_release_with_a_missing_pin(db):
    resolution = resolve(load_stack(stack({"app": ">=1.0"}), db), db)
    assert resolution.ok and str(resolution.versions["app"].version) == "1.1.0"


# -- the closure ---------------------------------------------------------------------------

def test_an_untracked_dependency_two_levels_down_is_checked(db):
    report = check(stack({"serve": "1.0.0", "numpy": "2.5.5"}, gpu=None, cuda=None), database=db)
    assert not report.ok
    assert check(stack({"serve": "1.0.0", "numpy": "2.4.0"}, gpu=None, cuda=None), database=db).ok


# -- suggestions ---------------------------------------------------------------------------

# -- why a release the stack does not name cannot install ------------------------------------

def test_a_release_another_requires_names_its_build_as_the_cause(db):
    # app 1.1.0 pins kern 2.0.0, whose CUDA 13.0 build carries no Turing kernels; the stack names no kern
    report = check(stack({"app": "1.1.0"}, gpu="T4"), database=db)
    finding = next(f for f in report.errors if f.id == "arch:kern==2.0.0")
    assert "which app 1.1.0 requires" in finding.message and "T4 is sm_75" in finding.message
    assert any("T4 is sm_75" in fact for fact in report.explanation.facts)
    assert check(stack({"app": "1.1.0"}, gpu="A100"), database=db).ok


def test_a_range_no_release_of_which_fits_gives_each_reason_once(db):
    report = check(stack({"kern": ">=1.0"}, gpu="T4", cuda="12.8"), database=db)
    arch = {f.id: f.message for f in report.errors if f.id.startswith("arch:")}
    # 1.0.0 has 1.1.0's build: named on 1.1.0's finding, not repeated
    assert set(arch) == {"arch:kern==1.1.0", "arch:kern==2.0.0"}
    assert "which the stack's kern>=1.0 admits; 1.0.0 likewise" in arch["arch:kern==1.1.0"]
    assert "build-cuda:kern==2.0.0" in errors(report)
    assert check(stack({"kern": ">=1.0"}, gpu="T4", cuda="12.6", index="cu126"), database=db).ok


def test_suggestions_move_to_a_release_whose_build_fits(db):
    report = check(stack({"kern": "2.0.0"}, cuda="12.8", gpu="A100"), database=db)
    texts = [s.text() for s in report.suggestions]
    assert texts and texts[0] == "use kern 1.1.0 (downgrade from 2.0.0)"


def test_suggestions_never_propose_a_release_without_a_build_for_the_gpu(db):
    # no release of kern carries Turing kernels: no suggestion may name one
    report = check(stack({"kern": "2.0.0"}, cuda="13.0", gpu="T4"), database=db)
    assert "arch:kern==2.0.0" in errors(report)
    assert all("kern" not in c.name for s in report.suggestions for c in s.changes)


def test_a_lockstep_rule_resolves_only_where_its_condition_holds(db, tmp_path):
    # kern.cubin.lockstep gated on an environment variable: set, the range is free to move
    import shutil

    gated = tmp_path / "gated"
    shutil.copytree(db.root, gated)
    toml = gated / "constraints" / "kern.toml"
    toml.write_text(toml.read_text().replace('with = ["kern-cubin"]', 'with = ["kern-cubin"]\nwhen = { not = { env = { KERN_SKIP = true } } }'))
    other = Database.load(gated)
    free = stack({"kern": "1.0.0", "kern-cubin": ">=1.0"}, cuda="12.8", gpu="A100")
    free["env"] = {"KERN_SKIP": "1"}
    assert check(free, database=other).packages["kern-cubin"] == "2.0.0"
    bound = stack({"kern": "1.0.0", "kern-cubin": ">=1.0"}, cuda="12.8", gpu="A100")
    assert check(bound, database=other).packages["kern-cubin"] == "1.0.0"


# -- PyTorch's labels and index URLs come from cuda.toml ------------------------------------

@pytest.mark.parametrize("index, accelerator", [("cu128", "cuda"), ("cu92", "cuda"), ("rocm6.4", "rocm"), ("cpu", "cpu")])
def test_an_index_variant_is_any_label_cuda_toml_describes(db, index, accelerator):
    system = load_stack({"system": {"python": "3.12", "index": index}}, db).system
    assert system.index == index and db.cuda.label(index)[0] == accelerator


@pytest.mark.parametrize("index", ["cu1", "cu", "cu00", "rocm", "rocm6.", "cuda128", "cu12a", "x" * 65])
def test_an_index_variant_outside_the_labels_is_bad_input(db, index):
    with pytest.raises(CompatError, match="index"):
        load_stack({"system": {"python": "3.12", "index": index}}, db)


def test_the_labels_and_the_index_url_are_the_database_s(tmp_path):
    """Another prefix in cuda.toml is another label grammar and another URL:
    none of it is written in the code."""
    from compat.knowledge.inputs import Inputs, load_inputs

    data = copy_database(tmp_path / "data")
    cuda = data / "cuda.toml"
    text = cuda.read_text(encoding="utf-8")
    text = text.replace('cuda = "cu"', 'cuda = "cuda"').replace("https://download.pytorch.org/whl/", "https://mirror.example/torch/")
    cuda.write_text(text, encoding="utf-8")
    mirrored = Database.load(data)
    assert mirrored.cuda.label("cuda128") == ("cuda", Version("12.8")) and mirrored.cuda.label("cu128") is None
    assert mirrored.cuda.index_label("https://mirror.example/torch/cuda130/") == "cuda130"
    assert mirrored.cuda.index_label("https://download.pytorch.org/whl/cu130") is None
    (tmp_path / "r.txt").write_text("--index-url https://mirror.example/torch/cuda128\ntorch==2.10.0\n", encoding="utf-8")
    (tmp_path / "stack.toml").write_text('[system]\npython = "3.12"\n', encoding="utf-8")
    inputs = Inputs(stacks=(str(tmp_path / "stack.toml"),), requirements=(str(tmp_path / "r.txt"),))
    (loaded,) = load_inputs(inputs, mirrored, None)
    assert loaded.system.index == "cuda128"


def test_a_label_index_that_is_not_a_url_prefix_is_a_database_error(tmp_path):
    data = copy_database(tmp_path / "data")
    cuda = data / "cuda.toml"
    cuda.write_text(cuda.read_text(encoding="utf-8").replace('index = "https://download.pytorch.org/whl/"',
                                                            'index = "download.pytorch.org"'), encoding="utf-8")
    with pytest.raises(DatabaseError, match=r"cuda\.toml.*index"):
        Database.load(data).cuda


def test_a_python_suggestion_comes_from_python_toml(db, tmp_path):
    """The Pythons a suggestion may move to are python.toml's, while still
    supported: no list in the code."""
    stack_ = stack({"future": "1.0.0"}, gpu=None, cuda=None)
    assert not [c for s in check(stack_, database=db).suggestions for c in s.changes if c.name == "python"]
    root = tmp_path / "db"
    shutil.copytree(db.root, root)
    (root / "python.toml").write_text(
        'schema = 1\n'
        '[[python]]\nversion = "3.15"\nreleased = 2026-10-01\nend_of_life = "2031-10"\nsource = "kern-build-script"\n'
        '[[python]]\nversion = "3.9"\nreleased = 2020-10-05\nend_of_life = "2025-10"\nsource = "kern-build-script"\n')
    report = check(stack_, database=Database.load(root))
    moves = [(c.name, c.new) for s in report.suggestions for c in s.changes]
    assert ("python", "3.15") in moves and ("python", "3.9") not in moves  # 3.9's support has ended
    for suggestion in report.suggestions:
        assert check(suggestion.stack, database=Database.load(root)).ok


@pytest.mark.parametrize("entry, key", [
    ('version = "3"', "version"), ('version = "3.12.1"', "version"), ('end_of_life = "2028"', "end_of_life"),
    ('end_of_life = "2028-13"', "end_of_life"), ('released = "soon"', "released"), ('colour = "blue"', "colour"),
    ('version = "3.12.post1"', "version"), ('version = "1!3.12"', "version"), ('version = "3.12rc1"', "version"),
])
def test_a_malformed_python_toml_is_a_database_error_naming_the_key(db, tmp_path, entry, key):
    root = tmp_path / "db"
    shutil.copytree(db.root, root)
    table = {"version": '"3.12"', "released": "2023-10-02", "end_of_life": '"2028-10"', "source": '"kern-build-script"'}
    name = entry.split(" = ")[0]
    table[name] = entry.split(" = ", 1)[1]
    (root / "python.toml").write_text("schema = 1\n[[python]]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()))
    with pytest.raises(DatabaseError, match=rf"python\.toml.*{key}"):
        Database.load(root).pythons


def test_a_build_inferred_from_its_label_says_its_architectures_are_not_checked(db):
    """cu118 is a label no [[build]] of kern lists: its CUDA comes from the
    label, its kernels from nowhere, and the check says so."""
    report = check(stack({"kern": "1.0.0+cu118"}, gpu="RTX 5090", cuda="11.8", driver="580"), database=db)
    note = next(f for f in report.findings if f.id == "arch-unknown:kern==1.0.0")
    assert note.severity == "info" and "sm_120" in note.message and "not checked" in note.message
    # a listed build with its architectures gets the real test instead
    assert "arch-unknown:kern==1.0.0" not in ids(check(stack({"kern": "1.0.0+cu126"}, gpu="RTX 5090", cuda="12.6"),
                                                       database=db))


def test_an_inferred_architecture_list_is_a_warning_with_its_basis(db, tmp_path):
    root = tmp_path / "db"
    shutil.copytree(db.root, root)
    kern = root / "constraints" / "kern.toml"
    text = kern.read_text()
    listed = 'archs = ["7.5", "8.0", "8.6", "9.0"]\n'  # kern.cu126's
    assert listed in text
    kern.write_text(text.replace(listed, listed + 'archs_basis = "measured on a neighbouring release"\n', 1))
    report = check(stack({"kern": "1.0.0+cu126"}, gpu="RTX 5090", cuda="12.6"), database=Database.load(root))
    warning = next(f for f in report.warnings if f.id == "arch:kern==1.0.0")
    assert warning.basis == "measured on a neighbouring release"
    assert "arch:kern==1.0.0" in errors(check(stack({"kern": "1.0.0+cu126"}, gpu="RTX 5090", cuda="12.6"), database=db))
    kern.write_text(text.replace('id = "kern.rocm"\n', 'id = "kern.rocm"\narchs_basis = "x"\n', 1))
    with pytest.raises(DatabaseError, match="archs_basis"):
        Database.load(root).component("kern").builds  # every build, parsed (lint, db show)
