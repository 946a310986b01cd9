"""The GPU catalog: what a name in ``[hardware] gpu`` means.

Data lives in ``data/gpus.toml``, taken from the vendors' own tables; this
module only reads and looks it up.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from packaging.version import Version

from .._record import Record
from .._text import lower_words, quoted
from .. import _toml
from ..errors import DatabaseError
from ..stack import Gpu, parse_compute_capability
from ._schema import database_error, read_text

__all__ = ["Gpu", "GpuCatalog", "GpuMatch", "Inference", "is_vendor_only", "lookup_key", "parse_compute_capability"]

# Words a name may start with that say who sells the GPU, not which GPU it is:
# `nvidia-smi` prints "NVIDIA GeForce RTX 4090" and "Tesla T4", `rocm-smi`
# prints "AMD Instinct MI300X". (Not "Quadro": "Quadro RTX 6000" is another
# GPU than the "RTX 6000 Ada Generation".)
_VENDOR_WORDS = frozenset({"nvidia", "amd", "apple", "geforce", "tesla", "radeon", "instinct"})
# Words that alone name a vendor or a product line, never one GPU.
_BRAND_WORDS = _VENDOR_WORDS | {"quadro", "rtx", "gtx", "pro", "jetson", "ati", "graphics", "gpu"}
VENDORS = ("nvidia", "amd", "apple")
SEGMENTS = ("datacenter", "workstation", "consumer", "embedded")


def _words(name: str) -> list[str]:
    """The words of a name, lower case, without a leading vendor word."""
    words = lower_words(name.lower())
    while words and words[0] in _VENDOR_WORDS:
        words.pop(0)
    return words


def lookup_key(name: str) -> str:
    """How a GPU name is compared: case, spacing, punctuation and vendor prefix ignored.

    >>> lookup_key("NVIDIA H200") == lookup_key("h200")
    True
    >>> lookup_key("rtx 5090") == lookup_key("NVIDIA GeForce RTX-5090")
    True
    >>> lookup_key("Tesla V100-SXM2-32GB") == lookup_key("v100 sxm2 32gb")
    True
    """
    return "".join(_words(name))


def is_vendor_only(name: str) -> bool:
    """True for a name made only of vendor and product-line words ("NVIDIA", "GeForce RTX").

    >>> is_vendor_only("NVIDIA"), is_vendor_only("AMD Radeon Pro"), is_vendor_only("NVIDIA L4")
    (True, True, False)
    """
    return all(word in _BRAND_WORDS for word in lower_words(name.lower()))


def _model_index(tokens: list[str]) -> int:
    """Which word of a name is its model: the first with a digit (else the last)."""
    return next((i for i, t in enumerate(tokens) if any(c.isdigit() for c in t)), len(tokens) - 1)


def _covers(key: str, tokens: list[str]) -> bool:
    """Whether `key` is some of `tokens`, in order, whole words, the model among them.

    "rtx 6000" is part of "Quadro RTX 6000", of "RTX 6000 Ada Generation" and
    of "RTX PRO 6000 Blackwell", but not of "RTX A6000" ("a6000" is one word).
    """
    if not key or not tokens:
        return False
    model = _model_index(tokens)

    def walk(at: int, start: int, has_model: bool) -> bool:
        if at == len(key):
            return has_model
        for index in range(start, len(tokens)):
            token = tokens[index]
            if key.startswith(token, at) and walk(at + len(token), index + 1, has_model or index == model):
                return True
        return False

    return walk(0, 0, False)


_SPLIT = r"[a-z]+|[0-9]+"


def _shape(name: str) -> tuple[tuple[str, ...], str, frozenset[str]] | None:
    """A name as (words before its model number, the number, words after).

    >>> before, number, after = _shape("NVIDIA GeForce RTX 4070 Ti Mobile")
    >>> before, number, sorted(after)
    (('rtx',), '4070', ['mobile', 'ti'])
    >>> _shape("Jetson Orin") is None
    True
    """
    parts = re.findall(_SPLIT, " ".join(_words(name)))
    index = next((i for i, p in enumerate(parts) if p.isdigit()), None)
    if index is None:
        return None
    return tuple(parts[:index]), parts[index], frozenset(parts[index + 1:])


class GpuMatch(Record):
    """What a name means to the catalog: one GPU, several, or none."""

    gpu: Gpu | None
    candidates: tuple[Gpu, ...] = ()
    vendor_only: bool = False

    @property
    def ambiguous(self) -> bool:
        return self.gpu is None and len(self.candidates) > 1


class Inference(Record):
    """What the catalog's own naming says of a GPU it lacks ("RTX 4070 Ti Mobile")."""

    family: str                      # "RTX 40xx"
    members: tuple[Gpu, ...]         # the catalog's GPUs of that family
    architecture: str
    compute_capability: Version | None
    gfx_target: str | None


