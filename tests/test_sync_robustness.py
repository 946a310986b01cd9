"""`compat db sync` never loses what a snapshot holds, and never fails on
metadata it cannot use (docs/reliability.md, "db sync").

An index need not give upload times (PEP 691 makes `upload-time` optional),
may give ones that cannot be true, or may date a release before `since`
that the snapshot already holds: none of these drops a release. A
Requires-Dist marker that packaging parses but cannot evaluate on package
metadata (`dependency_groups == "x"`, `"a" < "b"`, `"x" in extras`) refuses
its release, as any other bad metadata does, instead of ending the run.
The indexes are served on 127.0.0.1 (tests/index_server.py).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.markers import default_environment
from packaging.requirements import Requirement

from compat.cli import cli
from compat.errors import DatabaseError
from compat.knowledge.snapshot import decode_entry, requirement_problem

from .index_server import entry, hostile_database, metadata, wheel
from .index_server import run_sync as run

OLD = "2020-01-01T00:00:00Z"  # before the test plan's since (2026-01-01)
NEW = "2026-02-01T10:00:00Z"


@pytest.fixture
def db(tmp_path):
    return hostile_database(tmp_path / "data")


def serve(hostile, project, releases):
    """Serve `project` with one wheel per (version, upload time or None, Requires-Dist lines)."""
    files = []
    for version, uploaded, requires in releases:
        name = f"{project}-{version}-py3-none-any.whl"
        body = wheel(project, version, metadata(project, version, *(f"Requires-Dist: {line}" for line in requires)))
        file = entry(name, hostile.file(name, body), body)
        if uploaded is None:
            del file["upload-time"]
        else:
            file["upload-time"] = uploaded
        files.append(file)
    hostile.project(project, files)


def snapshot(db, name="alpha"):
    """(header, {version: release line}) of a package's snapshot."""
    header, *lines = (db / "metadata" / f"{name}.jsonl").read_text().splitlines()
    return json.loads(header), {r["version"]: r for r in map(json.loads, lines)}


def lint_clean(db):
    """Whether `db lint` finds nothing wrong with what sync wrote: its only
    problems are the sources the fixture borrowed that no fact of it cites."""
    result = CliRunner().invoke(cli, ["db", "lint", "--db", str(db)])
    problems = [line for line in result.output.splitlines() if ": " in line]
    return result.exit_code in (0, 1) and all(line.endswith("is cited by no fact") for line in problems)


# -- upload times ------------------------------------------------------------------------------


def test_a_release_without_an_upload_time_is_kept_without_a_date(db, hostile):
    serve(hostile, "alpha", [("1.0", None, []), ("2.0", NEW, [])])
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    header, lines = snapshot(db)
    assert list(lines) == ["1.0", "2.0"]  # pip and uv see 1.0: nothing says it is older than since
    assert "uploaded" not in lines["1.0"] and lines["2.0"]["uploaded"] == "2026-02-01"
    assert lint_clean(db)


