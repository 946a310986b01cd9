"""`compat db`: inspect and maintain the constraint database."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ..errors import CompatError
from . import EXIT_FINDINGS, EXIT_INCOMPLETE, Seconds, _db_option, _echo, _fail, _isatty, cli

if TYPE_CHECKING:
    from packaging.version import Version

@cli.group()
def db() -> None:
    """Inspect and maintain the constraint database."""


@db.command()
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: a list of the problems, each with its file, line, key and message (the exit code is the same).")
@_db_option
def lint(fmt: str, db_path: str | None) -> None:
    """Check the whole database: IDs, sources, specifiers, references. Exit 1 on any problem."""
    from ..knowledge.database import Database
    from ..knowledge.lint import lint_database

    try:
        database = Database.load(db_path)
    except CompatError as exc:
        if fmt == "json":
            from ..formats.json import render_error

            _echo(render_error(exc), nl=False)
        _fail(exc)
    problems = lint_database(database)
    if fmt == "json":
        import json

        _echo(json.dumps([{"file": p.file, "line": p.line, "key": p.key, "message": p.message, "layer": p.layer,
                           "text": str(p)}
                          for p in problems], indent=2))
    else:
        for problem in problems:
            _echo(str(problem))
    if problems:
        from ..knowledge.layers import layers_of

        folders = " and ".join(layer.folder for layer in layers_of(database))
        click.echo(f"{len(problems)} problem(s) in {folders}", err=True)
        sys.exit(EXIT_FINDINGS)
    if fmt == "json":
        return
    counts = database.counts()
    _echo(
        f"ok: {counts['components']} components, {counts['releases']} releases, {counts['rules']} rules, "
        f"{counts['sources']} sources, {counts['gpus']} GPUs"
    )


@db.command()
@click.argument("spec", metavar="NAME[==VERSION]")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_db_option
def show(spec: str, fmt: str, db_path: str | None) -> None:
    """Everything the database knows of a component, or of one release of it
    (NAME "gpus": the GPU catalog)."""
    from packaging.version import Version

    from .._names import did_you_mean, normalize
    from ..formats.component import describe, render_text
    from ..knowledge.database import Database

    name, _, version_text = spec.partition("==")
    if name.strip().lower() == "gpus" and not version_text:
        _show_gpus(fmt, db_path)
        return
    try:
        database = Database.load(db_path)
        component = database.component(name)
        if component is None:
            if database.gpu(name) is not None:
                _fail(f"{name!r} is a GPU, not a component: compat db show gpus lists the GPU catalog")
            _fail(f"{name!r} is not in the database{did_you_mean(normalize(name), database.names() | {'gpus'})}")
        version = Version(version_text) if version_text else None
        if version is not None and component.release(version) is None:
            _fail(f"{component.name} {version_text} is not in the database{_nearest_releases(version, component.versions())}")
        data = describe(database, component, version)
    except ValueError:  # InvalidVersion, or a number past int()'s digit limit
        shown = version_text if len(version_text) <= 60 else version_text[:60] + "…"
        _fail(f"{shown!r} is not a version")
    except CompatError as exc:
        _fail(exc)
    _emit(data, fmt, render_text)


def _nearest_releases(version: Version, held: list[Version]) -> str:
    """A suffix for the error of a release the database does not hold: the
    releases it holds just below and just above `version` (``; did you mean
    0.31.1 or 0.32.0?``), or that it holds none. Versions are compared as
    versions, so a typo of one digit lands next to the release meant."""
    if not held:
        return " (it holds no release of it)"
    below = [v for v in held if v < version][-1:]
    above = [v for v in held if v > version][:1]
    return f"; did you mean {' or '.join(str(v) for v in below + above)}?"


def _show_gpus(fmt: str, db_path: str | None) -> None:
    """`compat db show gpus`: the GPU catalog, one GPU a line (or a JSON list)."""
    from ..knowledge.database import Database

    try:
        gpus = Database.load(db_path).catalog.gpus
    except CompatError as exc:
        _fail(exc)
    rows = [
        {
            "name": gpu.name,
            "vendor": gpu.vendor,
            "architecture": gpu.architecture,
            "compute_capability": None if gpu.compute_capability is None else str(gpu.compute_capability),
            "gfx_target": gpu.gfx_target,
            "memory_gb": gpu.memory_gb,
            "segment": gpu.segment,
            "aliases": list(gpu.aliases),
            "source": gpu.source,
        }
        for gpu in gpus
    ]
    if fmt == "json":
        import json

        _echo(json.dumps(rows, indent=2))
        return
    header = ("GPU", "vendor", "architecture", "cc / gfx", "memory", "segment")
    table = [header] + [
        (r["name"], r["vendor"], r["architecture"], r["compute_capability"] or r["gfx_target"] or "-",
         f"{r['memory_gb']} GB" if r["memory_gb"] else "-", r["segment"])
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        _echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    _echo(f"{len(rows)} GPUs (compute capability for NVIDIA, gfx target for AMD)")


@db.command()
@_db_option
@click.option("--index-url", help="A PEP 691 simple index (default: PIP_INDEX_URL, else the public index).")
@click.option("--package", "packages", multiple=True, metavar="NAME", help="Only these packages (repeatable; default: those in sync.toml).")
@click.option("--since", type=click.DateTime(formats=["%Y-%m-%d"]), help="First upload date to read (default: sync.toml's).")
@click.option("--timeout", type=Seconds(), default=30.0, show_default=True,
              help="Seconds one request may take in all (connecting, waiting and reading).")
@click.option("--deadline", type=Seconds(), default=3600.0, show_default=True,
              help="Seconds of wall-clock time the whole run may take.")
@click.option("--package-deadline", type=Seconds(), default=600.0, show_default=True,
              help="Seconds of wall-clock time one package may have requests in flight (concurrent requests "
                   "count once).")
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True, help="Retries of a failed request, with backoff.")
@click.option("--workers", type=click.IntRange(min=1), default=16, show_default=True, help="Requests in flight at once.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="HOST",
              help="A host besides the index's that may serve files (repeatable; adds to sync.toml's allow_hosts).")
@click.option("--quiet", "-q", is_flag=True, help="No progress: neither the bar on a terminal nor the lines elsewhere.")
@click.option("--allow-removal", is_flag=True,
              help="Let a snapshot lose releases it holds: those the index no longer lists, and those the plan "
                   "would now leave out (older than --since, no longer required).")
def sync(db_path: str | None, index_url: str | None, packages: tuple[str, ...], since, timeout: float,  # type: ignore[no-untyped-def]
         deadline: float, package_deadline: float, retries: int, workers: int, allow_hosts: tuple[str, ...],
         quiet: bool, allow_removal: bool) -> None:
    """Refresh the metadata snapshots from a package index: into the user
    data folder (compat db path shows it), or with --db into that database.

    Nothing is written unless every package was read: a failing index leaves
    the old snapshots intact (exit 2). A package whose snapshot holds a
    release the index no longer lists keeps its old snapshot, and the run
    exits 4 after writing the others. docs/reliability.md says what is
    refused and why.

    Only what changed is read again: the metadata of a file an older
    snapshot read is kept, and a sync cut short is resumed by the next.
    Progress goes to standard error: a bar on a terminal, else a line every
    few seconds (--quiet: none).
    """
    import os

    from ..knowledge.database import Database
    from ..knowledge.index import IndexClient, project_name
    from ..knowledge.layers import sync_folder
    from ..knowledge.sync import index_url_from_environment, load_plan
    from ..knowledge.sync import sync as run_sync

    try:
        names = []
        for text in packages:
            name = project_name(text)
            if name is None:
                _fail(f"--package {text!r}: not a package name (PEP 508)")
            names.append(name)
        database = Database.load(db_path)
        plan = load_plan(os.path.join(database.root, "sync.toml"))
        if names:
            plan.packages = names
        if since is not None:
            plan.since = since.date()
        client = IndexClient(index_url_from_environment(index_url), timeout=timeout, retries=retries,
                             allow_hosts=plan.allow_hosts + allow_hosts, deadline=deadline,
                             package_deadline=package_deadline)
        progress = None if quiet else _Progress(sys.stderr, _isatty(sys.stderr))
        target = database.metadata_dir if db_path else sync_folder()  # no --db: the user data folder (layers.py)
        try:
            result = run_sync(plan, target, client, workers=workers, progress=progress, allow_removal=allow_removal,
                              previous=database.snapshot_path,
                              expected=() if names else database.names())  # a whole sync: its old closure
        finally:
            if progress is not None:
                progress.close()
    except CompatError as exc:
        _fail(exc)
    except OSError as exc:  # writing the database (a full disk): the staged write changed nothing
        _fail(f"{exc.filename or db_path or 'the database'}: cannot write the database "
              f"({exc.strerror or exc}); nothing was changed")
    how = ", ".join(f"{n} by {k}" for k, n in sorted(result.how.items()))
    total = len(result.written) + len(result.unchanged)
    _echo(
        f"{total} packages ({total - len(result.untracked)} tracked, {len(result.untracked)} required by them), "
        f"{result.releases} releases ({how}), {result.requests} requests from {client.display(client.index_url)}; "
        f"{len(result.written)} snapshot(s) written, {len(result.unchanged)} unchanged"
    )
    if result.reused:
        _echo(f"{result.reused} release(s) kept the metadata already read for the same file (not requested again)")
    _echo(_changed_summary(result.changes))
    if not db_path:
        _echo(f"snapshots in {target}, read over the bundled database (compat db path shows the layers)")
    if result.unknown:
        _echo(f"{result.unknown} release(s) whose requirements the index does not state (sdists with dynamic metadata)")
    if result.build_systems:
        _echo(f"{result.build_systems} sdist(s) of releases without a wheel for Linux read for their build system "
              f"({result.build_bytes / 1024 / 1024:.1f} MiB)")
    if result.invalid:
        _echo(f"{result.invalid} Requires-Dist line(s) that do not parse, skipped")
    if result.missing:
        _echo(f"required but not on the index: {', '.join(result.missing)}")
    if result.unmet:
        shown = "; ".join(result.unmet[:5]) + (f"; and {len(result.unmet) - 5} more" if len(result.unmet) > 5 else "")
        _echo(f"{len(result.unmet)} requirement(s) that no release on the index meets (its page read again, "
              f"past any cache): {shown}")
    for line in result.ignored:
        _echo(f"ignored: {line}")
    for line in result.refused_releases:
        _echo(f"refused release: {line}")
    for line in result.refused:
        click.echo(f"compat: refused: {line}", err=True)
    if result.refused:
        sys.exit(EXIT_INCOMPLETE)


@db.command()
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: each layer with its folder, counts, dates, indexes and the last sync's record.")
@_db_option
def status(fmt: str, db_path: str | None) -> None:
    """How old the database is and where it came from: for each layer
    (bundled, user data, overlay), when its snapshots were taken, from which
    index, how many packages and releases, and what its last sync changed."""
    from ..knowledge.database import Database
    from ..knowledge.layers import describe_layers

    try:
        data = _status(describe_layers(Database.load(db_path)))
    except CompatError as exc:
        _fail(exc)
    _emit(data, fmt, _render_status)


def _status(layers: dict[str, Any]) -> dict[str, Any]:
    """`describe_layers`, each layer with the counts, dates and indexes of
    its snapshots' headers and its last sync's record (sync.LAST_SYNC)."""
    import datetime as dt
    import os

    from ..errors import DatabaseError
    from ..knowledge.snapshot import header_and_count
    from ..knowledge.sync import read_last_sync

    today = dt.date.fromisoformat(layers["today"])
    out = []
    for layer in layers["layers"]:
        row = {k: layer[k] for k in ("layer", "folder", "read", "note")}
        folder = os.path.join(layer["folder"], "metadata") if layer["folder"] else None
        releases, indexes, unreadable = 0, set(), []
        for snapshot in layer["snapshots"]:
            try:
                header, count = header_and_count(os.path.join(folder or "", f"{snapshot['name']}.jsonl"))
            except DatabaseError:
                unreadable.append(snapshot["name"])
                continue
            releases += count
            if isinstance(header.get("index"), str):
                indexes.add(header["index"])
        dates = sorted(s["taken"] for s in layer["snapshots"] if s["taken"])
        row.update({
            "packages": len(layer["snapshots"]),
            "in_use": sum(1 for s in layer["snapshots"] if s["in_use"]),
            "releases": releases,
            "oldest": dates[0] if dates else None,
            "newest": dates[-1] if dates else None,
            "age_days": (today - dt.date.fromisoformat(dates[-1])).days if dates else None,
            "indexes": sorted(indexes),
            "unreadable": unreadable,
            "last_sync": read_last_sync(folder) if folder and layer["read"] else None,
        })
        out.append(row)
    return {"today": layers["today"], "stale_after_days": layers["stale_after_days"], "layers": out}


def _render_status(data: dict[str, Any]) -> str:
    from ..knowledge.index import mask_url

    lines = []
    for layer in data["layers"]:
        lines.append(f"{layer['layer']:<8} {layer['folder'] or '-'}")
        if not layer["read"] or not layer["packages"]:
            lines.append(f"         {layer['note'] or 'no snapshots'}")
            continue
        age = layer["age_days"]
        when = layer["newest"] if layer["oldest"] == layer["newest"] else f"{layer['oldest']} to {layer['newest']}"
        ago = "today" if age == 0 else f"{age} day{'s' * (age != 1)} ago"
        source = ", ".join(mask_url(i) for i in layer["indexes"]) or "an unknown index"
        lines.append(f"         {layer['packages']} packages ({layer['in_use']} in use), {layer['releases']} releases; "
                     f"taken {when} ({ago}) from {source}")
        if layer["unreadable"]:
            lines.append(f"         unreadable: {', '.join(layer['unreadable'][:5])} (compat db lint says why)")
        last = layer["last_sync"]
        if last:
            lines.append(f"         last sync {last.get('taken', '?')}: {last.get('releases', '?')} releases, "
                         f"{last.get('reused', '?')} of them not read again, {last.get('requests', '?')} requests; "
                         f"{_changed_summary(last.get('changes', {}))}")
    return "\n".join(lines) + "\n"


@db.command()
@click.argument("old", type=click.Path(file_okay=False))
@click.argument("new", type=click.Path(file_okay=False))
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def diff(old: str, new: str, fmt: str) -> None:
    """What changed between two databases' snapshots (OLD and NEW: database
    folders, or their metadata/ folders): versions new on the index,
    releases newly kept, newly yanked or removed, releases whose
    requirements changed, packages added or dropped. Exit 0 either way:
    a difference is not a conflict."""
    import os

    from ..knowledge.sync import diff_metadata

    def metadata(folder: str) -> str:
        inner = os.path.join(folder, "metadata")
        return inner if os.path.isdir(inner) else folder

    for folder in (old, new):
        if not os.path.isdir(folder):
            _fail(f"{folder}: no such folder (a database folder, or its metadata/ folder)")
    try:
        changes = diff_metadata(metadata(old), metadata(new))
    except CompatError as exc:
        _fail(exc)
    if fmt == "json":
        import json

        _echo(json.dumps(changes, indent=2, sort_keys=True))
        return
    words = {"added": "added", "dropped": "dropped", "listed": "new on the index", "new": "newly kept",
             "yanked": "newly yanked", "removed": "no longer kept", "requirements": "requirements changed"}
    for name, changed in changes.items():
        parts = [f"{words[k]} {', '.join(v[:8])}{f' (+{len(v) - 8})' if len(v) > 8 else ''}".rstrip()
                 for k, v in changed.items()]
        _echo(f"{name}: {'; '.join(parts)}")
    _echo(_changed_summary(changes) if changes else "no difference")


@db.command("path")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: every snapshot of every layer, with its date, its age and whether a check reads it.")
@_db_option
def path_(fmt: str, db_path: str | None) -> None:
    """The layers of the database (bundled, user data, overlay), their folders
    and how old their snapshots are."""
    from ..knowledge.database import Database
    from ..knowledge.layers import describe_layers, render_layers

    try:
        data = describe_layers(Database.load(db_path))
    except CompatError as exc:
        _fail(exc)
    _emit(data, fmt, render_layers)


def _emit(data: object, fmt: str, render: Callable[[Any], str]) -> None:
    """Print `data` as JSON (--format json) or as `render` writes it."""
    if fmt == "json":
        import json

        _echo(json.dumps(data, indent=2))
    else:
        _echo(render(data), nl=False)


def _changed_summary(changes: dict[str, dict[str, list[str]]]) -> str:
    """One line on what a sync (or db diff) changed: new versions on the
    index, releases newly kept, newly yanked, no longer kept, whose
    requirements changed, and packages added or dropped."""
    if not changes:
        return "nothing changed since the last snapshots"
    counts = {key: sum(len(c.get(key, ())) for c in changes.values()) for key in _SUMMARY}
    parts = [f"{n} release(s) {_SUMMARY[k]}" for k, n in counts.items() if n]
    packages = {key: sum(key in c for c in changes.values()) for key in ("added", "dropped")}
    parts += [f"{n} package(s) {key}" for key, n in packages.items() if n]
    return f"changed in {len(changes)} package(s): " + ", ".join(parts)


_SUMMARY = {"listed": "new on the index", "new": "newly kept", "yanked": "newly yanked", "removed": "no longer kept",
            "requirements": "with changed requirements"}


class _Progress:
    """Where a sync is, on standard error: one line rewritten in place on a
    terminal; elsewhere (CI logs) a plain line at most every `every`
    seconds, and one when a phase ends."""

    def __init__(self, stream: Any, terminal: bool, every: float = 5.0) -> None:
        self.stream = stream
        self.terminal = terminal
        self.every = every
        self._last = float("-inf")
        self._drawn = False

    def __call__(self, state: Any) -> None:
        label = "listing projects" if state.phase == "pages" else "reading metadata"
        line = (f"compat db sync: {label} {state.done}/{state.total} ({state.package}), "
                f"{state.requests} requests, {state.elapsed:.0f} s")
        now = time.monotonic()
        finished = state.done == state.total
        if self.terminal:
            if finished or now - self._last >= 0.1:
                self._last = now
                self._write(f"\r\x1b[K{line}")
                self._drawn = True
        elif finished or now - self._last >= self.every:
            self._last = now
            self._write(line + "\n")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr: progress is not worth failing for
            pass

    def close(self) -> None:
        if self.terminal and self._drawn:
            self._write("\n")
