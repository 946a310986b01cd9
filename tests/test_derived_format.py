"""The derived files (``data/derived/<name>.toml``, knowledge/derived.py):
facts a script read from an upstream's own files, each citing the file,
commit and line, laid beside the component's own facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat import DatabaseError, check
from compat.knowledge.database import Database
from compat.knowledge.lint import lint_database

COMMIT = "0123456789abcdef0123456789abcdef01234567"

SOURCES = """\
schema = 1

[[source]]
id = "kern-notes"
project = "kern"
title = "kern release notes"
kind = "documentation"
"""

DERIVED = f"""\
# Written by tools/derive_kern.py; do not edit.
schema = 1
package = "kern"
tool = "tools/derive_kern.py"

[[source]]
id = "kern@v2.0.0:setup.py#L12"
project = "kern"
title = "kern v2.0.0, setup.py line 12 (the -gencode list)"
kind = "code"
url = "https://github.com/example/kern/blob/{COMMIT}/setup.py#L12"
ref = "v2.0.0"
commit = "{COMMIT}"
path = "setup.py"
line = 12
date = 2026-01-02

[[source]]
id = "kern@v2.0.0:csrc/api.cpp#L40"
project = "kern"
title = "kern v2.0.0, csrc/api.cpp line 40 (TORCH_CHECK on the compute capability)"
kind = "code"
commit = "{COMMIT}"
path = "csrc/api.cpp"
line = 40

[[build]]
id = "kern.derived.2.0.0.pypi"
releases = "==2.0.0"
index = "pypi"
accelerator = "cuda"
cuda = "12.8"
platforms = ["linux-x86_64"]
archs = ["8.0", "9.0"]
source = "kern@v2.0.0:setup.py#L12"

[[rule]]
id = "kern.derived.2.0.0.sm80-floor"
kind = "requirement"
releases = "==2.0.0"
when = {{ accelerator = "cuda" }}
require = {{ compute_capability = ">=8.0" }}
message = "kern 2.0.0 refuses GPUs older than sm_80: \\"kern only supports Ampere GPUs or newer\\""
source = "kern@v2.0.0:csrc/api.cpp#L40"
"""


def _make(root: Path, derived: str = DERIVED, curated: str | None = None) -> Database:
    (root / "constraints").mkdir(parents=True)
    (root / "metadata").mkdir()
    (root / "derived").mkdir()
    bundled = Path(Database.load().root, "constraints", "_sources.toml").read_text()
    (root / "constraints" / "_sources.toml").write_text(bundled + "\n" + SOURCES.replace("schema = 1\n", ""))
    for name in ("cuda.toml", "gpus.toml", "python.toml"):
        (root / name).write_text(Path(Database.load().root, name).read_text())
    if curated is not None:
        (root / "constraints" / "kern.toml").write_text(curated)
    header = {"schema": 1, "name": "kern", "index": "https://index.example/simple/", "taken": "2026-12-01",
              "versions": ["2.0.0"]}
    release = {"version": "2.0.0", "requires_dist": [], "tags": ["cp312-cp312-manylinux_2_28_x86_64"]}
    (root / "metadata" / "kern.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(release) + "\n")
    (root / "derived" / "kern.toml").write_text(derived)
    return Database.load(root)


def stack(gpu: str) -> dict:
    return {"system": {"python": "3.12", "cuda": "12.8", "driver": "570.133.20", "platform": "linux-x86_64"},
            "hardware": {"gpu": gpu}, "packages": {"kern": "2.0.0"}}


def test_a_gpu_outside_a_derived_build_s_list_is_an_error_citing_the_file_commit_and_line(tmp_path):
    db = _make(tmp_path)
    report = check(stack("RTX 4090"), database=db)  # sm_89: no sm_89 kernels, and 8.0's run on 8.9 (same major)
    assert report.ok
    report = check(stack("RTX 5090"), database=db)  # sm_120
    arch = next(f for f in report.errors if f.id == "arch:kern==2.0.0")
    assert "sm_80, sm_90" in arch.message
    cited = arch.source.to_dict()
    assert cited["commit"] == COMMIT and cited["path"] == "setup.py" and cited["line"] == 12
    assert COMMIT[:12] in arch.source.cite() and COMMIT not in arch.source.cite()


def test_a_derived_rule_refuses_what_the_code_refuses(tmp_path):
    db = _make(tmp_path)
    report = check(stack("T4"), database=db)
    assert "kern.derived.2.0.0.sm80-floor" in {f.id for f in report.errors}
    assert check(stack("A100"), database=db).ok


def test_lint_finds_nothing_wrong_with_a_well_formed_derived_file(tmp_path):
    # (the copied _sources.toml cites what this small database lacks: only kern's facts are looked at)
    problems = [str(p) for p in lint_database(_make(tmp_path)) if "derived" in str(p)]
    assert problems == []


@pytest.mark.parametrize("old, new, key", [
    (f'commit = "{COMMIT}"\npath = "setup.py"', 'commit = "0123456"\npath = "setup.py"', "commit"),
    ("line = 12\n", "", "line"),
    ('path = "setup.py"\n', "", "path"),
    ('source = "kern@v2.0.0:setup.py#L12"\n', 'source = "kern-notes"\n', "source"),
    ('source = "kern@v2.0.0:setup.py#L12"\n', "", "source"),
    ('tool = "tools/derive_kern.py"', 'tool = "by hand"', "tool"),
    ('package = "kern"', 'package = "other"', "package"),
    ("line = 12\n", 'line = "12"\n', "line"),
    ('kind = "code"\nurl', 'kind = "release"\nurl', "kind"),
    ('source = "kern@v2.0.0:setup.py#L12"\n', 'source = ["kern@v2.0.0:setup.py#L12"]\n', "source"),
])
def test_a_derived_fact_that_does_not_say_where_it_was_read_is_refused(tmp_path, old, new, key):
    assert old in DERIVED
    db = _make(tmp_path, DERIVED.replace(old, new, 1))
    with pytest.raises(DatabaseError) as caught:
        db.component("kern")
    assert caught.value.file.endswith("kern.toml") and key in (caught.value.key or "")
    problems = [str(p) for p in lint_database(db)]
    assert len(problems) == 1 and "derived" in problems[0] and key in problems[0]


def test_a_fact_in_both_homes_is_refused(tmp_path):
    curated = """\
