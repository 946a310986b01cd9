"""The library's entry point: `compat.check`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .engine.check import check_stack
from .engine.findings import Report
from .knowledge.database import Database
from .sources.stack import Stack, load_stack

__all__ = ["check"]


def check(
    stack: str | os.PathLike[str] | Mapping[str, Any] | Stack,
    *,
    database: Database | None = None,
    strict: bool | None = None,
    ignore: tuple[str, ...] | list[str] = (),
    require_known: bool | None = None,
) -> Report:
    """Check a stack (a stack.toml path, a mapping of its tables, or a `Stack`).

    Returns a `Report`; raises a `CompatError` subclass for input that cannot
    be used (the command line's exit 2). `strict` makes warnings fail too;
    `ignore` suppresses findings by ID (shell-style patterns allowed);
    `require_known` makes a release the database does not hold an error.
    Without `database`, the bundled database is loaded once per process and
    reused while its files are unchanged (`Database.shared`).

    >>> report = check({"system": {"python": "3.12"}, "hardware": {"gpu": "H200"}, "packages": {"vllm": "0.32.0"}})
    >>> report.ok
    True
    """
    db = database if database is not None else Database.shared()
    if not isinstance(stack, Stack):
        stack = load_stack(stack, db)
    return check_stack(stack, db, strict=strict, ignore=ignore, require_known=require_known)
