"""The model catalog: what a name in ``[model]`` means.

Data lives in ``data/models.toml``, one ``[[model]]`` table per model, each
with its source (the model's own configuration or card); this module only
reads and looks it up::

    [[model]]
    name = "GLM-5"
    repo = "zai-org/GLM-5"
    aliases = ["GLM5"]
    family = "glm-5"
    head_dim = 64
    moe = true
    checkpoint_dtype = "bf16"
    source = "model-glm-5"

A trait the catalog does not state (``moe``, ``hybrid``, ``multimodal``,
``head_dim``, ``checkpoint_dtype``) stays unknown: no default is guessed.
"""

from __future__ import annotations

import re
from typing import Any

from .._names import model_key
from .. import _toml
from ..errors import DatabaseError
from ..stack import ModelEntry
from ._schema import database_error, one_line, read_text

__all__ = ["ModelEntry", "ModelCatalog", "model_key", "MODELS_FILE", "FLAGS"]

MODELS_FILE = "models.toml"
SCHEMA = 1
FLAGS = ("moe", "hybrid", "multimodal")
_KEYS = ("name", "repo", "aliases", "family", "head_dim", "checkpoint_dtype", *FLAGS, "source", "note")
_FAMILY = r"^[a-z0-9][a-z0-9.\-]*$"
_REPO = r"^[A-Za-z0-9][A-Za-z0-9._\-]*/[A-Za-z0-9][A-Za-z0-9._\-]*$"


class ModelCatalog:
    """Every model of ``models.toml`` (for lint and listings; a check uses `find_in_file`)."""

    def __init__(self, models: list[ModelEntry]) -> None:
        self.models = models
        self._by_key: dict[str, ModelEntry] = {}
        for model in models:
            for key in model.identities():
                self._by_key.setdefault(key, model)

    @classmethod
    def load(cls, path: str) -> ModelCatalog:
        data, _ = _toml.load(path, error=DatabaseError)
        unknown = set(data) - {"schema", "model"}
        if unknown:
            raise database_error("unknown key (expected schema, model)", file=path, key=one_line(repr(sorted(unknown)[0]), 80))
        if data.get("schema", SCHEMA) != SCHEMA:
            raise database_error(f"unsupported schema {data.get('schema')!r} (expected {SCHEMA})", file=path, key="schema")
        entries = data.get("model", [])
        if not isinstance(entries, list):
            raise database_error("expected an array of [[model]] tables", file=path, key="model")
        return cls([parse_model(entry, path, index) for index, entry in enumerate(entries)])

    @classmethod
    def find_in_file(cls, path: str, name: str) -> ModelEntry | None:
        """Look `name` (or a repo id, or an alias) up reading only the matching [[model]] table.

        Names, repo ids and aliases are found with a line scan; ``compat db
        lint`` checks that the scan and a full parse agree. No file: no model.
        """
        try:
            text = read_text(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise database_error(f"cannot be read: {exc.strerror}", file=path) from None
        key = model_key(name)
        for line, block in _toml.blocks(text, "model"):
            if key in _block_keys(block):
                data = _toml.loads(block, file=path, error=DatabaseError)
                entries = data.get("model")
                if not isinstance(entries, list) or len(entries) != 1:
                    raise database_error("expected one [[model]] table", file=path, line=line)
                return parse_model(entries[0], path, line)
        return None

    def find(self, name: str) -> ModelEntry | None:
        return self._by_key.get(model_key(name))

    def families(self) -> set[str]:
        return {m.family for m in self.models}


_LINE = r'(?m)^(?:name|repo)\s*=\s*"([^"]+)"'
_ALIASES_LINE = r"(?m)^aliases\s*=\s*\[([^\]]*)\]"


def _block_keys(block: str) -> set[str]:
    names = re.findall(_LINE, block)
    for aliases in re.findall(_ALIASES_LINE, block):
        names += re.findall(r'"([^"]+)"', aliases)
    return {model_key(n) for n in names}


def parse_model(entry: Any, file: str, index: int) -> ModelEntry:
    """One [[model]] table; `index` is its position (or first line) for messages."""
    where = f"model[{index}]"
    if not isinstance(entry, dict):
        raise database_error("expected a table", file=file, key=where)

    def text(key: str, required: bool = False) -> str | None:
        value = entry.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise database_error("expected a non-empty string", file=file, key=f"{where}.{key}")
        return value.strip()

    name = text("name", required=True)
    assert name is not None
    where = f"model[{name!r}]"
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        from .._names import did_you_mean

        raise database_error(f"unknown key{did_you_mean(unknown[0], _KEYS)}", file=file,
                            key=one_line(f"{where}.{unknown[0]}", 200))
    family = text("family", required=True)
    assert family is not None
    if not re.match(_FAMILY, family):
        raise database_error(f"a family is lower-case letters, digits, '.' and '-', got {family!r}", file=file, key=f"{where}.family")
    repo = text("repo")
    if repo is not None and not re.match(_REPO, repo):
        raise database_error(f"expected a Hugging Face repo id such as \"zai-org/GLM-5\", got {repo!r}", file=file, key=f"{where}.repo")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise database_error("expected a list of non-empty strings", file=file, key=f"{where}.aliases")
    head_dim = entry.get("head_dim")
    if head_dim is not None and (not isinstance(head_dim, int) or isinstance(head_dim, bool) or head_dim < 1):
        raise database_error("expected a positive integer", file=file, key=f"{where}.head_dim")
    flags: dict[str, bool | None] = {}
    for flag in FLAGS:
        value = entry.get(flag)
        if value is not None and not isinstance(value, bool):
            raise database_error("expected true or false", file=file, key=f"{where}.{flag}")
        flags[flag] = value
    dtype = text("checkpoint_dtype")
    if dtype is not None and dtype != dtype.lower():
        raise database_error(f"a checkpoint dtype is lower-case, got {dtype!r}", file=file, key=f"{where}.checkpoint_dtype")
    return ModelEntry(
        name=name,
        family=family,
        source=text("source", required=True),  # type: ignore[arg-type]
        repo=repo,
        aliases=tuple(a.strip() for a in aliases),
        head_dim=head_dim,
        checkpoint_dtype=dtype,
        note=text("note"),
        **flags,
    )


def check_catalog(catalog: ModelCatalog, path: str) -> list[tuple[str, str]]:
    """What ``compat db lint`` says of a parsed catalog, as (key, message) pairs:
    a name, repo or alias used twice, and tables a line scan does not find."""
    problems: list[tuple[str, str]] = []
    owners: dict[str, str] = {}
    for model in catalog.models:
        where = f"model[{model.name!r}]"
        for written in model.names:
            key = model_key(written)
            owner = owners.setdefault(key, model.name)
            if owner != model.name:
                problems.append((where, f"{written!r} also names {owner}"))
        for written in model.names:
            found = ModelCatalog.find_in_file(path, written)
            if found is None or found.name != model.name:
                problems.append((where, f"{written!r} is not found by a line scan; write name, repo and aliases on one line each"))
    return problems