schema = 1
[component]
name = "kern"
[[build]]
id = "kern.derived.2.0.0.pypi"
releases = "==2.0.0"
accelerator = "cuda"
cuda = "12.8"
source = "kern-notes"
"""
    db = _make(tmp_path, curated=curated)
    problems = [str(p) for p in lint_database(db)]
    assert any("kern.derived.2.0.0.pypi" in p for p in problems), problems


def test_a_source_id_in_both_files_is_refused(tmp_path):
    db = _make(tmp_path, DERIVED.replace('id = "kern@v2.0.0:csrc/api.cpp#L40"', 'id = "kern-notes"')
               .replace('source = "kern@v2.0.0:csrc/api.cpp#L40"', 'source = "kern-notes"'))
    with pytest.raises(DatabaseError, match="kern-notes"):
        db.sources


def test_a_derived_file_of_a_package_the_database_does_not_know_is_a_lint_problem(tmp_path):
    _make(tmp_path)
    ghost = DERIVED.replace('package = "kern"', 'package = "ghost"').replace("kern@", "ghost@").replace("kern.", "ghost.")
    (tmp_path / "derived" / "ghost.toml").write_text(ghost)
    problems = [str(p) for p in lint_database(Database.load(tmp_path))]
    assert any("ghost.toml" in p and "does not track" in p for p in problems), problems


def test_an_inferred_rule_is_a_warning_at_most(tmp_path):
    inferred = DERIVED.replace('source = "kern@v2.0.0:csrc/api.cpp#L40"\n',
                               'source = "kern@v2.0.0:csrc/api.cpp#L40"\ninferred = true\nbasis = "a sibling build"\n')
    db = _make(tmp_path, inferred)
    found = next(f for f in check(stack("T4"), database=db).findings if f.id == "kern.derived.2.0.0.sm80-floor")
    assert found.severity == "warning"
    stated = _make(tmp_path / "again", inferred.replace('inferred = true', 'severity = "error"\ninferred = true'))
    with pytest.raises(DatabaseError, match="warning at most"):
        stated.component("kern").rules


# -- a second derived file of one package (derived/<name>.<topic>.toml) ------------------------------------

SECOND = f"""\
# Written by tools/derive_kern_wheels.py; do not edit.
schema = 1
package = "kern"
tool = "tools/derive_kern_wheels.py"

[[source]]
id = "kern@2.0.0:kern-2.0.0-cp312-cp312-manylinux_2_28_aarch64.whl"
project = "kern"
title = "kern 2.0.0 wheel kern-2.0.0-cp312-cp312-manylinux_2_28_aarch64.whl"
kind = "artifact"
path = "kern-2.0.0-cp312-cp312-manylinux_2_28_aarch64.whl"
sha256 = "{'a' * 64}"

[[source]]
id = "kern@2.0.0:kern-2.0.0-cp311-cp311-manylinux_2_28_aarch64.whl"
project = "kern"
title = "kern 2.0.0 wheel kern-2.0.0-cp311-cp311-manylinux_2_28_aarch64.whl"
kind = "artifact"
path = "kern-2.0.0-cp311-cp311-manylinux_2_28_aarch64.whl"
sha256 = "{'b' * 64}"

