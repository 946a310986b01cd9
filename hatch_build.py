"""Build hook: put a JSON rendering of each database TOML file in the wheel.

See compat/_compiled.py for why and how it is read.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class CompiledDataHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        spec = importlib.util.spec_from_file_location("_compiled", os.path.join(self.root, "compat", "_compiled.py"))
        assert spec is not None and spec.loader is not None
        compiled = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(compiled)
        data_dir = os.path.join(self.root, "data")
        out = tempfile.mkdtemp(prefix="compat-compiled-")
        for folder, _, files in os.walk(data_dir):
            for name in sorted(files):
                if not name.endswith(".toml"):
                    continue
                source = os.path.join(folder, name)
                relative = os.path.relpath(source, data_dir)
                with open(source, encoding="utf-8") as handle:
                    text = handle.read()
                target = os.path.join(out, relative + compiled.SUFFIX)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "w", encoding="utf-8") as handle:
                    handle.write(compiled.render(text, tomllib.loads(text)))
                build_data["force_include"][target] = f"compat/_data/{relative}{compiled.SUFFIX}".replace(os.sep, "/")
