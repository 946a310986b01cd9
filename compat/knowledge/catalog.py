"""The GPU catalog: what a name in ``[hardware] gpu`` means.

Data lives in ``data/gpus.toml``, taken from the vendors' own tables; this
module only reads and looks it up.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from packaging.version import InvalidVersion, Version

from .. import _toml
from ..errors import DatabaseError

__all__ = ["Gpu", "GpuCatalog", "lookup_key", "parse_compute_capability"]

_VENDOR_WORDS = ("nvidia", "amd", "apple", "geforce")
VENDORS = ("nvidia", "amd", "apple")
SEGMENTS = ("datacenter", "workstation", "consumer", "embedded")


def lookup_key(name: str) -> str:
    """How a GPU name is compared: case, spacing, punctuation and vendor prefix ignored.

    >>> lookup_key("NVIDIA H200") == lookup_key("h200")
    True
    >>> lookup_key("rtx 5090") == lookup_key("GeForce RTX-5090")
    True
    """
    words = re.findall(r"[a-z0-9]+", name.lower())
    while words and words[0] in _VENDOR_WORDS:
        words.pop(0)
    return "".join(words)


_CC = re.compile(r"^(?:sm_?)?(\d+)(?:\.(\d+))?$", re.IGNORECASE)


def parse_compute_capability(text: str) -> Version:
    """Parse ``"9.0"``, ``"sm_90"``, ``"sm90"`` or ``"sm_120"`` into a version.

    >>> parse_compute_capability("sm_90"), parse_compute_capability("12.0"), parse_compute_capability("sm120")
    (<Version('9.0')>, <Version('12.0')>, <Version('12.0')>)
    """
    match = _CC.match(text.strip())
    if not match:
        raise ValueError(f"not a compute capability: {text!r} (write it as \"9.0\" or \"sm_90\")")
    major, minor = match.groups()
    if minor is None:
        if not text.strip().lower().startswith("sm"):
            raise ValueError(f"not a compute capability: {text!r} (write it as \"9.0\" or \"sm_90\")")
        # sm_90 -> 9.0, sm_120 -> 12.0, sm_103 -> 10.3: the last digit is the minor.
        if len(major) < 2:
            raise ValueError(f"not a compute capability: {text!r}")
        major, minor = major[:-1], major[-1]
    return Version(f"{int(major)}.{int(minor)}")


class Gpu(NamedTuple):
    """One GPU model of the catalog."""

    name: str
    vendor: str
    architecture: str
    segment: str
    compute_capability: Version | None
    gfx_target: str | None
    memory_gb: int | None
    aliases: tuple[str, ...]
    source: str

    @property
    def accelerator(self) -> str:
        return {"nvidia": "cuda", "amd": "rocm", "apple": "mps"}[self.vendor]

    @property
    def sm(self) -> str | None:
        """``"sm_90"`` style name of the compute capability."""
        cc = self.compute_capability
        return None if cc is None else f"sm_{cc.major}{cc.minor}"


class GpuCatalog:
    """The GPUs compat knows, looked up by forgiving name."""

    def __init__(self, gpus: list[Gpu]) -> None:
        self.gpus = gpus
        self._by_key: dict[str, Gpu] = {}
        for gpu in gpus:
            for name in (gpu.name, *gpu.aliases):
                self._by_key.setdefault(lookup_key(name), gpu)

    @classmethod
    def find_in_file(cls, path: str, name: str) -> Gpu | None:
        """Look `name` up reading only the matching [[gpu]] table.

        A check needs one GPU; parsing the whole catalog costs more than the
        rest of reading a stack. Names and aliases are found with a line
        scan; `compat db lint` checks that the scan and a full parse agree.
        """
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise DatabaseError(f"cannot be read: {exc.strerror}", file=path) from None
        key = lookup_key(name)
        for line, block in _toml.blocks(text, "gpu"):
            if key in _block_keys(block):
                data = _toml.loads(block, file=path, error=DatabaseError)
                return _parse_gpu(data["gpu"][0], path, line)
        return None

    @classmethod
    def load(cls, path: str) -> GpuCatalog:
        data, _ = _toml.load(path, error=DatabaseError)
        entries = data.get("gpu")
        if not isinstance(entries, list):
            raise DatabaseError("expected an array of [[gpu]] tables", file=str(path), key="gpu")
        return cls([_parse_gpu(entry, path, index) for index, entry in enumerate(entries)])

    def names(self) -> list[str]:
        return [gpu.name for gpu in self.gpus]

    def find(self, name: str) -> Gpu | None:
        """The catalog entry for `name` (or one of its aliases), or None."""
        key = lookup_key(name)
        if key in self._by_key:
            return self._by_key[key]
        return None

    def suggest(self, name: str) -> str | None:
        from .._names import nearest

        key = lookup_key(name)
        guess = nearest(key, self._by_key, cutoff=0.6)
        return None if guess is None else self._by_key[guess].name


_NAME_LINE = re.compile(r'^name\s*=\s*"([^"]+)"', re.MULTILINE)
_ALIASES_LINE = re.compile(r"^aliases\s*=\s*\[([^\]]*)\]", re.MULTILINE)


def _block_keys(block: str) -> set[str]:
    names = _NAME_LINE.findall(block)
    for aliases in _ALIASES_LINE.findall(block):
        names += re.findall(r'"([^"]+)"', aliases)
    return {lookup_key(n) for n in names}


_GPU_KEYS = {
    "name", "aliases", "vendor", "architecture", "segment",
    "compute_capability", "gfx_target", "memory_gb", "source",
}


def _parse_gpu(entry: Any, file: str, index: int) -> Gpu:
    where = f"gpu[{index}]"
    if not isinstance(entry, dict):
        raise DatabaseError("expected a table", file=file, key=where)
    unknown = set(entry) - _GPU_KEYS
    if unknown:
        raise DatabaseError(f"unknown key {sorted(unknown)[0]!r}", file=file, key=where)

    def text(key: str, required: bool = True) -> str | None:
        value = entry.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            raise DatabaseError("expected a non-empty string", file=file, key=f"{where}.{key}")
        return value

    name = text("name")
    assert name is not None
    where = f"gpu[{name!r}]"
    vendor = text("vendor")
    if vendor not in VENDORS:
        raise DatabaseError(f"vendor must be one of {', '.join(VENDORS)}", file=file, key=f"{where}.vendor")
    segment = text("segment")
    if segment not in SEGMENTS:
        raise DatabaseError(f"segment must be one of {', '.join(SEGMENTS)}", file=file, key=f"{where}.segment")
    cc_text = text("compute_capability", required=False)
    compute_capability = None
    if cc_text is not None:
        try:
            compute_capability = Version(cc_text)
        except InvalidVersion:
            raise DatabaseError(f"not a version: {cc_text!r}", file=file, key=f"{where}.compute_capability") from None
    if vendor == "nvidia" and compute_capability is None:
        raise DatabaseError("an NVIDIA GPU needs its compute_capability", file=file, key=where)
    memory = entry.get("memory_gb")
    if memory is not None and (not isinstance(memory, int) or isinstance(memory, bool) or memory <= 0):
        raise DatabaseError("expected a positive integer", file=file, key=f"{where}.memory_gb")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise DatabaseError("expected a list of strings", file=file, key=f"{where}.aliases")
    return Gpu(
        name=name,
        vendor=vendor,  # type: ignore[arg-type]
        architecture=text("architecture"),  # type: ignore[arg-type]
        segment=segment,  # type: ignore[arg-type]
        compute_capability=compute_capability,
        gfx_target=text("gfx_target", required=False),
        memory_gb=memory,
        aliases=tuple(aliases),
        source=text("source"),  # type: ignore[arg-type]
    )
