"""What pip and uv would install, judged as they judge it: no false alarm on
the inputs users really run, and the true failure of the same kind still
caught (docs/database.md, "Existence", "Builds", "Extras")."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from compat import check
from compat.cli import cli

from .conftest import base


def ids(report):
    return {f.id for f in report.findings}


def severity(report, id_):
    return next(f.severity for f in report.findings if f.id == id_)


H200 = """
[system]
python = "3.12"
cuda = "13.0"

[hardware]
gpu = "H200"
"""

# -- existence judged against the snapshot's time ------------------------------------------

# The bundled snapshot of sentry-sdk (taken 2026-12-03) ends its finals at 2.75.0 and
# also holds pre-releases up to 3.0.0b2; 2.76.0 was uploaded after it.


def test_a_release_above_the_newest_final_is_newer_than_the_snapshot_whatever_prereleases_it_holds():
    report = check(base(packages={"sentry-sdk": "2.76.0"}))
    finding = next(f for f in report.findings if f.id == "unknown-release:sentry-sdk==2.76.0")
    assert finding.severity == "warning" and report.ok
    assert "2.75.0" in finding.message and "compat db sync" in finding.message and "2026-12-03" in finding.message
    # a pre-release above the newest final that the list lacks: released since, as far as the snapshot knows
    assert "unknown-release:sentry-sdk==3.0.0b3" in ids(check(base(packages={"sentry-sdk": "3.0.0b3"})))


def test_a_requirement_only_a_release_newer_than_the_snapshot_meets_is_a_warning_not_a_missing_release():
    # transformers 5.25.0 requires kernels>=0.19.1,<0.20; the snapshot's list of kernels stops at 0.17.2,
    # and 0.19.1 came out after it: uv resolves it, and a range of transformers takes 5.25.0 as uv does
    report = check({"system": {"python": "3.12"}, "packages": {"transformers": "5.25.0"}})
    assert report.exit_code == 0 and not any(f.id.startswith("missing:") for f in report.findings)
    finding = next(f for f in report.findings if f.id == "unknown-release:transformers==5.25.0:kernels")
    assert finding.severity == "warning" and "0.17.2" in finding.message and "compat db sync" in finding.message
    assert check({"system": {"python": "3.12"}, "packages": {"transformers": ">=5.20"}}).packages["transformers"] == "5.25.0"
    strict = check({"system": {"python": "3.12"}, "packages": {"transformers": "5.25.0"}}, require_known=True)
    assert strict.exit_code == 1
    # the same kind, below the newest final release: no such release exists, no installer installs it
    gone = check({"system": {"python": "3.12", "cuda": "13.0"}, "packages": {"vllm": "0.34.0"}})
    assert "missing:vllm==0.34.0:flashinfer-python" in {f.id for f in gone.errors}


def test_a_release_below_the_newest_final_that_the_complete_list_lacks_is_an_error():
    report = check(base(packages={"sentry-sdk": "2.74.1"}))
    assert severity(report, "missing:sentry-sdk==2.74.1") == "error" and not report.ok
    # the newest final is the edge: it exists, and a post-release of it is newer than the snapshot
    assert check(base(packages={"sentry-sdk": "2.75.0"})).ok
    assert "unknown-release:sentry-sdk==2.75.0.post1" in ids(check(base(packages={"sentry-sdk": "2.75.0.post1"})))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "machine.toml").write_text(H200, encoding="utf-8")
    return tmp_path


LOCK = """
lock-version = "1.0"
created-by = "pip"
requires-python = ">=3.12"

