"""A JSON rendering of a TOML file, made when the wheel is built.

The standard library's TOML parser is written in Python; JSON's is in C and
several times faster. The wheel carries, next to each database file
``x.toml``, an ``x.toml.json`` holding the same data and a checksum of the
TOML text it came from; a reader uses it only while that digest still
matches, so an edited TOML file is never shadowed by a stale rendering. (CRC-32 and length, not a
cryptographic hash: this guards against staleness, not tampering, and
importing hashlib would cost more than the rendering saves.)

Standard library only: the build hook loads this file on its own.
"""

from __future__ import annotations

import datetime as _dt
import json
import zlib
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


def _decode(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if "$date" in obj:
            return _dt.date.fromisoformat(obj["$date"])
        if "$datetime" in obj:
            return _dt.datetime.fromisoformat(obj["$datetime"])
        if "$time" in obj:
            return _dt.time.fromisoformat(obj["$time"])
    return obj


def digest(text: str) -> str:
    raw = text.encode("utf-8")
    return f"crc32:{zlib.crc32(raw):08x}:{len(raw)}"


def render(text: str, data: dict[str, Any]) -> str:
    """The JSON rendering of `data`, parsed from TOML `text`."""
    return json.dumps({"source": digest(text), "data": _encode(data)}, ensure_ascii=False, separators=(",", ":"))


def read(path: str, text: str) -> dict[str, Any] | None:
    """The data of TOML file `path` (whose content is `text`) from its
    rendering, or None when there is none or it is stale."""
    try:
        with open(path + SUFFIX, encoding="utf-8") as handle:
            rendered = json.loads(handle.read(), object_hook=_decode)
    except (OSError, ValueError):
        return None
    if not isinstance(rendered, dict) or rendered.get("source") != digest(text):
        return None
    data = rendered.get("data")
    return data if isinstance(data, dict) else None
