"""Name normalization and "did you mean" suggestions."""

from __future__ import annotations

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
