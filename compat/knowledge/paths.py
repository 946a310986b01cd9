"""Where the bundled database lives.

An installed wheel carries it as ``compat/_data``; a source checkout (or an
editable install) reads the repository's top-level ``data/`` folder.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def default_data_dir() -> Path:
    """The bundled data folder (holding ``constraints/``, ``metadata/`` and ``gpus.toml``)."""
    inside = _PACKAGE / "_data"
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / "data"
