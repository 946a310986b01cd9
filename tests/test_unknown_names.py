"""What the snapshot lacks is said, and what needs no metadata is still
checked: a release newer than the snapshot still meets the rules whose
ranges cover it (lockstep among them) and the platform its neighbours were
built for; an extra's requirement on a project the snapshot holds nothing of
is a finding, not a line dropped without a word."""

from __future__ import annotations

from compat import check


def stack(packages: dict, platform: str = "linux-x86_64", **system) -> dict:
    return {"system": {"python": "3.12", "platform": platform, **system}, "packages": packages}


def ids(report) -> set[str]:
    return {f.id for f in report.findings}


def test_a_release_newer_than_the_snapshot_still_meets_its_lockstep_rule(db):
    # flashinfer-python and flashinfer-cubin must carry one version: no metadata needed to see 0.9.0 != 0.8.0
    report = check(stack({"flashinfer-python": "0.9.0", "flashinfer-cubin": "0.8.0"}), database=db)
    assert "flashinfer.cubin.lockstep" in {f.id for f in report.errors}
    unknown = next(f for f in report.findings if f.id == "unknown-release:flashinfer-python==0.9.0")
    assert "not checked: its own requirements, its wheels" in unknown.message
    assert "checked: the" in unknown.message and "flashinfer.cubin.lockstep" not in unknown.message.split("(")[0]
    in_step = check(stack({"flashinfer-python": "0.9.0", "flashinfer-cubin": "0.9.0"}), database=db)
    assert "flashinfer.cubin.lockstep" not in ids(in_step)


def test_a_rule_stated_for_every_later_release_is_applied_to_one_newer_than_the_snapshot(db):
    report = check(stack({"torch": "2.99.0"}), database=db)
    unknown = next(f for f in report.findings if f.id == "unknown-release:torch==2.99.0")
    assert "torch.cuda-13.architectures" in unknown.message  # releases = ">=2.11": stated for 2.99 too
    assert report.ok


def test_an_unknown_release_whose_neighbours_have_no_wheel_here_says_so_as_an_inference(db):
    report = check(stack({"sglang-kernel": "0.9.0"}, platform="macos-arm64"), database=db)
    unknown = next(f for f in report.findings if f.id == "unknown-release:sglang-kernel==0.9.0")
    assert "has a wheel or an sdist for CPython 3.12 on macos-arm64" in unknown.message
    assert "inferred" in unknown.message and unknown.severity == "warning"
    on_linux = check(stack({"sglang-kernel": "0.9.0"}), database=db)
    assert "has a wheel or an sdist" not in next(f.message for f in on_linux.findings
                                                  if f.id.startswith("unknown-release:sglang-kernel"))


def test_a_package_with_an_sdist_is_not_said_to_lack_a_platform(db):
    # vLLM publishes an sdist: pip would try to build it on macOS, so nothing is inferred
    report = check(stack({"vllm": "0.40.0"}, platform="macos-arm64"), database=db)
    assert "has a wheel or an sdist" not in next(f.message for f in report.findings
                                                  if f.id == "unknown-release:vllm==0.40.0")


def test_an_extra_requiring_a_project_the_snapshot_lacks_is_said(db):
    packages = {"vllm": {"version": "0.32.0", "extras": ["deepstream"]}}
    report = check(stack(packages, cuda="13.0", driver="580.95.05"), database=db)
    found = next(f for f in report.findings if f.id == "extra-unknown:vllm==0.32.0[deepstream]")
    assert found.severity == "warning" and "nvidia-deepstream-videodecode-cu13>=9.0.2" in found.message
    strict = check({**stack(packages, cuda="13.0", driver="580.95.05"), "compat": {"require_known": True}},
                   database=db)
    assert "extra-unknown:vllm==0.32.0[deepstream]" in {f.id for f in strict.errors}
    plain = check(stack({"vllm": "0.32.0"}, cuda="13.0", driver="580.95.05"), database=db)
    assert not any(f.id.startswith("extra-unknown:") for f in plain.findings)


def test_below_the_snapshot_s_window_the_installer_s_older_release_is_taken_and_said(db):
    """torch 2.3.0 on Python 3.9 needs networkx: every release the snapshot holds (3.3 on, read since
    2024) needs Python 3.10, and pip takes 3.2.1, which the index lists: no false conflict, a warning."""
    report = check(stack({"torch": "2.3.0"}, python="3.9"), database=db)
    assert report.resolved.get("networkx") == "3.2.1" and not any(f.id.startswith("requires-python:networkx")
                                                                   for f in report.findings)
    older = next(f for f in report.findings if f.id == "older-release:networkx==3.2.1")
    assert older.severity == "warning" and "not checked" in older.message
    assert not any(f.id.startswith("older-release:") for f in check(stack({"torch": "2.3.0"}), database=db).findings)


def test_an_intel_mac_wheel_tag_is_read_whole(db):
    # torch 2.2.2's Intel-Mac wheels are cp312-none-macosx_10_9_x86_64: the machine holds a _ of its own
    assert check(stack({"torch": "2.2.2"}, platform="macos-x86_64"), database=db).ok
    assert "wheel:torch==2.6.0" in {f.id for f in check(stack({"torch": "2.6.0"}, platform="macos-x86_64"),
                                                          database=db).errors}
