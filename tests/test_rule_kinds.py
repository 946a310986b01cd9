"""Each kind of rule, on a small database made for the test."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from compat import Database, check

from .conftest import ROOT

COMPONENT = """
schema = 1

[component]
name = "demo-app"
kind = "application"

[options.backend]
summary = "which kernel backend"
values = ["fast", "safe"]
default = "safe"
source = "demo-1.0"

[[release]]
version = "1.0"
source = "demo-1.0"

[[release]]
version = "1.1"
source = "demo-1.0"

[[rule]]
id = "demo.old-bug"
kind = "known-issue"
releases = "<1.1"
when = { gpu_arch = "hopper" }
message = "grey frames on Hopper"
fixed_in = "1.1"
source = "demo-1.0"

[[rule]]
id = "demo.new-default"
kind = "behaviour-change"
releases = ">=1.1"
message = "outputs are no longer bit-identical to 1.0"
source = "demo-1.0"

[[rule]]
id = "demo.measured"
kind = "note"
releases = ">=1.0"
when = { gpu = ["H200"], model = { checkpoint_dtype = "int8" } }
message = "about 5 % faster model time at 480p (measured on H200 with an INT8 checkpoint)"
source = "demo-1.0"

[[rule]]
id = "demo.default-backend"
kind = "note"
releases = ">=1.0"
when = { options = { backend = "safe" } }
message = "the safe backend is the default"
source = "demo-1.0"

[[rule]]
id = "demo.env-off"
kind = "note"
releases = ">=1.0"
when = { env = { DEMO_FAST = "0" } }
message = "DEMO_FAST=0 turns the fast path off"
source = "demo-1.0"
"""

SOURCE = """
[[source]]
id = "demo-1.0"
project = "Demo"
title = "Demo 1.0 release"
kind = "release"
date = 2026-10-01
"""


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("db") / "data"
    shutil.copytree(ROOT / "data", root)
    (root / "constraints" / "demo-app.toml").write_text(textwrap.dedent(COMPONENT))
    with open(root / "constraints" / "_sources.toml", "a") as handle:
        handle.write(textwrap.dedent(SOURCE))
    return Database.load(root)


def stack(version, gpu="H100", **extra):
    data = {"system": {"python": "3.12", "cuda": "13.0"}, "hardware": {"gpu": gpu}, "packages": {"demo-app": version}}
    data.update(extra)
    return data


def ids(report, severity=None):
    return {f.id for f in report.findings if severity is None or f.severity == severity}


def test_known_issue_is_a_warning_for_affected_releases_and_says_where_fixed(demo_db):
    report = check(stack("1.0"), database=demo_db)
    finding = next(f for f in report.findings if f.id == "demo.old-bug")
    assert finding.severity == "warning" and "fixed in 1.1" in finding.message
    assert report.ok


def test_known_issue_does_not_show_once_fixed(demo_db):
    assert "demo.old-bug" not in ids(check(stack("1.1"), database=demo_db))


def test_known_issue_conditions_limit_it(demo_db):
    assert "demo.old-bug" not in ids(check(stack("1.0", gpu="A100"), database=demo_db))


def test_behaviour_change_shows_from_the_release_that_brought_it(demo_db):
    assert "demo.new-default" in ids(check(stack("1.1"), database=demo_db), "warning")
    assert "demo.new-default" not in ids(check(stack("1.0"), database=demo_db))


def test_measured_note_only_under_its_conditions(demo_db):
    assert "demo.measured" in ids(check(stack("1.1", gpu="H200", model={"checkpoint_dtype": "int8"}), database=demo_db))
    assert "demo.measured" not in ids(check(stack("1.1", gpu="H100", model={"checkpoint_dtype": "int8"}), database=demo_db))
    assert "demo.measured" not in ids(check(stack("1.1", gpu="H200", model={"checkpoint_dtype": "bf16"}), database=demo_db))
    # a property the stack does not give is not assumed
    assert "demo.measured" not in ids(check(stack("1.1", gpu="H200"), database=demo_db))


def test_option_default_applies_when_the_flag_is_absent(demo_db):
    assert "demo.default-backend" in ids(check(stack("1.1"), database=demo_db))
    assert "demo.default-backend" not in ids(
        check(stack("1.1", options={"demo-app": {"backend": "fast"}}), database=demo_db)
    )


def test_env_condition(demo_db):
    assert "demo.env-off" in ids(check(stack("1.1", env={"DEMO_FAST": "0"}), database=demo_db))
    assert "demo.env-off" not in ids(check(stack("1.1"), database=demo_db))


OVERLAY = """
schema = 1

[component]
name = "vllm"
kind = "package"

[[release]]
version = "0.32.0"
source = "demo-1.0"
relax = ["transformers"]
requires = ["transformers>=5.16.1,<5.21"]
reason = "tested with 5.20.x by the demo project"
"""


@pytest.fixture
def overlay_db(tmp_path):
    root = tmp_path / "data"
    shutil.copytree(ROOT / "data", root)
    (root / "constraints" / "vllm.toml").write_text(textwrap.dedent(OVERLAY))
    with open(root / "constraints" / "_sources.toml", "a") as handle:
        handle.write(textwrap.dedent(SOURCE))
    return Database.load(root)


def test_curated_layer_can_relax_and_replace_a_metadata_bound(overlay_db):
    data = {"system": {"python": "3.12"}, "packages": {"vllm": "0.32.0", "transformers": "5.20.1"}}
    report = check(data, database=overlay_db)
    assert "requires:vllm==0.32.0:transformers" not in {f.id for f in report.errors}
    too_new = check({**data, "packages": {"vllm": "0.32.0", "transformers": "5.21.0"}}, database=overlay_db)
    finding = next(f for f in too_new.errors if f.id == "requires:vllm==0.32.0:transformers")
    assert finding.layer == "curated" and "curated requirement" in finding.message


def test_curated_change_without_a_reason_is_refused(tmp_path):
    root = tmp_path / "data"
    shutil.copytree(ROOT / "data", root)
    (root / "constraints" / "vllm.toml").write_text(textwrap.dedent(OVERLAY).replace('reason = "tested with 5.20.x by the demo project"\n', ""))
    with pytest.raises(Exception) as info:
        Database.load(root).component("vllm")
    assert "needs a reason" in str(info.value)
