"""What the scripts that read a package's Python code in its release wheels share
(tools/derive_sglang_fp8.py, tools/derive_vllm_backends.py): the releases of a
snapshot with a wheel each, and the [[source]] of a line read in a wheel."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable

from packaging.version import Version


def load_releases(metadata: str, since: str, pick: Callable[[list[dict]], dict | None]
                  ) -> list[tuple[str, str | None, dict | None]]:
    """(version, upload date, the wheel `pick` takes) of each release of the snapshot `metadata`
    (``data/metadata/<name>.jsonl``, beside its ``.wheels.jsonl``) from version `since` on."""
    with open(metadata, encoding="utf-8") as handle:
        head = json.loads(handle.readline())
        dates = {r["version"]: r.get("uploaded") for r in map(json.loads, handle) if "version" in r}
    with open(metadata[: -len(".jsonl")] + ".wheels.jsonl", encoding="utf-8") as handle:
        wheels = {r["version"]: r["wheels"] for r in map(json.loads, handle) if "version" in r}
    return [(v, dates.get(v), pick(wheels.get(v, []))) for v in sorted(head["versions"], key=Version)
            if Version(v) >= Version(since)]


def line_source(package: str, project: str, version: str, date: str | None, wheel: dict, member: str, line: int,
                what: str) -> dict:
    """The [[source]] of line `line` of `member` in the release's wheel.

    >>> line_source("kern", "Kern", "1.0", "2025-01-02", {"url": "u", "file": "f.whl", "sha256": "0"}, "k.py", 3,
    ...             "a check")["title"]
    'kern 1.0 wheel, k.py line 3 (a check)'
    """
    source = {"id": f"{package}@{version}:{member}#L{line}", "project": project,
              "title": f"{package} {version} wheel, {member} line {line} ({what})", "kind": "artifact",
              "url": wheel["url"], "ref": version, "path": wheel["file"], "sha256": wheel["sha256"]}
    if date:
        source["date"] = _dt.date.fromisoformat(date)
    return source
