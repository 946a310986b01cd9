"""`compat db`: inspect and maintain the constraint database."""

from __future__ import annotations

import sys
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
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
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
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
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
              help="Seconds the whole run may take (each package's requests get at most 600 s of it).")
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True, help="Retries of a failed request, with backoff.")
@click.option("--workers", type=click.IntRange(min=1), default=8, show_default=True, help="Requests in flight at once.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="HOST",
              help="A host besides the index's that may serve files (repeatable; adds to sync.toml's allow_hosts).")
@click.option("--allow-removal", is_flag=True,
              help="Let a snapshot lose releases it holds: those the index no longer lists, and those the plan "
                   "would now leave out (older than --since, no longer required).")
def sync(db_path: str | None, index_url: str | None, packages: tuple[str, ...], since, timeout: float,  # type: ignore[no-untyped-def]
         deadline: float, retries: int, workers: int, allow_hosts: tuple[str, ...], allow_removal: bool) -> None:
    """Refresh the metadata snapshots from a package index: into the user
    data folder (compat db path shows it), or with --db into that database.

    Nothing is written unless every package was read: a failing index leaves
    the old snapshots intact (exit 2). A package whose snapshot holds a
    release the index no longer lists keeps its old snapshot, and the run
    exits 4 after writing the others. docs/reliability.md says what is
    refused and why.
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
                             allow_hosts=plan.allow_hosts + allow_hosts, deadline=deadline)
        progress = _progress if _isatty(sys.stderr) else None
        target = database.metadata_dir if db_path else sync_folder()  # no --db: the user data folder (layers.py)
        result = run_sync(plan, target, client, workers=workers, progress=progress, allow_removal=allow_removal,
                          previous=database.snapshot_path)
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
    for line in result.ignored:
        _echo(f"ignored: {line}")
    for line in result.refused_releases:
        _echo(f"refused release: {line}")
    for line in result.refused:
        click.echo(f"compat: refused: {line}", err=True)
    if result.refused:
        sys.exit(EXIT_INCOMPLETE)


@db.command("path")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
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


def _progress(iterator, length: int):  # type: ignore[no-untyped-def]
    with click.progressbar(iterator, length=length, label="reading metadata", file=sys.stderr) as bar:
        yield from bar
