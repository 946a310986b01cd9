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