class GpuCatalog:
    """The GPUs compat knows, looked up by forgiving name."""

    def __init__(self, gpus: list[Gpu]) -> None:
        self.gpus = gpus
        self._by_key: dict[str, Gpu] = {}
        for gpu in gpus:
            for name in (gpu.name, *gpu.aliases):
                key = lookup_key(name)
                if key:
                    self._by_key.setdefault(key, gpu)

    @classmethod
    def find_in_file(cls, path: str, name: str) -> Gpu | None:
        """Look `name` up reading only the matching [[gpu]] table.

        A check needs one GPU. Names and aliases are found with a line
        scan; `compat db lint` checks that the scan and a full parse agree.
        An ambiguous name finds nothing here (`match` says why). Measured
        (both example checks, 20 paired runs in fresh processes): parsing
        the whole catalog instead costs 3.7 to 4.6 ms of CPU a check, about
        1.5% of it.
        """
        try:
            text = read_text(path)
        except OSError as exc:
            raise database_error(f"cannot be read: {exc.strerror}", file=path) from None
        if is_vendor_only(name):
            return None
        key = lookup_key(name)
        # A name whose key is `key` holds it as a substring once case and
        # punctuation are gone; newlines stay, so a hit tells its line.
        lines, squashed = _scanned(text)
        at, seen, counted, number = squashed.find(key), set(), 0, 0
        while at >= 0:
            number += squashed.count("\n", counted, at)
            counted = at
            if number not in seen:
                seen.add(number)
                names = _names_value(lines[number])
                if names is not None and any(lookup_key(n) == key for n in quoted(names)):
                    return _parse_block_at(lines, _block_start(lines, number), path)
            at = squashed.find(key, at + 1)
        found = {_block_start(lines, number) for number, line in enumerate(lines)
                 if (names := _names_value(line)) is not None and any(_covers(key, _words(n)) for n in quoted(names))}
        if len(found) == 1:
            return _parse_block_at(lines, found.pop(), path)
        return None

    @classmethod
    def load(cls, path: str) -> GpuCatalog:
        data, _ = _toml.load(path, error=DatabaseError)
        entries = data.get("gpu")
        if not isinstance(entries, list):
            raise database_error("expected an array of [[gpu]] tables", file=str(path), key="gpu")
        return cls([_parse_gpu(entry, path, index) for index, entry in enumerate(entries)])

    def names(self) -> list[str]:
        return [gpu.name for gpu in self.gpus]

    def match(self, name: str) -> GpuMatch:
        """The entry `name` (or one of its aliases) means, else the candidates it could mean.

        A name that is no entry's name or alias but part of exactly one
        entry's names ("4090") means that entry; part of several ("RTX 6000")
        it is ambiguous. Vendor and product-line words alone mean nothing.
        """
        if is_vendor_only(name):
            return GpuMatch(None, vendor_only=True)
        key = lookup_key(name)
        if key in self._by_key:
            return GpuMatch(self._by_key[key])
        candidates = tuple(
            gpu for gpu in self.gpus if any(_covers(key, _words(n)) for n in (gpu.name, *gpu.aliases))
        )
        if len(candidates) == 1:
            return GpuMatch(candidates[0], candidates)
        return GpuMatch(None, candidates)

    def find(self, name: str) -> Gpu | None:
        """The catalog entry for `name` (or one of its aliases), or None (unknown or ambiguous)."""
        return self.match(name).gpu

    def infer(self, name: str) -> Inference | None:
        """What the catalog's naming families say of an unknown name, if they agree.

        "RTX 4070 Ti Mobile" is of the family the catalog calls RTX 40xx
        (the same words before the number, the number's leading digits), and
        every such GPU of the catalog is Ada, compute capability 8.9. Entries
        whose name carries words the unknown name lacks ("RTX 4000 Ada") are
        not counted; a family that disagrees, or is empty, infers nothing.
        """
        shape = _shape(name)
        if shape is None:
            return None
        before, number, after = shape
        series = number[:-2] if len(number) >= 3 else number[:-1]
        if not series:
            return None
        members = []
        for gpu in self.gpus:
            for other in (gpu.name, *gpu.aliases):
                theirs = _shape(other)
                if (theirs is not None and theirs[0] == before and len(theirs[1]) == len(number)
                        and theirs[1].startswith(series) and theirs[2] <= after):
                    members.append(gpu)
                    break
        if not members:
            return None
        facts = {(gpu.vendor, gpu.compute_capability, gpu.gfx_target) for gpu in members}
        architectures = {gpu.architecture for gpu in members}
        if len(facts) != 1 or len(architectures) != 1:
            return None
        prefix = " ".join(word.upper() for word in before)
        space = " " if before and len(before[-1]) > 2 else ""  # "RTX 40xx", "H1xx", "MI3xx"
        family = f"{prefix}{space}{series}{'x' * (len(number) - len(series))}"
        return Inference(family, tuple(members), members[0].architecture,
                         members[0].compute_capability, members[0].gfx_target)

    def suggest(self, name: str, inferred: Inference | None = None) -> str | None:
        """The nearest name of the catalog ("did you mean"); with an inference,
        the nearest of the family inferred, never a GPU of another compute capability."""
        from .._names import nearest

        if is_vendor_only(name):
            return None
        keys = {k: g for k, g in self._by_key.items() if inferred is None or g in inferred.members}
        guess = nearest(lookup_key(name), keys, cutoff=0.6)
        return None if guess is None else keys[guess].name

    def naming_problems(self) -> list[tuple[str, str]]:
        """(GPU name, problem) for names and aliases a lookup cannot use: vendor words
        alone, or a spelling that two entries share."""
        problems: list[tuple[str, str]] = []
        owner: dict[str, Gpu] = {}
        for gpu in self.gpus:
            for name in (gpu.name, *gpu.aliases):
                if is_vendor_only(name) or not lookup_key(name):
                    problems.append((gpu.name, f"{name!r} is only vendor or product-line words, no GPU"))
                    continue
                key = lookup_key(name)
                first = owner.setdefault(key, gpu)
                if first is not gpu:
                    problems.append((gpu.name, f"{name!r} is also a name or alias of {first.name!r}"))
        return problems


