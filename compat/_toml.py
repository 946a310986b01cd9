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

_AT = r"\(at line (\d+), column (\d+)\)"


# Bounds on what is read (docs/reliability.md, "Readers"). A stack file is a
# few hundred bytes; the database's largest file is well under 1 MiB.
MAX_BYTES = 4 * 1024 * 1024
MAX_LINE = 4096  # `locate` looks no further into a line than this
MAX_KEY_PARTS = 64  # the standard parser's time grows with the square of a dotted key's parts


def _check_keys(text: str, file: str, error: type[CompatError], first_line: int = 1) -> None:
    """Refuse, before parsing, a dotted key or table header of more than
    MAX_KEY_PARTS parts (40 KB of ``a.a.a…`` takes the parser a minute)."""
    if text.count(".") <= MAX_KEY_PARTS:
        return
    for number, line in enumerate(text.splitlines(), start=first_line):
        head = line.split("=", 1)[0] if "=" in line else (line if line.lstrip().startswith("[") else "")
        if head.count(".") > MAX_KEY_PARTS and not head.lstrip().startswith("#"):
            raise error(f"invalid TOML: a dotted key of more than {MAX_KEY_PARTS} parts", file=file, line=number)


def loads(text: str, *, file: str, error: type[CompatError] = CompatError, first_line: int = 1) -> dict[str, Any]:
    """Parse TOML text; a syntax error becomes `error` with file, line and column.

    Input the parser cannot hold (an array nested hundreds deep, an integer
    of thousands of digits) is such an error too, never another exception.
    `first_line`: the line of the file `text` starts at (a part of a file).
    """
    _check_keys(text, file, error, first_line)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = getattr(exc, "lineno", None)
        column = getattr(exc, "colno", None)
        match = re.search(_AT, message[:1000])
        if match:
            line, column = int(match.group(1)), int(match.group(2))
            message = message[: match.start()].rstrip()
        shown = _plain(message, text, line)[:300]
        raise error(f"invalid TOML: {shown}", file=file, line=line + first_line - 1 if line else line,
                    column=column) from None
    except RecursionError:
        raise error("invalid TOML: arrays or inline tables nested too deeply", file=file) from None
    except (ValueError, OverflowError, MemoryError) as exc:
        # tomllib turns digits into int() as written: more than Python's
        # 4,300-digit limit raises ValueError.
        what = "a number too large" if "digits" in str(exc) else "a value it cannot read"
        raise error(f"invalid TOML: {what}", file=file) from None


_TWICE = r"Cannot declare \((.*)\) twice\Z"


def _plain(message: str, text: str, line: int | None) -> str:
    """tomllib's words for a key or table given twice, with its name as the file writes it."""
    twice = re.match(_TWICE, message)
    if twice is not None:
        parts = re.findall(r"'((?:[^'\\]|\\.)*)'", twice.group(1))
        return f"the table [{'.'.join(parts)}] is declared twice" if parts else message
    if message.startswith("Cannot overwrite a value") and line is not None:
        lines = text.splitlines()
        written = lines[line - 1].split("=", 1)[0].strip() if 0 < line <= len(lines) else ""
        if written and "=" in lines[line - 1]:
            return f"{written} is given twice (or over a table of that name)"
    return message


_STDIN = ("-", "/dev/stdin")


def read_raw(path: str, *, error: type[CompatError] = CompatError, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of `path` ("-" is standard input), never more than
    `max_bytes` of them: a larger input, or a file that is not a regular file
    (a device, a pipe, a folder: read forever, or waited on forever), is
    `error` naming the file."""
    import stat

    shown = "<stdin>" if path in _STDIN else str(path)
    too_big = f"larger than {max_bytes // (1024 * 1024)} MiB, the limit for this file" if max_bytes >= 1024 * 1024 \
        else f"larger than {max_bytes} bytes, the limit for this file"
    if path in _STDIN:
        raw = sys.stdin.buffer.read(max_bytes + 1)
    else:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise error("no such file", file=shown) from None
        except IsADirectoryError:
            raise error("is a directory, not a TOML file", file=shown) from None
        except OSError as exc:
            raise error(f"cannot be read: {exc.strerror}", file=shown) from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise error("is a directory, not a TOML file", file=shown)
            if not stat.S_ISREG(info.st_mode):
                raise error("not a regular file (a device, pipe or socket); give a file, or - for standard input",
                            file=shown)
            if info.st_size > max_bytes:
                raise error(too_big, file=shown)
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            with os.fdopen(fd, "rb") as handle:
                fd = -1
                raw = handle.read(max_bytes + 1)
        except OSError as exc:
            raise error(f"cannot be read: {exc.strerror}", file=shown) from None
        finally:
            if fd >= 0:
                os.close(fd)
    if len(raw) > max_bytes:
        raise error(too_big, file=shown)
    return raw


def read_limited(path: str, *, error: type[CompatError] = CompatError, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of `path`, read as `read_raw` reads it."""
    shown = "<stdin>" if path in _STDIN else str(path)
    raw = read_raw(path, error=error, max_bytes=max_bytes)
    if raw.startswith(b"\xef\xbb\xbf"):  # a byte order mark, as some Windows editors write one: not text
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=shown) from None


def load(
    path: str | os.PathLike[str], *, error: type[CompatError] = CompatError, max_bytes: int = MAX_BYTES
) -> tuple[dict[str, Any], str]:
    """Read and parse a TOML file; returns the data and the text (for `locate`)."""
    path = os.fspath(path)
    text = read_limited(path, error=error, max_bytes=max_bytes)
    # Universal newlines, as open() in text mode reads them (line numbers agree).
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    shown = "<stdin>" if path in _STDIN else str(path)
    from . import _compiled

    data = _compiled.read(path, text) if path not in _STDIN else None
    if data is None:
        data = loads(text, file=shown, error=error)
    return data, text


# Linear by construction: no two neighbouring parts can match the same
# character, and `locate` reads at most MAX_LINE characters of a line.
_HEADER = r"[ \t]*\[\[?([^\]\n]*)\]\]?[ \t]*(?:#[^\n]*)?\Z"


def _unquote(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'":
        return part[1:-1]
    return part


def _split_key(key: str) -> list[str]:
    """Dotted keys, where quoted parts may themselves hold dots (one pass)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in key:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
            current.append(char)
        elif char == ".":
            if current:
                parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        parts.append("".join(current))
    return [_unquote(p) for p in parts]


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
        if len(line) > MAX_LINE:
            continue  # no line a person writes; never scanned
        match = re.match(_HEADER, line)
        if match:
            current = tuple(_split_key(match.group(1).strip()))
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
    for number, line in enumerate(_lines(text), start=1):
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


def _lines(text: str) -> list[str]:
    """The lines of TOML text as the parser counts them: ended by "\n" (or
    "\r\n") alone, not by the other characters str.splitlines cuts at
    (a U+2028 in a string is part of its line)."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines[-1] == "":
        lines.pop()
    return lines
