"""SARIF 2.1.0: the report as code scanning reads it (GitHub shows each
finding on its line of the stack file).

One run for all the stacks of a command. Each family of findings is a rule
(``requires-python``, ``wheel``, or a rule of the database such as
``vllm.cors-default-restricted``) with its help text and the sources its
results cite; each finding is a result at the line of the key it concerns,
with its full ID as its fingerprint. Input compat cannot use is a run whose
invocation failed, with the error as a notification on its line.

A file inside the repository (the nearest folder above the working
directory that holds a ``.git``; without one, the working directory) is
named by its path relative to it, against the base ``%SRCROOT%``, as code
scanning wants; a file outside it by its absolute ``file://`` URI.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..engine.findings import FAMILIES, SEVERITY_ORDER, Finding, Location, Report, at_least, family
from ..errors import CompatError
from ._shared import escape as _md

__all__ = ["render", "render_error", "SCHEMA_URI", "SRCROOT", "artifact_location", "repository_root"]

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_HOME = "https://github.com/compat-dev/compat"
_FINDINGS_DOC = f"{_HOME}/blob/main/docs/stack-toml.md#findings"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
# Characters a URI reference keeps as they are (RFC 3986: unreserved, sub-delims, "/", ":" and "@").
_URI_SAFE = "/:@!$&'()*+,;=-._~"
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


SRCROOT = "%SRCROOT%"  # the base of the URIs of files in the repository


def repository_root(start: str | None = None) -> str:
    """The folder the URIs of a log are relative to: the nearest one at or
    above `start` (default: the working directory) that holds a ``.git``
    (a folder, or the file of a worktree), else `start` itself."""
    start = os.path.abspath(start or os.getcwd())
    folder = start
    while not os.path.exists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent
    return folder


def _file_uri(path: str) -> str:
    posix = path.replace(os.sep, "/") if os.sep != "/" else path
    return "file://" + ("" if posix.startswith("/") else "/") + quote(posix, safe=_URI_SAFE)


def artifact_location(path: str, root: str) -> dict[str, str]:
    """A file's SARIF artifact location: its path relative to `root` with
    the base ``%SRCROOT%``, or, outside `root`, its absolute ``file://`` URI.

    >>> artifact_location("/repo/stacks/prod stack.toml", "/repo"), artifact_location("/srv/stack.toml", "/repo")
    ({'uri': 'stacks/prod%20stack.toml', 'uriBaseId': '%SRCROOT%'}, {'uri': 'file:///srv/stack.toml'})
    """
    if _WINDOWS_DRIVE.match(path) and os.sep == "/":  # a Windows path read here: nothing to be relative to
        return {"uri": _file_uri(path)}
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:  # another drive (Windows)
        return {"uri": _file_uri(absolute)}
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
        return {"uri": _file_uri(absolute)}
    posix = relative.replace(os.sep, "/") if os.sep != "/" else relative
    return {"uri": quote(posix, safe=_URI_SAFE), "uriBaseId": SRCROOT}


def _location(where: Location, root: str) -> list[dict[str, Any]]:
    if where.file is None:
        return []
    return [{
        "physicalLocation": {
            "artifactLocation": artifact_location(where.file, root),
            # a key the file does not set (a missing [model]) points at the file's first line
            "region": {"startLine": where.line or 1},
        },
        "logicalLocations": [{"name": where.key_text, "kind": "member"}],
    }]


def _cite(finding: Finding) -> str | None:
    return finding.source.cite() if finding.source is not None else None


def _rule(rule_id: str, findings: list[Finding]) -> dict[str, Any]:
    """The rule of one family, from the results that name it.

    A family of the engine is described by `FAMILIES`; a rule of the database
    by its own message (without the release it was found on) and source.
    """
    first = findings[0]
    sources = sorted({cite for cite in map(_cite, findings) if cite})
    urls = sorted({f.source.url for f in findings if f.source is not None and f.source.url})
    if rule_id in FAMILIES:
        summary = FAMILIES[rule_id]
        help_uri = _FINDINGS_DOC
    else:
        summary = first.message.split(": ", 1)[-1] if first.layer == "curated" else first.message
        help_uri = urls[0] if len(urls) == 1 else _FINDINGS_DOC
    text = [summary, ""]
    text += [f"Source: {s}" for s in sources] or ["Source: the stack file and compat's checks"]
    pattern = f"{rule_id}:*" if rule_id in FAMILIES else rule_id
    text += ["", "Suppress one result with --ignore ID or [compat] ignore = [\"ID\"] in the stack file (its ID is the "
                 f"result's properties.id){f', or all of them with {pattern!r}' if pattern != rule_id else ''}."]
    # help.markdown is rendered: the database's text is escaped as the Markdown report escapes it
    markdown = [_md(summary), ""] + [f"- Source: {_md(s)}" for s in sources] + [f"- <{u}>" for u in urls]
    return {
        "id": rule_id,
        "name": rule_id,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": summary},
        "help": {"text": "\n".join(text), "markdown": "\n".join(markdown).rstrip()},
        "helpUri": help_uri,
        "defaultConfiguration": {"level": LEVELS[min((f.severity for f in findings), key=SEVERITY_ORDER.__getitem__)]},
        "properties": {"sources": sources, "layers": sorted({f.layer for f in findings})},
    }


def _result(report: Report, finding: Finding, rule_index: int, root: str) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "id": finding.id,
        "components": list(finding.components),
        "layer": finding.layer,
        "kind": finding.kind,
    }
    if finding.source is not None:
        properties["source"] = finding.source.to_dict()
    if finding.basis is not None:
        properties["inferred"] = finding.basis
    result: dict[str, Any] = {
        "ruleId": family(finding.id),
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": _location(report.location(finding), root),
        "partialFingerprints": {"compatFindingId/v1": finding.id},
        "properties": properties,
    }
    if finding.suppressed:
        # listed in the stack's own [compat] ignore ("inSource"), or on the command line
        in_source = _matches(finding.id, report.stack.ignore)
        result["suppressions"] = [{"kind": "inSource" if in_source else "external",
                                   "justification": "ignored by [compat] ignore" if in_source else "ignored by --ignore"}]
    return result


def _matches(finding_id: str, patterns: Iterable[str]) -> bool:
    import fnmatch

    return any(fnmatch.fnmatchcase(finding_id, p) for p in patterns)


def render(reports: Report | Iterable[Report], *, min_severity: str = "info") -> str:
    """One SARIF log, one run, a result for each finding of `min_severity`
    or worse (suppressed findings included, marked with their suppression)."""
    reports = [reports] if isinstance(reports, Report) else list(reports)
    shown = [(report, finding) for report in reports
             for finding in at_least(report.findings, min_severity)]
    by_rule: dict[str, list[Finding]] = {}
    for _, finding in shown:
        by_rule.setdefault(family(finding.id), []).append(finding)
    index = {rule_id: i for i, rule_id in enumerate(sorted(by_rule))}
    root = repository_root()
    run: dict[str, Any] = {
        "tool": {"driver": _driver([_rule(rule_id, by_rule[rule_id]) for rule_id in sorted(by_rule)])},
        "originalUriBaseIds": _bases(root),
        "invocations": [{"executionSuccessful": True}],
        "results": [_result(report, finding, index[family(finding.id)], root) for report, finding in shown],
        "properties": {"stacks": [{"path": r.stack.path, "ok": r.ok, "errors": len(r.errors),
                                   "warnings": len(r.warnings), "notes": len(r.infos)} for r in reports]},
    }
    return _dump(run)


def render_error(error: CompatError) -> str:
    """A run whose invocation failed, with the input error as a notification
    at its file and line: the upload step of a CI job gets a valid log."""
    notification: dict[str, Any] = {"level": "error", "message": {"text": str(error)},
                                    "descriptor": {"id": "input-error"}}
    root = repository_root()
    if error.file and not error.file.startswith("<"):
        region = {"startLine": error.line} if error.line else {}
        if error.line and error.column:
            region["startColumn"] = error.column
        location: dict[str, Any] = {"artifactLocation": artifact_location(error.file, root)}
        if region:
            location["region"] = region
        notification["locations"] = [{"physicalLocation": location}]
    run = {
        "tool": {"driver": _driver([])},
        "originalUriBaseIds": _bases(root),
        "invocations": [{"executionSuccessful": False, "exitCode": 2, "toolExecutionNotifications": [notification]}],
        "results": [],
    }
    return _dump(run)


def _bases(root: str) -> dict[str, Any]:
    """The run's originalUriBaseIds: where %SRCROOT% is (an absolute URI ending in "/")."""
    uri = _file_uri(root)
    return {SRCROOT: {"uri": uri if uri.endswith("/") else uri + "/"}}


def _driver(rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": "compat", "version": __version__, "semanticVersion": __version__, "informationUri": _HOME,
            "rules": rules}


def _dump(run: dict[str, Any]) -> str:
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
