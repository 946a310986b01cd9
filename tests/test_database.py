"""The bundled database, its loader and its lint."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from compat import Database, DatabaseError
from compat.knowledge.catalog import lookup_key, parse_compute_capability
from compat.knowledge.lint import lint_database

from .conftest import copy_database


def test_bundled_database_lints_clean(db):
    assert lint_database(db) == []


def test_every_gpu_the_seed_names_is_in_the_catalog(db):
    for name in ["A100 80GB", "H100", "H200", "L20X", "RTX 4090", "RTX 5080", "RTX 5090",
                 "RTX PRO 6000 Blackwell Server Edition", "B200", "B300", "GB300"]:
        assert db.catalog.find(name) is not None, name


@pytest.mark.parametrize(
    ("name", "cc"),
    [("V100", "7.0"), ("T4", "7.5"), ("A10G", "8.6"), ("L4", "8.9"), ("L40S", "8.9"), ("H20", "9.0"),
     ("GB200", "10.0"), ("B300", "10.3"), ("RTX 5090", "12.0"), ("DGX Spark GB10", "12.1")],
)
def test_common_gpus_carry_their_compute_capability(db, name, cc):
    assert db.catalog.find(name).compute_capability == Version(cc)


@pytest.mark.parametrize(("name", "gfx"), [("MI300X", "gfx942"), ("MI325X", "gfx942"), ("MI355X", "gfx950")])
def test_amd_gpus_carry_their_gfx_target(db, name, gfx):
    gpu = db.catalog.find(name)
    assert gpu.gfx_target == gfx and gpu.accelerator == "rocm" and gpu.compute_capability is None


def test_apple_silicon_is_mps(db):
    assert db.catalog.find("Apple M2 Max").accelerator == "mps"


def test_lookup_key_ignores_vendor_and_punctuation():
    assert lookup_key("NVIDIA GeForce RTX 5090") == lookup_key("rtx-5090")


@pytest.mark.parametrize("bad", ["ninety", "9", "sm_9", "9.0.1"])
def test_bad_compute_capability(bad):
    with pytest.raises(ValueError):
        parse_compute_capability(bad)


def test_components_load_lazily(db):
    fresh = Database.load()
    fresh.component("vllm")
    assert set(fresh._components) == {"vllm"}


def test_curated_overlay_keeps_metadata_and_adds_requirements(db):
    release = db.component("flashinfer-python").release(Version("0.7.2"))
    assert release.commit == "d84335d"
    assert release.requires_python is not None  # from the snapshot
    layers = {d.layer for d in release.dependencies}
    assert layers == {"metadata", "curated"}


def test_snapshot_marks_pre_releases(db):
    assert db.component("flashinfer-python").release(Version("0.7.2rc5")).is_prerelease
    assert not db.component("flashinfer-python").release(Version("0.7.2")).is_prerelease


@pytest.fixture
def broken_db(tmp_path):
    return copy_database(tmp_path / "data")


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_unknown_key_in_a_rule_names_file_and_key(broken_db):
    edit(broken_db / "constraints" / "ltx-2.toml", 'kind = "requirement"', 'kind = "requirement"\nseverty = "error"')
    with pytest.raises(DatabaseError) as info:
        Database.load(broken_db).component("ltx-2").rules  # every rule, parsed (lint, db show)
    assert info.value.file.endswith("ltx-2.toml")
    assert "rule[0].severty" in info.value.key and "severity" in info.value.message


def test_bad_specifier_in_a_rule(broken_db):
    edit(broken_db / "constraints" / "ltx-2.toml", 'releases = ">=1.5.0"', 'releases = "=>1.5.0"')
    with pytest.raises(DatabaseError) as info:
        Database.load(broken_db).component("ltx-2").rules
    assert "releases" in info.value.key
    with pytest.raises(DatabaseError):  # a range that does not parse counts as covering: reading it says why
        Database.load(broken_db).component("ltx-2").rules_for(Version("1.5.0"))


def test_bad_condition_in_a_rule(broken_db):
    edit(broken_db / "constraints" / "ltx-2.toml", 'require = { compute_capability = ">=8.9" }',
         'require = { compute_capabilty = ">=8.9" }')
    with pytest.raises(DatabaseError) as info:
        Database.load(broken_db).component("ltx-2").rules
    assert info.value.key == "rule[0].require.compute_capabilty"


def test_a_check_reads_the_rules_and_builds_of_its_release_alone(broken_db):
    """A rule of other releases is parsed when every rule is listed (lint,
    db show), not by a check of one release: one that does not parse stops
    lint, and not a check it cannot concern."""
    edit(broken_db / "constraints" / "ltx-2.toml", 'require = { compute_capability = ">=8.9" }',
         'require = { compute_capabilty = ">=8.9" }')
    component = Database.load(broken_db).component("ltx-2")
    older = component.rules_for(Version("1.1.0"))  # rule[0] is of >=1.1.7: not read
    assert older and all(r.covers(Version("1.1.0")) for r in older)
    with pytest.raises(DatabaseError, match="compute_capabilty"):
        component.rules_for(Version("1.5.0"))
    assert any("compute_capabilty" in str(p) for p in lint_database(Database.load(broken_db)))
    torch = Database.load().component("torch")
    chosen = torch.builds_for(Version("2.13.0"))
    assert chosen and all(b.covers(Version("2.13.0")) for b in chosen)
    assert len(torch.unread_builds._made) == len(chosen) < len(torch.unread_builds)
    assert chosen == [b for b in torch.builds if b.covers(Version("2.13.0"))]


def test_lint_reports_duplicate_ids_and_unknown_options(broken_db):
    edit(broken_db / "constraints" / "ltx-2.toml", 'id = "ltx-2.fp8-cast.storage-only"', 'id = "vllm-omni.fa3-fp8.sm90"')
    edit(broken_db / "constraints" / "ltx-2.toml", 'when = { options = { quantization = "fp8-cast" } }', 'when = { options = { quantisation = "fp8-cast" } }')
    problems = [str(p) for p in lint_database(Database.load(broken_db))]
    assert any("ID also used" in p for p in problems)
    assert any("quantisation" in p for p in problems)


def drop_offsets(path):
    """A snapshot edited by hand: without the header's line offsets, which the edit made stale."""
    header, rest = path.read_text().split("\n", 1)
    data = json.loads(header)
    del data["lines"]
    path.write_text(json.dumps(data) + "\n" + rest)


