"""The exceptions compat raises for input it cannot use.

Every error names where the problem is (file, key, and line and column when
they are known) so that the command line can print it as one line and exit 2.
"""

from __future__ import annotations

__all__ = [
    "CompatError",
    "StackError",
    "DatabaseError",
    "ResolutionTooComplex",
    "PackageIndexError",
    "one_line",
]

LINE_LIMIT = 600  # the characters of an error line (docs/reliability.md)



class CompatError(Exception):
    """Base class: input that compat could not use.

    >>> str(CompatError("expected a string", file="stack.toml", key="system.python", line=3))
    'stack.toml:3: system.python: expected a string'
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.key = key
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        if self.key:
            where += f"{self.key}: "
        return one_line(f"{where}{self.message}", LINE_LIMIT)


class StackError(CompatError):
    """A stack file (or mapping) is not a valid stack."""


class DatabaseError(CompatError):
    """A constraint database file is not valid."""


class ResolutionTooComplex(CompatError):
    """The resolver ran out of its round budget before it reached an answer."""


class PackageIndexError(CompatError):
    """A package index could not be read: unreachable, failing, or malformed."""


def one_line(text: str, limit: int = 600) -> str:
    """`text` as one printable line, for an error: control characters and
    line separators escaped, cut at `limit` characters (a key or a value
    quoted from a broken file can hold anything).

    >>> print(one_line("a\\nb" + "x" * 10, limit=6))
    a\\nbx…
    """
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
