"""What the database's conditions see of a stack."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from ..knowledge.catalog import lookup_key
from ..knowledge.conditions import UNKNOWN
from ..knowledge.model import Component
from ..stack import Stack

__all__ = ["StackFacts", "VIRTUAL_PREFIX", "virtual_name", "VIRTUAL_LABELS"]

# Virtual packages cannot collide with real ones: a PEP 508 name never
# starts with an underscore (conda's ``__cuda`` convention).
VIRTUAL_PREFIX = "__"
VIRTUAL_LABELS = {
    "__python": "python",
    "__cuda": "cuda",
    "__driver": "driver",
    "__rocm": "rocm",
    "__compute_capability": "gpu",
}


def virtual_name(key: str) -> str:
    return VIRTUAL_PREFIX + key


class StackFacts:
    """A stack, the versions chosen for its packages, and one component's options."""

    def __init__(self, stack: Stack, versions: Mapping[str, Version | None], component: Component | None = None) -> None:
        self.stack = stack
        self.versions = versions
        self.component = component

    def for_component(self, component: Component | None) -> StackFacts:
        return StackFacts(self.stack, self.versions, component)

    def version(self, key: str) -> Version | None | Any:
        system, hardware = self.stack.system, self.stack.hardware
        if key == "python":
            return system.python
        if key == "cuda":
            if system.cuda is not None:
                return system.cuda
            # An NVIDIA GPU with no CUDA stated: which CUDA is unknown, not absent.
            return UNKNOWN if hardware.accelerator == "cuda" else None
        if key == "rocm":
            return system.rocm
        if key == "driver":
            if system.driver is not None:
                return system.driver
            # A stack that says nothing of the driver cannot be judged on it;
            # a stack with no NVIDIA device has none.
            return UNKNOWN if hardware.accelerator == "cuda" else None
        if key == "compute_capability":
            if hardware.compute_capability is not None:
                return hardware.compute_capability
            return UNKNOWN if hardware.accelerator == "cuda" else None
        raise KeyError(key)

    def choice(self, key: str) -> str | None | Any:
        hardware = self.stack.hardware
        gpu = hardware.gpu
        if key == "platform":
            return self.stack.system.platform
        if key == "index":  # where the rule's package comes from: its pin's local label, else [system] index
            spec = self.stack.packages.get(self.component.name) if self.component is not None else None
            return spec.build if spec is not None and spec.build else self.stack.system.index
        if key == "accelerator":
            return hardware.accelerator
        if key in ("gpu", "gpu_arch", "gpu_segment"):
            if gpu is None:
                return UNKNOWN if hardware.accelerator != "cpu" else None
            if key == "gpu":
                return lookup_key(gpu.name)
            return gpu.architecture.lower() if key == "gpu_arch" else gpu.segment
        raise KeyError(key)

    def gpu_count(self) -> int | Any:
        return self.stack.hardware.count if self.stack.hardware.accelerator != "cpu" else 0

    def package(self, name: str) -> Version | None | Any:
        # A package the stack neither names nor resolves may still be
        # installed: its version is unknown, not absent.
        version = self.versions.get(name)
        return UNKNOWN if version is None else version

    def option(self, name: str) -> Any:
        """The value of flag `name`: the stack's, else the one a flag left out
        takes (None: not known, and no condition on it holds).

        Left out, a flag the engine's catalog defines takes the default of
        the release the stack installs, as that release's parser gives it;
        where the parser gives none, what the engine's code does instead
        (the component file's `unset`, with its source). A flag no catalog
        defines takes its component file's default.
        """
        if self.component is None:
            return None
        given = self.stack.options.get(self.component.name, {})
        if name in given:
            return given[name]
        spec = self.component.options.get(name)
        if spec is not None and spec.unset is not None:
            return spec.unset
        catalog = self.component.flag_catalog() if self.component.flag_catalog is not None else None
        if catalog is not None and catalog.knows(name):
            return self._parser_default(catalog, name)
        return spec.default if spec is not None else None

    def _parser_default(self, catalog: Any, name: str) -> Any:
        """The default the parser of the installed release gives `name`; with
        no release chosen yet, the one every release agrees on (else None)."""
        version = self.versions.get(self.component.name) if self.component is not None else None
        if isinstance(version, Version):
            here = catalog.at(name, version) if catalog.covers_release(version) else None
            return here.default if here is not None else None
        defaults = {repr(d.default): d.default for d in catalog.definitions(name)}
        return next(iter(defaults.values())) if len(defaults) == 1 else None

    def model(self, key: str) -> Any:
        """A [model] property: the stack's own value, else the model catalog's, else None.

        ``name`` and ``repo`` are the identity of the model: every way the
        catalog names it (or, for a model it lacks, what the stack wrote).
        """
        written, entry = self.stack.model, self.stack.catalog_model
        if key in ("name", "repo"):
            from ..knowledge.models import model_key  # a stack that names a model (the catalog's module)

            given = frozenset(model_key(n) for n in (written.name, written.repo) if n)
            if entry is not None:
                return entry.identities() | given
            return given or None
        value = getattr(written, key)
        if value is None and entry is not None:
            value = getattr(entry, key)
        return value

    def env(self, name: str) -> str | None:
        return self.stack.env.get(name)
