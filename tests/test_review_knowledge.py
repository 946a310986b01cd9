"""The catalogs (gpus.toml, models.toml) of an overlay: one line scan per
layer for a check's one lookup, one merged catalog for lint and listings."""

from __future__ import annotations

from pathlib import Path

from compat import Database
from compat.knowledge.layers import LayeredDatabase

from .conftest import ROOT
from .test_layers import ACME_OVERLAY, overlay

GPUS = ACME_OVERLAY["gpus.toml"]

MODELS = """\
    schema = 1

    [[model]]
    name = "Acme-Chat"
    repo = "acme/Acme-Chat"
    family = "acme-chat"
    source = "acme-policy"
    """


def layered(tmp_path: Path, files: dict[str, str]) -> LayeredDatabase:
    return LayeredDatabase(str(ROOT / "data"), user=None, overlay=str(overlay(tmp_path / "org", files)))


def test_a_lookup_reads_the_bundled_catalog_then_the_overlay_s_without_parsing_either_whole(tmp_path):
    db = layered(tmp_path, {"gpus.toml": GPUS, "models.toml": MODELS})
    assert db.catalog_paths("gpus.toml") == [str(ROOT / "data" / "gpus.toml"), str(tmp_path / "org" / "gpus.toml")]
    assert db.gpu("ACME X1 Accelerator").name == "ACME-X1"
    assert db.gpu("H200").name == "H200"  # the bundled one, still
    assert db.model("acme/Acme-Chat").name == "Acme-Chat"
    assert db.model("GLM-5").family == "glm-5"
    assert db.gpu("no such board") is None and db.model("no such model") is None
    assert db._catalog is None and db._models is None  # neither catalog was parsed whole


def test_the_whole_catalog_is_the_bundled_entries_then_the_overlay_s(tmp_path):
    db = layered(tmp_path, {"gpus.toml": GPUS, "models.toml": MODELS})
    gpus, models = [g.name for g in db.catalog.gpus], [m.name for m in db.models.models]
    assert gpus[-1] == "ACME-X1" and "H200" in gpus[:-1]
    assert models[-1] == "Acme-Chat" and "GLM-5" in models[:-1]
    # once loaded, a lookup uses the merged catalog
    assert db.gpu("ACME X1 Accelerator").name == "ACME-X1" and db.model("Acme-Chat").family == "acme-chat"


def test_an_overlay_without_catalogs_adds_no_file(tmp_path):
    db = layered(tmp_path, {})
    assert db.catalog_paths("models.toml") == [str(ROOT / "data" / "models.toml")]
    assert db.gpu("ACME X1 Accelerator") is None
    assert [g.name for g in db.catalog.gpus] == [g.name for g in Database(str(ROOT / "data")).catalog.gpus]