[[packages]]
name = "sentry-sdk"
version = "{version}"
wheels = [{{ name = "sentry_sdk-{version}-py2.py3-none-any.whl", url = "https://example.com/sentry_sdk-{version}-py2.py3-none-any.whl", hashes = {{ sha256 = "00" }} }}]
"""


@pytest.mark.parametrize("reader", ["--pylock", "--requirements"])
def test_every_reader_judges_existence_against_the_snapshots_time(folder, reader):
    def findings(version):
        if reader == "--pylock":
            (folder / "pylock.toml").write_text(textwrap.dedent(LOCK.format(version=version)), encoding="utf-8")
            args = ["--pylock", "pylock.toml"]
        else:
            (folder / "requirements.txt").write_text(f"sentry-sdk=={version}\n", encoding="utf-8")
            args = ["--requirements", "requirements.txt"]
        result = CliRunner().invoke(cli, ["check", "machine.toml", *args, "--format", "json"])
        assert result.exit_code in (0, 1), result.output
        return result.exit_code, {f["id"]: f["severity"] for f in json.loads(result.output)["findings"]}

    code, found = findings("2.76.0")
    assert code == 0 and found["unknown-release:sentry-sdk==2.76.0"] == "warning"
    code, found = findings("2.74.1")
    assert code == 1 and found["missing:sentry-sdk==2.74.1"] == "error"


# -- extras merged as installers merge them ---------------------------------------------------


def test_an_extra_a_requirement_asks_for_is_installed_wherever_else_the_package_is_named(folder):
    # vLLM 0.32.0 requires fastapi[standard]; the stack names plain fastapi: pip and uv install the
    # extra because vLLM asks for it (uv pip compile lists fastapi-cli "via fastapi")
    (folder / "requirements.txt").write_text("vllm==0.32.0\nfastapi>=0.110\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "machine.toml", "--requirements", "requirements.txt", "--strict",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert not [f for f in report["findings"] if f["id"].startswith("extras:")]
    assert "fastapi-cli" in report["stack"]["resolved"]  # what the standard extra adds is judged with the rest
    # the true failure of the same kind: what the merged extra requires, pinned where it cannot be
    (folder / "requirements.txt").write_text("vllm==0.32.0\nfastapi>=0.110\nfastapi-cli==0.0.5\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "machine.toml", "--requirements", "requirements.txt", "--format", "json"])
    assert result.exit_code == 1
    errors = [f["id"] for f in json.loads(result.output)["findings"] if f["severity"] == "error"]
    assert any(e.startswith("requires:fastapi==") and e.endswith(":fastapi-cli") for e in errors), errors


def test_an_extra_the_release_does_not_provide_is_still_said(db):
    # nvidia-cudnn-frontend before 1.16.0 names no cutedsl extra: pip installs nothing for it
    from compat.engine.judge import _Checker
    from compat.engine.resolver import Need
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    release = db.component("nvidia-cudnn-frontend").release(Version("1.15.0"))
    need = Need("nvidia-cudnn-frontend", SpecifierSet(">=1"), frozenset({"cutedsl"}))
    assert _Checker._unprovided(need, release) == ["cutedsl"]
    newer = db.component("nvidia-cudnn-frontend").release(Version("1.31.0"))
    assert _Checker._unprovided(need, newer) == []


# -- the whole install judged, not only the packages the stack names ---------------------------


def test_a_conflict_between_two_dependencies_the_stack_does_not_name_is_found():
    # vLLM 0.26.0 pins apache-tvm-ffi==0.1.10, xgrammar 0.2.9 needs >=0.1.11 (both in the snapshot);
    # uv calls the pinned pair incompatible
    pinned = check(base(packages={"vllm": "0.26.0", "xgrammar": "0.2.9"}, system={"cuda": "13.0"},
                        hardware={"gpu": "H100"}))
    conflict = next(f for f in pinned.errors if f.id == "conflict:apache-tvm-ffi")
    assert "apache-tvm-ffi==0.1.10" in conflict.message and "apache-tvm-ffi>=0.1.11" in conflict.message
    # a range of xgrammar resolves around it, as uv does: to a release that accepts 0.1.10
    ranged = check(base(packages={"vllm": "0.26.0", "xgrammar": ">=0.2"}, hardware={"gpu": "H100"}))
    assert ranged.ok, [f.id for f in ranged.errors]
    assert ranged.resolved["apache-tvm-ffi"] == "0.1.10" and ranged.packages["xgrammar"] != "0.2.9"


def test_a_dependencys_wheels_are_judged_against_the_stacks_glibc():
    # llguidance (a dependency of vLLM 0.31.0) has wheels for glibc 2.31 and newer only, and an sdist:
    # pip and uv build it from source on glibc 2.28 (a Rust toolchain), and --only-binary forbids that
    old = check(base(packages={"vllm": "0.31.0"}, system={"glibc": "2.28"}, hardware={"gpu": "H100"}))
    built = next(f for f in old.warnings if f.id.startswith("source-build:llguidance=="))
    assert old.ok and "llguidance-" in built.message and "sdist" in built.message
    forbidden = check(base(packages={"vllm": "0.31.0"}, system={"glibc": "2.28"}, hardware={"gpu": "H100"},
                           compat={"only_binary": True}))
    assert not forbidden.ok and any(f.id.startswith("wheel:llguidance==") for f in forbidden.errors)
    fine = check(base(packages={"vllm": "0.31.0"}, system={"glibc": "2.31"}, hardware={"gpu": "H100"}))
    assert fine.ok and not [f for f in fine.findings if f.id.startswith(("source-build:", "wheel:"))]
    # without [system] glibc, the note names the floor of the whole install, not only vLLM's
    note = next(f for f in check(base(packages={"vllm": "0.31.0"}, hardware={"gpu": "H100"})).findings
                if f.id == "glibc:unknown")
    assert "glibc 2.31" in note.message and "llguidance" in note.message


# -- suggestions and plans verified with full knowledge ------------------------------------------


def test_a_suggestion_is_offered_only_where_its_check_knows_every_build_it_installs():
    # H100 on driver 550: the database knows no cu126 build of vLLM 0.32.0, so a check of
    # `[system] index = "cu126"` passes unjudged; it is no verified fix. cu129's build is known.
    report = check({"system": {"python": "3.12", "driver": "550.54.15"}, "hardware": {"gpu": "H100"},
                    "packages": {"vllm": "0.32.0"}})
    texts = [s.text() for s in report.suggestions]
    assert not any("cu126" in t for t in texts), texts
    assert any("index cu129" in t for t in texts), texts
    for suggestion in report.suggestions:
        assert not [f.id for f in suggestion.report.warnings if f.id.startswith("build:")]


def test_an_upgrade_plan_that_compat_expects_to_fail_does_not_pass():
    from compat.engine.upgrade import parse_targets, upgrade
    from compat import Database
    from compat.knowledge.binding import stack_from_tables

    db = Database.load()
    stack = stack_from_tables(base(packages={"vllm": "0.10.2"}, system={"cuda": "12.8"}, hardware={"gpu": "H100"}), db, file="stack.toml")
    plan = upgrade(stack, db, parse_targets(["transformers==5.0.0"], stack, db))
    assert plan.new is None and "tokenizer" in plan.reason
    # the same target where the engine supports Transformers 5 still plans
    newer = stack_from_tables(base(packages={"vllm": "0.34.0"}, hardware={"gpu": "H100"}), db, file="stack.toml")
    assert upgrade(newer, db, parse_targets(["transformers"], newer, db)).new is not None


def test_a_known_issue_whose_model_condition_is_unknown_names_the_release_that_fixes_it():
    report = check(base(packages={"transformers": "5.20.1"}, hardware={"gpu": "H100"}))
    note = next(f for f in report.findings if f.id == "model:unverified")
    assert "whatever the model, transformers 5.20.2 fixes" in note.message
    fixed = check(base(packages={"transformers": "5.20.2"}, hardware={"gpu": "H100"}))
    assert "5.20.2 fixes" not in " ".join(f.message for f in fixed.findings)


def test_a_release_with_only_an_sdist_is_a_build_from_source():
    # SGLang 0.5.20 pins cuda-tile==1.6.0rc5, which has no wheel on the index, only an sdist
    report = check(base(packages={"sglang": "0.5.20"}, hardware={"gpu": "H100"}))
    warning = next(f for f in report.warnings if f.id == "source-build:cuda-tile==1.6.0rc5")
    assert "cuda_tile-1.6.0rc5.tar.gz" in warning.message and "no wheel at all" in warning.message
    forbidden = check(base(packages={"sglang": "0.5.20"}, hardware={"gpu": "H100"}, compat={"only_binary": True}))
    assert "wheel:cuda-tile==1.6.0rc5" in {f.id for f in forbidden.errors}


def test_only_binary_on_the_command_line(folder):
    (folder / "stack.toml").write_text(H200 + '\n[packages]\nsglang = "0.5.20"\n', encoding="utf-8")
    assert CliRunner().invoke(cli, ["check", "stack.toml"]).exit_code == 0
    result = CliRunner().invoke(cli, ["check", "stack.toml", "--only-binary"])
    assert result.exit_code == 1 and "wheel:cuda-tile==1.6.0rc5" in result.output


# -- each build judged with its own requirements --------------------------------------------------


def test_a_cpu_build_of_torch_is_not_judged_with_the_cuda_builds_requirements(folder):
    # torch 2.13.0+cpu beside another triton: PyTorch's CPU wheels require neither triton nor the CUDA
    # libraries (pip check is silent); the index's CUDA build pins triton==3.7.1
    (folder / "requirements.txt").write_text("torch==2.13.0+cpu\ntriton==3.6.0\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "machine.toml", "--requirements", "requirements.txt", "--format", "json"])
    ids = [f["id"] for f in json.loads(result.output)["findings"]]
    assert not [i for i in ids if i.startswith("requires:torch==2.13.0")], ids
    # the true failure of the same kind: the index's own (CUDA) build with that triton
    (folder / "requirements.txt").write_text("torch==2.13.0\ntriton==3.6.0\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "machine.toml", "--requirements", "requirements.txt", "--format", "json"])
    assert result.exit_code == 1 and "requires:torch==2.13.0:triton" in result.output


def test_resolve_for_the_cpu_index_pins_no_cuda_package_and_writes_where_torch_comes_from(folder):
    (folder / "cpu.toml").write_text('[system]\npython = "3.12"\nindex = "cpu"\n\n[packages]\ntorch = "2.13.0"\n',
                                     encoding="utf-8")
    toml = CliRunner().invoke(cli, ["resolve", "cpu.toml"])
    assert toml.exit_code == 0 and 'index = "cpu"' in toml.output
    for name in ("triton", "cuda-toolkit", "nvidia-"):
        assert f"\n{name}" not in toml.output
    assert "sympy" in toml.output  # what every build of torch requires stays
    pins = CliRunner().invoke(cli, ["resolve", "cpu.toml", "--format", "requirements"]).output
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in pins and "torch==2.13.0+cpu" in pins
    lock = CliRunner().invoke(cli, ["resolve", "cpu.toml", "--format", "pylock"])
    assert lock.exit_code == 2 and "https://download.pytorch.org/whl/cpu" in lock.output


def test_a_build_whose_requirements_are_not_all_known_says_so():
    # torch's cu126 build pins the CUDA 12.6 libraries, which no source here lists: not the index build's
    cu126 = check(base(packages={"torch": "2.13.0+cu126"}, system={"cuda": "12.6", "driver": "560.35.03"},
                       hardware={"gpu": "H100"}))
    note = next(f for f in cu126.findings if f.id == "build-requires:torch==2.13.0")
    assert note.severity == "info" and "CUDA 12.6 libraries" in note.message
    assert not [f for f in cu126.errors if "cuda-toolkit" in f.message or "nvidia-" in f.message]
    # a build of another index that no source describes: a warning, never silent
    vllm = check(base(packages={"vllm": "0.32.0"}, system={"cuda": "12.9", "driver": "575.57.08", "index": "cu129"},
                      hardware={"gpu": "H100"}))
    assert "build-requires:vllm==0.32.0" in {f.id for f in vllm.warnings}
