"""Requirements that run in a circle through an overlay's applications.

acme-a 1.0 requires acme-b==1.0, which requires acme-a>=2.0: no installer
can install acme-a 1.0. check and resolve agree on it (exit 1, the
requirement that fails), which needs the whole install judged: acme-b is
no package the stack names or the database tracks."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from compat.cli import cli

from .test_layers import ACME_SOURCES, overlay


def _application(name: str, releases: list[tuple[str, str]]) -> str:
    text = f'schema = 1\n\n[component]\nname = "{name}"\nkind = "application"\n'
    for version, requirement in releases:
        text += (f'\n[[release]]\nversion = "{version}"\ndate = 2026-11-02\nrequires = ["{requirement}"]\n'
                 'reason = "a circle"\nsource = "acme-policy"\n')
    return text


@pytest.fixture
def circle(tmp_path: Path) -> Path:
    overlay(tmp_path / "org", {
        "constraints/_sources.toml": ACME_SOURCES,
        "constraints/acme-a.toml": _application("acme-a", [("1.0", "acme-b==1.0")]),
        "constraints/acme-b.toml": _application("acme-b", [("1.0", "acme-a>=2.0")]),
    })
    stack = tmp_path / "deploy" / "stack.toml"
    stack.parent.mkdir()
    stack.write_text(textwrap.dedent('''\
        [system]
        python = "3.12"
        [packages]
        acme-a = "1.0"
        [compat]
        overlay = "../org"
        '''))
    return stack


@pytest.mark.parametrize("command", ["check", "resolve"])
def test_a_circle_that_refuses_the_pinned_release_fails_check_and_resolve_alike(circle, command):
    result = CliRunner().invoke(cli, [command, str(circle)])
    assert result.exit_code == 1, result.output
    assert "requires:acme-b==1.0:acme-a" in result.output and "OK:" not in result.output


def _two_release_circle(tmp_path: Path, way_out: bool) -> Path:
    # a 1.0 needs b 2.0, which needs a 2.0, which needs b 1.0, which needs a 1.0: resolvelib re-pins
    # each in turn for ever; backtracked as conflicts, the circle is proved to have no way out
    a = [("1.0", "acme-b==2.0"), ("2.0", "acme-b==1.0")] + ([("3.0", "acme-b>=1.0")] if way_out else [])
    b = [("1.0", "acme-a==1.0"), ("2.0", "acme-a==2.0")] + ([("3.0", "acme-a==3.0")] if way_out else [])
    overlay(tmp_path / "org", {
        "constraints/_sources.toml": ACME_SOURCES,
        "constraints/acme-a.toml": _application("acme-a", a),
        "constraints/acme-b.toml": _application("acme-b", b),
    })
    stack = tmp_path / "deploy" / "stack.toml"
    stack.parent.mkdir()
    stack.write_text('[system]\npython = "3.12"\n[packages]\nacme-a = ">=1"\n[compat]\noverlay = "../org"\n')
    return stack


@pytest.mark.parametrize("command", ["check", "resolve"])
def test_a_circle_of_two_releases_each_is_proved_to_have_no_solution(tmp_path, command):
    result = CliRunner().invoke(cli, [command, str(_two_release_circle(tmp_path, way_out=False))])
    assert result.exit_code == 1, result.output  # not 2: "gave up after 2000 rounds"
    assert "unresolvable" in result.output and "gave up" not in result.output


def test_a_circle_with_a_way_out_resolves_to_it(tmp_path):
    result = CliRunner().invoke(cli, ["resolve", str(_two_release_circle(tmp_path, way_out=True))])
    assert result.exit_code == 0, result.output
    assert 'acme-a = "3.0"' in result.output and 'acme-b = "3.0"' in result.output