@pytest.mark.parametrize("uploaded", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1970-01-01T00:00:00Z"])
def test_an_upload_time_that_cannot_be_true_is_read_as_unknown(db, hostile, uploaded):
    serve(hostile, "alpha", [("1.0", uploaded, []), ("2.0", NEW, [])])
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    assert f"ignored: alpha: the upload time of 1 file(s) cannot be true ({uploaded}); read as unknown" in result.output
    _, lines = snapshot(db)
    assert list(lines) == ["1.0", "2.0"] and "uploaded" not in lines["1.0"]


def test_releases_the_snapshot_holds_are_kept_whatever_their_date(db, hostile):
    serve(hostile, "alpha", [("1.0", NEW, []), ("2.0", NEW, [])])
    assert run(db, hostile.url).exit_code == 0
    serve(hostile, "alpha", [("1.0", OLD, []), ("2.0", OLD, []), ("3.0", NEW, [])])  # the index now dates them before since
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    _, lines = snapshot(db)
    assert list(lines) == ["1.0", "2.0", "3.0"]  # read again: the index's word on each
    assert lines["1.0"]["uploaded"] == "2020-01-01" and lines["3.0"]["uploaded"] == "2026-02-01"
    assert lint_clean(db)
    # --allow-removal accepts the loss, as for a release the index no longer lists
    assert run(db, hostile.url, "--allow-removal").exit_code == 0
    assert list(snapshot(db)[1]) == ["3.0"]


def test_a_required_release_stays_when_a_newer_one_meets_the_requirement(db, hostile):
    """beta is untracked: the sync keeps the newest release meeting alpha's
    requirement, and a newer one does not push the one the snapshot holds out."""
    serve(hostile, "alpha", [("2.0", NEW, ["beta>=1"])])
    serve(hostile, "beta", [("1.0", OLD, []), ("1.1", OLD, [])])
    assert run(db, hostile.url).exit_code == 0
    assert list(snapshot(db, "beta")[1]) == ["1.1"]
    serve(hostile, "beta", [("1.0", OLD, []), ("1.1", OLD, []), ("1.2", OLD, [])])
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    header, lines = snapshot(db, "beta")
    assert list(lines) == ["1.1", "1.2"] and header["versions"] == ["1.0", "1.1", "1.2"]
    assert lint_clean(db)


# -- markers that parse but cannot be evaluated --------------------------------------------------

UNUSABLE = [
    ('foo; dependency_groups == "x"', "dependency_groups is not a variable of package metadata's markers"),
    ('foo; "a" < "b"', "it compares two strings"),
    ('foo; "x" in extras', "extras is not a variable of package metadata's markers"),
    ('foo; extra ~= "1.0"', "~= compares versions, and extra is not one"),
    ('foo; os_name === "posix"', "=== compares versions, and os_name is not one"),
]


@pytest.mark.parametrize(("line", "why"), UNUSABLE, ids=[line for line, _ in UNUSABLE])
def test_a_marker_that_cannot_be_evaluated_refuses_its_release(db, hostile, line, why):
    serve(hostile, "alpha", [("2.0", NEW, ["beta>=1", line])])
    serve(hostile, "beta", [("1.0", NEW, [])])
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    assert f"refused release: alpha 2.0 (alpha-2.0-py3-none-any.whl): Requires-Dist {line!r} cannot be evaluated" in result.output
    assert why in result.output
    release = snapshot(db)[1]["2.0"]
    assert release["metadata"] == "unknown" and release["requires_dist"] == []
    assert (db / "metadata" / "beta.jsonl").exists()  # the release's usable lines are still followed
    assert lint_clean(db)


def test_a_check_of_a_refused_release_works(db, hostile, tmp_path):
    serve(hostile, "alpha", [("2.0", NEW, ['foo; "x" in extras'])])
    assert run(db, hostile.url).exit_code == 0
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nalpha = "2.0"\n')
    result = CliRunner().invoke(cli, ["check", str(stack), "--db", str(db)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output


@pytest.mark.parametrize(("line", "why"), UNUSABLE, ids=[line for line, _ in UNUSABLE])
def test_the_snapshot_reader_refuses_such_a_line_with_its_key(line, why):
    text = json.dumps({"version": "2.0", "requires_dist": ["beta", line]})
    with pytest.raises(DatabaseError, match=r"alpha\.jsonl:2: requires_dist\[1\]: invalid requirement") as caught:
        decode_entry(text, "alpha.jsonl", 2)
    assert why in str(caught.value)


# -- the validator agrees with packaging -------------------------------------------------------

# What a check evaluates markers with (sources/stack.py: marker_environment),
# and machines whose values are not versions.
_ENVIRONMENTS = [
    {**default_environment(), "python_version": "3.12", "python_full_version": "3.12.0", "platform_release": "",
     "platform_version": "", "implementation_version": "3.12.0"},
    {**default_environment(), "sys_platform": "win32", "platform_release": "10", "platform_version": "10.0.26100"},
    {**default_environment(), "platform_release": "6.8.0-49-generic", "implementation_version": "7.3.17"},
]
_SIDES = st.sampled_from(["python_version", "python_full_version", "os_name", "sys_platform", "platform_release",
                          "platform_version", "platform_machine", "implementation_name", "implementation_version",
                          "platform_python_implementation", "extra", "extras", "dependency_groups",
                          "'3'", "'3.10'", "'3.10.*'", "'1.0'", "'x'", "'linux'", "''", "'6.8.0-49-generic'"])
_OPERATORS = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "~=", "===", "in", "not in"])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_SIDES, _OPERATORS, _SIDES), min_size=1, max_size=3), st.sampled_from(["and", "or"]))
def test_a_marker_the_validator_accepts_evaluates_everywhere(comparisons, joiner):
    line = "beta; " + f" {joiner} ".join(f"{left} {op} {right}" for left, op, right in comparisons)
    try:
        marker = Requirement(line).marker
    except ValueError:  # packaging does not parse it: the validator says so
        assert requirement_problem(line) is not None
        return
    if requirement_problem(line) is not None:
        return
    assert marker is not None
    for environment in _ENVIRONMENTS:
        for extra in ("", "x"):
            marker.evaluate({**environment, "extra": extra})  # raises if the validator let a bad one through
