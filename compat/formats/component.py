"""`compat db show`: everything the database knows of a component or a release."""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from .._versions import spec_text
from ..knowledge.database import Database
from ..knowledge.model import Component, Release, Rule

_KINDS = (
    ("requirement", "Requirements"),
    ("known-issue", "Known issues"),
    ("behaviour-change", "Behaviour changes"),
    ("note", "Notes"),
)


def describe(db: Database, component: Component, version: Version | None = None) -> dict[str, Any]:
    """The component (or one release of it) as plain data."""
    rules = [r for r in component.rules if version is None or r.covers(version) or _fixed_by(r, version)]
    data: dict[str, Any] = {
        "name": component.name,
        "kind": component.kind,
        "summary": component.summary,
        "homepage": component.homepage,
        "snapshot": {
            "taken": component.snapshot_taken.isoformat() if component.snapshot_taken else None,
            "index": component.snapshot_index,
        },
        "options": {
            o.name: {"summary": o.summary, "values": list(o.values), "default": o.default, "source": o.source,
                     "unset": o.unset, "own": o.own}
            for o in component.options.values()
        },
        # the engine's flags, release by release, with their values and defaults: one home, not repeated here
        "flags": f"options/{component.name}.toml" if db.option_catalog(component.name) is not None else None,
    }
    if version is None:
        data["releases"] = [_release_line(r) for r in (component.releases[v] for v in component.versions())]
    else:
        release = component.release(version)
        data["release"] = _release(db, release) if release is not None else None
    data["rules"] = [_rule(db, r) for r in rules]
    return data


def _fixed_by(rule: Rule, version: Version) -> bool:
    return rule.fixed_in is not None and rule.fixed_in == version


def _release_line(release: Release) -> dict[str, Any]:
    return {
        "version": str(release.version),
        "status": release.status,
        "date": release.date.isoformat() if release.date else None,
        "layer": release.layer,
    }


def _release(db: Database, release: Release) -> dict[str, Any]:
    source = db.source(release.source)
    return {
        **_release_line(release),
        "requires_python": spec_text(release.requires_python) or None,
        "requires": [
            {"requirement": str(d.requirement), "layer": d.layer, "reason": d.reason, "source": d.source}
            for d in release.dependencies
        ],
        "commit": release.commit,
        "source": source.to_dict() if source else None,
    }


def _rule(db: Database, rule: Rule) -> dict[str, Any]:
    source = db.source(rule.source)
    return {
        "id": rule.id,
        "kind": rule.kind,
        "severity": rule.severity,
        "releases": spec_text(rule.releases) or "all",
        "when": rule.when.describe(),
        "require": rule.require.describe() if rule.require else None,
        "fixed_in": str(rule.fixed_in) if rule.fixed_in else None,
        "message": rule.message,
        "source": source.to_dict() if source else {"id": rule.source},
    }


def render_text(data: dict[str, Any]) -> str:
    lines = [f"{data['name']} ({data['kind']})" + (f": {data['summary']}" if data["summary"] else "")]
    if data.get("homepage"):
        lines.append(f"  {data['homepage']}")
    if data["snapshot"]["taken"]:
        lines.append(f"  index metadata snapshot of {data['snapshot']['taken']} from {data['snapshot']['index']}")
    if data["options"]:
        lines += ["", "Options"]
        for name, option in data["options"].items():
            extra = []
            if option["values"]:
                extra.append("values: " + ", ".join(option["values"]))
            for key, label in (("default", "default"), ("unset", "left out, the engine's code uses")):
                if option.get(key) is not None:
                    value = option[key]
                    extra.append(f"{label}: {str(value).lower() if isinstance(value, bool) else value}")
            if option.get("own"):
                extra.append("compat's name, not a flag")
            summary = option["summary"] or (f"a flag of {data['flags']}" if data.get("flags") else "")
            lines.append(f"  {'' if option.get('own') else '--'}{name}: {summary}" + (f" ({'; '.join(extra)})" if extra else ""))
    if data.get("flags"):
        lines += ["", f"Flags of each release: {data['flags']} (compat check judges a stack's flags by it)"]
    if "releases" in data:
        lines += ["", f"Releases ({len(data['releases'])})"]
        for release in data["releases"]:
            flag = "" if release["status"] == "release" else f" [{release['status']}]"
            lines.append(f"  {release['version']}{flag}  {release['date'] or ''}  ({release['layer']})")
    elif data.get("release") is None:
        lines += ["", "No record of this release in the database."]
    else:
        release = data["release"]
        lines += ["", f"Release {release['version']} ({release['status']}, {release['date'] or 'no date'})"]
        if release["source"]:
            lines.append(f"  source: {release['source']['title']}")
        lines.append(f"  requires Python {release['requires_python'] or '(any)'}")
        for requirement in release["requires"]:
            note = f" [curated: {requirement['reason']}]" if requirement["layer"] == "curated" else ""
            lines.append(f"  requires {requirement['requirement']}{note}")
    for kind, heading in _KINDS:
        rules = [r for r in data["rules"] if r["kind"] == kind]
        if not rules:
            continue
        lines += ["", heading]
        for rule in rules:
            lines.append(f"  {rule['id']} [{rule['severity']}] releases {rule['releases']}")
            if rule["when"] != "always":
                lines.append(f"    when {rule['when']}")
            if rule["require"]:
                lines.append(f"    requires {rule['require']}")
            if rule["fixed_in"]:
                lines.append(f"    fixed in {rule['fixed_in']}")
            lines.append(f"    {rule['message']}")
            source = rule["source"]
            cite = source.get("title", source["id"])
            if source.get("url"):
                cite += f" <{source['url']}>"
            lines.append(f"    source: {cite}")
    return "\n".join(lines) + "\n"
