"""The library's entry point: `compat.check`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .engine.check import check_stack
from .engine.findings import Report
from .engine.resolver import DEFAULT_MAX_ROUNDS
from .knowledge.database import Database
from .sources.stack import Stack, check_ignore, load_stack

__all__ = ["check"]


def check(
    stack: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    *,
    database: Database | None = None,
    strict: bool | None = None,
    ignore: tuple[str, ...] | list[str] = (),
    require_known: bool | None = None,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> Report:
    """Check a stack (a stack.toml path, a mapping of its tables, or a `Stack`).

    Returns a `Report`; raises a `CompatError` subclass for input that cannot
    be used (the command line's exit 2). `strict` makes warnings fail too;
    `ignore` suppresses findings by ID (shell-style patterns allowed; a
    string is one ID; a pattern of wildcards alone, which would suppress
    everything, is a `CompatError` with key ``ignore``);
    `require_known` makes a release the database does not hold an error;
    `max_rounds` is the resolver's budget. An argument of the wrong type is
    a `TypeError` (a `ValueError` for a `max_rounds` below 1).
    Without `database`, the bundled database is loaded once per process and
    reused while its files are unchanged (`Database.shared`).

    >>> report = check({"system": {"python": "3.12"}, "hardware": {"gpu": "H200"}, "packages": {"vllm": "0.32.0"}})
    >>> report.ok
    True
    """
    if not isinstance(stack, (str, os.PathLike, Mapping, Stack)):
        raise TypeError(f"compat.check: stack must be a path (str or os.PathLike), a mapping or a Stack, "
                        f"not {type(stack).__name__}")
    if database is not None and not isinstance(database, Database):
        raise TypeError(f"compat.check: database must be a Database or None, not {type(database).__name__}")
    for name, value in (("strict", strict), ("require_known", require_known)):
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"compat.check: {name} must be True, False or None, not {type(value).__name__}")
    if not isinstance(max_rounds, int) or isinstance(max_rounds, bool):
        raise TypeError(f"compat.check: max_rounds must be an int, not {type(max_rounds).__name__}")
    if max_rounds < 1:
        raise ValueError(f"compat.check: max_rounds must be 1 or more, not {max_rounds}")
    if not isinstance(ignore, (str, list, tuple)) or not all(isinstance(i, str) for i in ignore):
        raise TypeError("compat.check: ignore must be a finding ID or a list of them (strings)")
    ignore = check_ignore(ignore)
    db = database if database is not None else Database.shared()
    if not isinstance(stack, Stack):
        stack = load_stack(stack, db)
    return check_stack(stack, db, strict=strict, ignore=ignore, require_known=require_known, max_rounds=max_rounds)
