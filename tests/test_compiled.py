"""The JSON rendering of the database's TOML files that the wheel carries."""

from __future__ import annotations

import json
import sys

import pytest

from compat import _compiled

from .conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FILES = sorted((ROOT / "data").rglob("*.toml"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_rendering_reads_back_as_the_toml_parses(tmp_path, path):
    text = path.read_text(encoding="utf-8")
    copy = tmp_path / path.name
    copy.write_text(text, encoding="utf-8")
    (tmp_path / (path.name + _compiled.SUFFIX)).write_text(_compiled.render(text, tomllib.loads(text)), encoding="utf-8")
    assert _compiled.read(str(copy), text) == tomllib.loads(text)


def test_a_stale_rendering_is_ignored(tmp_path):
    path = tmp_path / "x.toml"
    old = 'a = 1\nd = 2026-10-18\n'
    path.write_text(old)
    (tmp_path / "x.toml.json").write_text(_compiled.render(old, tomllib.loads(old)))
    assert _compiled.read(str(path), old) == {"a": 1, "d": tomllib.loads(old)["d"]}
    assert _compiled.read(str(path), 'a = 2\nd = 2026-10-18\n') is None


def test_missing_or_broken_rendering_is_ignored(tmp_path):
    path = tmp_path / "x.toml"
    assert _compiled.read(str(path), "a = 1") is None
    (tmp_path / "x.toml.json").write_text("{not json")
    assert _compiled.read(str(path), "a = 1") is None


def test_installed_wheel_carries_renderings(tmp_path):
    import os
    import subprocess

    # From another folder, so that the installed package is imported, not this checkout.
    code = "from compat.knowledge.paths import default_data_dir; print(default_data_dir())"
    root = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    if root == str(ROOT / "data"):
        pytest.skip("compat is installed in editable mode: the renderings exist only in a built wheel")
    assert root.endswith(os.path.join("compat", "_data"))
    assert os.path.exists(os.path.join(root, "constraints", "vllm.toml.json"))
    assert os.path.exists(os.path.join(root, "gpus.toml.json"))


def test_a_rendering_holding_a_null_is_ignored(tmp_path):
    path = tmp_path / "x.toml"
    text = "a = 1\n"
    (tmp_path / "x.toml.json").write_text(json.dumps({"source": text, "data": {"a": None}}))
    assert _compiled.read(str(path), text) is None


def test_a_date_whose_key_is_written_with_escapes_is_still_a_date(tmp_path):
    path = tmp_path / "x.toml"
    text = "d = 2026-10-18\n"
    rendered = '{"source": %s, "data": {"d": {"\\u0024date": "2026-10-18"}}}' % json.dumps(text)
    (tmp_path / "x.toml.json").write_text(rendered)
    assert _compiled.read(str(path), text) == tomllib.loads(text)