def test_lint_reports_bad_requires_dist_in_a_snapshot(broken_db):
    edit(broken_db / "metadata" / "vllm.jsonl", '"regex"', '"regex >>> 1"')
    drop_offsets(broken_db / "metadata" / "vllm.jsonl")
    problems = [str(p) for p in lint_database(Database.load(broken_db))]
    assert any("invalid requirement" in p and "vllm.jsonl" in p for p in problems)


def test_lint_reports_unknown_gpu_names(broken_db):
    edit(broken_db / "constraints" / "ltx-2.toml", 'when = { options = { quantization = "fp8-cast" } }',
         'when = { options = { quantization = "fp8-cast" }, gpu = ["H999"] }')
    assert any("names GPU 'h999'" in str(p) for p in lint_database(Database.load(broken_db)))


def test_not_a_database(tmp_path):
    with pytest.raises(DatabaseError):
        Database.load(tmp_path)


def test_the_shared_database_is_loaded_once_and_reloaded_when_its_files_change(tmp_path):
    import os
    import time

    root = copy_database(tmp_path / "data")
    first = Database.shared(root)
    assert Database.shared(root) is first and Database.shared(str(root) + "/") is first
    path = root / "constraints" / "vllm.toml"
    later = time.time_ns() + 5_000_000_000
    os.utime(path, ns=(later, later))
    second = Database.shared(root)
    assert second is not first and Database.shared(root) is second


def test_check_reuses_the_bundled_database(monkeypatch):
    import compat

    from .conftest import EXAMPLES

    stack = EXAMPLES / "h200-vllm.toml"
    assert compat.check(stack).ok

    def no_reload(*args, **kwargs):
        raise AssertionError("the bundled database was loaded again")

    monkeypatch.setattr(Database, "load", no_reload)
    assert compat.check(stack).ok


def test_the_releases_a_resolution_lists_are_those_is_yanked_keeps():
    """newest_unyanked takes one pass over a release list: it agrees with
    is_yanked release by release (curated statuses and made releases too)."""
    from compat.knowledge.database import is_yanked, newest_unyanked

    db = Database.load()
    for name in ("vllm", "torch", "transformers", "comfyui", "sglang", "numpy", "flashinfer-python"):
        component = db.component(name)
        if component.releases:
            component.release(component.newest_first()[-1])  # one made before the list
        assert list(newest_unyanked(component)) == [v for v in component.newest_first() if not is_yanked(component, v)]
