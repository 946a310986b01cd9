"""Name normalization and "did you mean" suggestions."""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.utils import InvalidName, canonicalize_name


def normalize(name: str) -> str:
    """PEP 503 normalization, as pip and uv apply it to package names.

    >>> normalize("Flash_Infer.Python")
    'flash-infer-python'
    """
    return str(canonicalize_name(name))


def is_name(text: str) -> bool:
    """Whether `text` is a project (or extra) name as PEP 508 spells one
    (packaging's own check: ASCII letters and digits, with ".", "_" or "-"
    between them).

    >>> is_name("flash_infer.python"), is_name("vllm==0.32.0"), is_name("-x"), is_name("３")
    (True, False, False, False)
    """
    try:
        canonicalize_name(text, validate=True)
    except InvalidName:
        return False
    return True


def nearest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The known name closest to `word`, if any is close enough.

    >>> nearest("pyhton", ["python", "platform", "cuda"])
    'python'
    """
    import difflib  # only when a name is wrong

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """A suffix for an error message: ``"; did you mean 'x'?"`` or nothing."""
    guess = nearest(word, choices, cutoff=cutoff)
    return f"; did you mean {guess!r}?" if guess else ""


# The affixes a distribution's name carries that the name it is imported by
# does not: `flashinfer-python` installs `flashinfer`, `py-cpuinfo`
# `cpuinfo`, `python-dateutil` `dateutil`. (Only affixes with a separator:
# `pydantic` is not imported as `dantic`.)
_DISTRIBUTION_SUFFIXES = ("-python", "-py")
_DISTRIBUTION_PREFIXES = ("python-", "py-")


def import_names(distributions: Iterable[str]) -> dict[str, str]:
    """The names people write for a distribution when they write the name
    it is imported by, each mapped to the distribution (PEP 503 names).

    The database holds no table of import names, so they are derived from
    the distributions' own names by one rule: a name that ends in
    ``-python`` or ``-py``, or starts with ``python-`` or ``py-``, is
    written without that affix (`flashinfer-python`: `flashinfer`). A name
    that is itself a distribution, or that two distributions derive, maps
    to none.

    >>> import_names(["flashinfer-python", "py-cpuinfo", "python-dateutil", "rpds-py", "pydantic", "vllm"])
    {'flashinfer': 'flashinfer-python', 'cpuinfo': 'py-cpuinfo', 'dateutil': 'python-dateutil', 'rpds': 'rpds-py'}
    >>> import_names(["foo-py", "foo-python"]), import_names(["foo", "foo-py"])
    ({}, {})
    """
    names = {normalize(d) for d in distributions}
    found: dict[str, str] = {}
    twice: set[str] = set()
    for name in sorted(names):
        bare = next((name[: -len(s)] for s in _DISTRIBUTION_SUFFIXES if name.endswith(s)), None) or \
            next((name[len(p):] for p in _DISTRIBUTION_PREFIXES if name.startswith(p)), None)
        if not bare or bare in names:
            continue
        if bare in found:
            twice.add(bare)
        found[bare] = name
    return {bare: name for bare, name in found.items() if bare not in twice}


def model_key(name: str) -> str:
    """How model names and repo ids compare: case, spaces, dashes and underscores ignored.

    >>> model_key("GLM-5.1") == model_key("glm 5.1") == model_key("GLM_5.1")
    True
    >>> model_key("zai-org/GLM-5") == model_key("ZAI-org/glm-5")
    True
    >>> model_key("GLM-5") == model_key("GLM-5.1")
    False
    """
    return re.sub(r"[\s_\-]+", "", name.strip().lower())