def _names_value(line: str) -> str | None:
    r"""The value of a ``name`` or ``aliases`` line: what ``(?:name|aliases)\s*=\s*(.*)$`` takes."""
    for key in ("name", "aliases"):
        if line.startswith(key):
            rest = line[len(key):].lstrip()
            if rest.startswith("="):
                return rest[1:].lstrip()
    return None
_ALNUM_AND_NEWLINES = str.maketrans("", "", "".join(
    chr(c) for c in range(128) if not (chr(c).isascii() and (chr(c).isalnum() or chr(c) == "\n"))
))
_GPU_HEADER = "[[gpu]]"


@functools.lru_cache(maxsize=4)
def _scanned(text: str) -> tuple[tuple[str, ...], str]:
    """A catalog file's lines, and its text squashed to letters, digits and
    newlines: made once per text (`compat db lint` looks up every name and
    alias of the catalog, which made them again for each)."""
    return tuple(text.split("\n")), text.lower().translate(_ALNUM_AND_NEWLINES)


def _block_start(lines: Sequence[str], number: int) -> int:
    """The line (0-based) of the [[gpu]] header above line `number`."""
    while number > 0 and lines[number].strip() != _GPU_HEADER:
        number -= 1
    return number


def _parse_block_at(lines: Sequence[str], start: int, path: str) -> Gpu:
    """Parse the [[gpu]] table whose header is line `start` (up to the next table header)."""
    end = start + 1
    while end < len(lines) and not lines[end].startswith("["):
        end += 1
    data = _toml.loads("\n".join(lines[start:end]), file=path, error=DatabaseError)
    entries = data.get("gpu")
    if not isinstance(entries, list) or len(entries) != 1:  # the name's line is outside any [[gpu]] table
        raise database_error("a GPU name or alias outside a [[gpu]] table (a check reads one table by a line scan)",
                            file=path, line=start + 1)
    return _parse_gpu(entries[0], path, start + 1)


