"""A JSON rendering of a TOML file, made when the wheel is built.

The standard library's TOML parser is written in Python; JSON's is in C and
several times faster. The wheel carries, next to each database file
``x.toml``, an ``x.toml.json`` holding the same data and the TOML text it
came from; a reader uses it only while that text is the file's, so an
edited TOML file is never shadowed by a stale rendering. (The text itself,
not a checksum of it: a reader has the file's text anyway, comparing two
strings costs less than hashing one, and the checksum modules load a
shared library, which a check of a stack paid for on every run.)

A rendering is a cache, never the truth: one that is stale, larger than its
TOML file could render to, not JSON, or that holds anything TOML cannot
(``null``, a date that is not a date) is ignored, and the TOML file is
parsed instead; so a broken rendering can neither crash a reader nor hand
it a value the TOML reader would not.

Standard library only: the build hook loads this file on its own.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

SUFFIX = ".json"


def _encode(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, _dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, _dt.time):
        return {"$time": value.isoformat()}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


_DECODERS = {"$date": _dt.date.fromisoformat, "$datetime": _dt.datetime.fromisoformat, "$time": _dt.time.fromisoformat}


def _decode(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        for key, parse in _DECODERS.items():
            if key in obj:
                if not isinstance(obj[key], str):
                    raise ValueError(f"{key} of a {type(obj[key]).__name__}")
                return parse(obj[key])  # ValueError when it is not one
    return obj


# JSON that TOML can also hold (no null); dates come from _decode.
_TOML_SCALARS = (str, bool, int, float, _dt.date, _dt.time)


def _is_toml(data: dict[str, Any]) -> bool:
    """Whether `data` is something TOML could have parsed to (walked
    without recursion: JSON nesting is bounded by the decoder, not here)."""
    pending: list[Any] = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif not isinstance(value, _TOML_SCALARS):
            return False
    return True


def _limit(text: str) -> int:
    """The largest rendering of `text` worth reading: JSON of TOML is about
    its size, and the rendering holds the text too; a much larger file is
    not a rendering of it."""
    return 6 * len(text.encode("utf-8")) + 65536


def render(text: str, data: dict[str, Any]) -> str:
    """The JSON rendering of `data`, parsed from TOML `text`."""
    return json.dumps({"source": text, "data": _encode(data)}, ensure_ascii=False, separators=(",", ":"))


def read(path: str, text: str) -> dict[str, Any] | None:
    """The data of TOML file `path` (whose content is `text`) from its
    rendering, or None when there is none or it is stale."""
    try:
        with open(path + SUFFIX, "rb") as handle:
            raw = handle.read(_limit(text) + 1)
        if len(raw) > _limit(text):
            return None
        # Each object goes through _decode, and every value is walked by
        # _is_toml, only where the text can hold a date ("$date", or a key
        # written with escapes) or a null: most renderings hold neither.
        dated = b'"$' in raw or b"\\u" in raw
        rendered = json.loads(raw.decode("utf-8"), object_hook=_decode if dated else None)
    except (OSError, ValueError, RecursionError):  # ValueError: not UTF-8, not JSON, a bad date
        return None
    if not isinstance(rendered, dict) or rendered.get("source") != text:
        return None
    data = rendered.get("data")
    return data if isinstance(data, dict) and (b"null" not in raw or _is_toml(data)) else None