[[build]]
id = "kern.derived.2.0.0.pypi.linux-aarch64"
releases = "==2.0.0"
index = "pypi"
accelerator = "cpu"
platforms = ["linux-aarch64"]
source = "kern@2.0.0:kern-2.0.0-cp312-cp312-manylinux_2_28_aarch64.whl"
also = ["kern@2.0.0:kern-2.0.0-cp311-cp311-manylinux_2_28_aarch64.whl"]
"""


def test_a_second_derived_file_of_a_package_joins_the_first(tmp_path):
    db = _make(tmp_path)
    (tmp_path / "derived" / "kern.wheels.toml").write_text(SECOND)
    db = Database.load(tmp_path)
    assert db.derived_names() == {"kern"} and len(db.derived("kern")) == 2
    builds = {b.id: b for b in db.component("kern").builds}
    assert set(builds) == {"kern.derived.2.0.0.pypi", "kern.derived.2.0.0.pypi.linux-aarch64"}
    assert builds["kern.derived.2.0.0.pypi.linux-aarch64"].also == (
        "kern@2.0.0:kern-2.0.0-cp311-cp311-manylinux_2_28_aarch64.whl",)
    arm = {**stack("GH200"), "system": {**stack("GH200")["system"], "platform": "linux-aarch64"}}
    assert "accelerator:kern==2.0.0" in {f.id for f in check(arm, database=db).warnings}
    assert [str(p) for p in lint_database(db) if "/derived/" in str(p)] == []


def test_a_build_citing_a_further_source_it_lacks_is_refused(tmp_path):
    _make(tmp_path)
    (tmp_path / "derived" / "kern.wheels.toml").write_text(SECOND.replace(
        'also = ["kern@2.0.0:kern-2.0.0-cp311', 'also = ["kern@2.0.0:kern-2.0.0-cp310'))
    db = Database.load(tmp_path)
    with pytest.raises(DatabaseError) as caught:
        db.component("kern")
    assert caught.value.file.endswith("kern.wheels.toml") and "also[0]" in (caught.value.key or "")


def test_a_second_file_of_an_untracked_package_is_named_by_lint(tmp_path):
    _make(tmp_path)
    (tmp_path / "derived" / "ghost.wheels.toml").write_text(SECOND.replace('package = "kern"', 'package = "ghost"'))
    problems = [str(p) for p in lint_database(Database.load(tmp_path))]
    assert any("ghost.wheels.toml" in p and "does not track" in p for p in problems), problems


@pytest.mark.parametrize("entry, key", [
    ('compute_capability = "ten"\ncuda = "12.8"\nsource = "kern-notes"', "compute_capability"),
    ('compute_capability = ">=10.0"\nsource = "kern-notes"', "cuda"),
    ('compute_capability = ">=10.0"\ncuda = "12.8"\nsource = "kern-notes"\nnote = 1', "note"),
])
def test_a_malformed_sass_entry_of_cuda_toml_is_one_line_naming_the_key(tmp_path, entry, key):
    db = _make(tmp_path)
    (tmp_path / "cuda.toml").write_text((tmp_path / "cuda.toml").read_text() + f"\n[[sass]]\n{entry}\n")
    db = Database.load(tmp_path)
    with pytest.raises(DatabaseError) as caught:
        db.cuda
    assert caught.value.file.endswith("cuda.toml") and key in (caught.value.key or "")


PER_RUNTIME = DERIVED.replace('cuda = "12.8"\n', 'cuda = "11.8"\ncudas = ["11.8", "12.8"]\n', 1)


def test_a_build_with_a_library_per_cuda_runtime_fits_each_runtime_s_major(tmp_path):
    db = _make(tmp_path, PER_RUNTIME)
    for cuda, fits in (("12.8", True), ("11.8", True), ("13.0", False)):
        report = check({**stack("A100 80GB"), "system": {**stack("A100 80GB")["system"], "cuda": cuda}}, database=db)
        assert ("build-cuda:kern==2.0.0" not in {f.id for f in report.errors}) is fits, (cuda, report.errors)
        if not fits:
            assert "its libraries are for CUDA 11.8, 12.8 only" in report.errors[0].message


@pytest.mark.parametrize("cudas, key", [('["11.8", "x"]', "cudas[1]"), ('["12.0", "12.8"]', "cuda")])
def test_a_malformed_cudas_is_one_line_naming_the_key(tmp_path, cudas, key):
    db = _make(tmp_path, PER_RUNTIME.replace('cudas = ["11.8", "12.8"]', f"cudas = {cudas}"))
    with pytest.raises(DatabaseError) as caught:
        check(stack("A100 80GB"), database=db)
    assert caught.value.key.endswith(key) and "\n" not in str(caught.value)
    problems = [str(p) for p in lint_database(db) if "derived" in str(p)]
    assert len(problems) == 1 and key in problems[0]