_GPU_KEYS = {
    "name", "aliases", "vendor", "architecture", "segment",
    "compute_capability", "gfx_target", "memory_gb", "source",
    "host", "compute_capability_source", "inferred", "basis",
}


def _parse_gpu(entry: Any, file: str, index: int) -> Gpu:
    where = f"gpu[{index}]"
    if not isinstance(entry, dict):
        raise database_error("expected a table", file=file, key=where)
    unknown = set(entry) - _GPU_KEYS
    if unknown:
        raise database_error(f"unknown key {sorted(unknown)[0]!r}", file=file, key=where)

    def text(key: str, required: bool = True) -> str | None:
        value = entry.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            raise database_error("expected a non-empty string", file=file, key=f"{where}.{key}")
        return value

    name = text("name")
    assert name is not None
    where = f"gpu[{name!r}]"
    vendor = text("vendor")
    if vendor not in VENDORS:
        raise database_error(f"vendor must be one of {', '.join(VENDORS)}", file=file, key=f"{where}.vendor")
    segment = text("segment")
    if segment not in SEGMENTS:
        raise database_error(f"segment must be one of {', '.join(SEGMENTS)}", file=file, key=f"{where}.segment")
    cc_text = text("compute_capability", required=False)
    compute_capability = None
    if cc_text is not None:
        try:
            compute_capability = Version(cc_text)
        except ValueError:  # InvalidVersion, or a number too long to convert
            raise database_error(f"not a version: {cc_text!r}", file=file, key=f"{where}.compute_capability") from None
    if vendor == "nvidia" and compute_capability is None:
        raise database_error("an NVIDIA GPU needs its compute_capability", file=file, key=where)
    memory = entry.get("memory_gb")
    if memory is not None and (not isinstance(memory, int) or isinstance(memory, bool) or memory <= 0):
        raise database_error("expected a positive integer", file=file, key=f"{where}.memory_gb")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise database_error("expected a list of strings", file=file, key=f"{where}.aliases")
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
        host=text("host", required=False),
        compute_capability_source=text("compute_capability_source", required=False),
        **_inference(entry, file, where, compute_capability),
    )


def _inference(entry: dict[str, Any], file: str, where: str, compute_capability: Version | None) -> dict[str, Any]:
    """`inferred` and its `basis`: a compute capability the vendor's tables do
    not state must say what it rests on."""
    inferred = entry.get("inferred", False)
    if not isinstance(inferred, bool):
        raise database_error("expected true or false", file=file, key=f"{where}.inferred")
    basis = entry.get("basis")
    if basis is not None and (not isinstance(basis, str) or not basis.strip()):
        raise database_error("expected a non-empty string", file=file, key=f"{where}.basis")
    if inferred and (basis is None or compute_capability is None):
        raise database_error("an inferred compute_capability needs its basis", file=file, key=f"{where}.basis")
    if basis is not None and not inferred:
        raise database_error("basis is for an inferred compute_capability (inferred = true)", file=file, key=f"{where}.basis")
    return {"inferred": inferred, "basis": basis}
