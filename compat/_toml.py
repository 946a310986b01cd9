"""Reading TOML with errors that say where.

The standard library's parser (or tomli before Python 3.11) gives a line and
column for syntax errors only; for a bad value the best we can do is find the
key in the text, which `locate` does well enough for hand-written files.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from .errors import CompatError

_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def loads(text: str, *, file: str, error: type[CompatError] = CompatError) -> dict[str, Any]:
    """Parse TOML text; a syntax error becomes `error` with file, line and column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = getattr(exc, "lineno", None)
        column = getattr(exc, "colno", None)
        match = _AT.search(message)
        if match:
            line, column = int(match.group(1)), int(match.group(2))
            message = message[: match.start()].rstrip()
        raise error(f"invalid TOML: {message}", file=file, line=line, column=column) from None


def load(path: str | os.PathLike[str], *, error: type[CompatError] = CompatError) -> tuple[dict[str, Any], str]:
    """Read and parse a TOML file; returns the data and the text (for `locate`)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise error("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise error("is a directory, not a TOML file", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path)) from None
    except OSError as exc:
        raise error(f"cannot be read: {exc.strerror}", file=str(path)) from None
    from . import _compiled

    data = _compiled.read(path, text)
    if data is None:
        data = loads(text, file=str(path), error=error)
    return data, text


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _unquote(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'":
        return part[1:-1]
    return part


def _split_key(key: str) -> list[str]:
    # Dotted keys, where quoted parts may themselves hold dots.
    return [_unquote(p) for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', key)]


def locate(text: str | None, table: tuple[str, ...], key: str | None = None) -> int | None:
    """The 1-based line where `key` is set inside `[table]`, or where the table starts.

    >>> locate('[system]\\npython = 3.10\\n', ("system",), "python")
    2
    >>> locate('[options.vllm]\\nkv-cache-dtype = "fp8"\\n', ("options", "vllm"), "kv-cache-dtype")
    2
    """
    if text is None:
        return None
    current: tuple[str, ...] = ()
    header_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _HEADER.match(line)
        if match:
            current = tuple(_split_key(match.group(1)))
            if current == table and header_line is None:
                header_line = number
            continue
        if "=" not in line or line.lstrip().startswith("#"):
            continue
        name = line.split("=", 1)[0].strip()
        if not name:
            continue
        full = current + tuple(_split_key(name))
        if key is None:
            continue
        if full == table + (key,) or full[: len(table) + 1] == table + (key,):
            return number
    return header_line


def blocks(text: str, header: str) -> list[tuple[int, str]]:
    """The ``[[header]]`` tables of a file, as (first line, text) pairs.

    Reading one table of a large array of tables costs a fraction of parsing
    the whole file; callers parse the block they need with `loads` and check
    the whole file some other time (``compat db lint`` does).
    """
    marker = f"[[{header}]]"
    out: list[tuple[int, str]] = []
    current: list[str] | None = None
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() == marker:
            if current is not None:
                out.append((start, "\n".join(current)))
            current, start = [line], number
        elif current is not None:
            if line.startswith("[") and line.strip() != marker:
                out.append((start, "\n".join(current)))
                current = None
            else:
                current.append(line)
    if current is not None:
        out.append((start, "\n".join(current)))
    return out
