"""Where the bundled database lives.

An installed wheel carries it as ``compat/_data``; a source checkout (or an
editable install) reads the repository's top-level ``data/`` folder.
"""

from __future__ import annotations

import os

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_data_dir() -> str:
    """The bundled data folder (holding ``constraints/``, ``metadata/`` and ``gpus.toml``)."""
    inside = os.path.join(_PACKAGE, "_data")
    if os.path.isdir(inside):
        return inside
    return os.path.join(os.path.dirname(_PACKAGE), "data")
