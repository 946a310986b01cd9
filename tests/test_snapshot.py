"""Snapshot files: the header's line offsets, and what a reader does with a stale or broken one."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from compat import Database, DatabaseError
from compat.knowledge.lint import lint_database
from compat.knowledge.snapshot import Snapshot, SnapshotRelease, lazy_releases, read_snapshot, write_snapshot

from .test_db_readers import small_database


def make(tmp_path, versions=("1.0", "1.1", "2.0rc1", "2.0")):
    releases = [
        SnapshotRelease(v, "2026-01-01T00:00:00Z", ">=3.10", [f"dep>={i}", "other; extra == 'x'"], yanked=v == "1.1")
        for i, v in enumerate(versions)
    ]
    path = tmp_path / "pkg.jsonl"
    write_snapshot(Snapshot("pkg", "https://pypi.org/simple/", "2026-12-01", releases, True, versions, ("1.1",)), str(path))
    return path


def header(path):
    return json.loads(path.read_text().split("\n", 1)[0])


def test_the_header_locates_every_release_line(tmp_path):
    path = make(tmp_path)
    raw = path.read_bytes()
    start = raw.index(b"\n") + 1
    for version, offset, length, yanked in header(path)["lines"]:
        line = json.loads(raw[start + offset : start + offset + length])
        assert line["version"] == version and line.get("yanked", False) is yanked
    assert read_snapshot(str(path)).releases[1].yanked  # lint's full read agrees with the offsets


def test_a_check_reads_only_the_lines_it_needs(tmp_path, monkeypatch):
    path = make(tmp_path)
    _, releases = lazy_releases(str(path))
    assert [str(r.version) for r in releases] == ["1.0", "1.1", "2.0rc1", "2.0"]
    assert [r.status for r in releases] == ["release", "yanked", "pre-release", "release"]
    assert releases[3].requires_dist == ("dep>=3", "other; extra == 'x'")
    assert str(releases[3].requires_python) == ">=3.10"


def test_a_snapshot_without_offsets_is_read_whole(tmp_path):
    path = make(tmp_path)
    data = header(path)
    del data["lines"]
    path.write_text(json.dumps(data) + "\n" + path.read_text().split("\n", 1)[1])
    _, releases = lazy_releases(str(path))
    assert releases[2].requires_dist == ("dep>=2", "other; extra == 'x'")


def test_a_stale_offset_is_a_database_error_not_a_wrong_release(tmp_path):
    path = make(tmp_path)
    path.write_text(path.read_text().replace('"dep>=0"', '"dep>=0,<9"'))  # line 1 grows: the others move
    _, releases = lazy_releases(str(path))
    with pytest.raises(DatabaseError) as info:
        releases[3].requires_dist
    assert info.value.key == "lines" and "2.0" in info.value.message
    with pytest.raises(DatabaseError, match="offsets do not match"):
        read_snapshot(str(path))


@pytest.mark.parametrize(
    "lines",
    ['"x"', '[["1.0", "a", 3, false]]', '[["1.0", 0]]', '[[1, 0, 3, false]]', "[null]"],
)
def test_malformed_offsets_are_a_database_error(tmp_path, lines):
    path = make(tmp_path)
    text = path.read_text()
    data = header(path)
    head = json.dumps({**data, "lines": None})
    path.write_text(head.replace("null", lines) + "\n" + text.split("\n", 1)[1])
    with pytest.raises(DatabaseError) as info:
        _, releases = lazy_releases(str(path))
        for release in releases:
            release.requires_dist
    assert info.value.key == "lines"


def test_lint_catches_a_hand_edit_that_left_the_offsets_stale(tmp_path):
    data = small_database(tmp_path / "data")
    path = data / "metadata" / "vllm.jsonl"
    path.write_text(path.read_text().replace('"regex"', '"regex>=2024"', 1))
    problems = [str(p) for p in lint_database(Database.load(data))]
    assert any("vllm.jsonl" in p and "offsets" in p for p in problems)


def test_the_bundled_snapshots_carry_offsets(db):
    release = db.component("transformers").releases[Version("5.20.0")]
    assert any(r.startswith("huggingface-hub") for r in release.requires_dist)
