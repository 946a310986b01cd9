"""The command line. It maps flags to the pieces; the work is elsewhere."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

from . import __version__
from .errors import CompatError

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
EXIT_INCOMPLETE = 4  # db sync: some package kept its old snapshot (docs/reliability.md)


class _OutputClosed(Exception):
    """The reader of standard output went away (``compat check x | head``)."""


def _echo(message: str = "", **kwargs: object) -> None:
    """click.echo to standard output; a closed pipe is not turned into exit 1."""
    try:
        click.echo(message, **kwargs)  # type: ignore[arg-type]
    except BrokenPipeError:
        raise _OutputClosed from None


def _fail(error: CompatError | str) -> NoReturn:
    click.echo(f"compat: error: {error}", err=True)
    sys.exit(EXIT_INPUT)


def _use_color(stream_isatty: bool) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream_isatty


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="compat")
def cli() -> None:
    """Check AI-inference deployment stacks against the constraints of their
    packages, hardware and options before an upgrade."""


_db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(file_okay=False),
    envvar="COMPAT_DB",
    help="A constraint database folder (default: the bundled one).",
)


@cli.command()
@click.argument("stack", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Warnings fail the check too.")
@click.option("--require-known", is_flag=True,
              help="A release or build the database does not hold is an error, not a warning.")
@click.option("--ignore", "ignore", multiple=True, metavar="ID", help="Suppress a finding by ID (repeatable; * and ? allowed).")
@click.option("--max-rounds", type=click.IntRange(min=1), default=2000, show_default=True, help="The resolver's budget.")
@_db_option
def check(stack: str, fmt: str, strict: bool, require_known: bool, ignore: tuple[str, ...], max_rounds: int,
          db_path: str | None) -> None:
    """Check STACK (a stack.toml): exit 0 if it works, 1 if not, 2 if the input is bad."""
    import gc

    # One short process whose objects all live until it exits: the cyclic
    # collector would only walk them (about a tenth of the run's time).
    gc.disable()
    from .engine.check import check_stack
    from .knowledge.database import Database
    from .sources.stack import check_ignore, load_stack

    try:
        db = Database.load(db_path)
        loaded = load_stack(stack, db)
        ignore = check_ignore(ignore)
        report = check_stack(loaded, db, strict=strict or None, ignore=ignore, max_rounds=max_rounds,
                             require_known=require_known or None)
    except CompatError as exc:
        _fail(exc)
    if fmt == "json":
        from .formats.json import render as render_json

        _echo(render_json(report), nl=False)
    else:
        from .formats.text import render as render_text

        color = _use_color(sys.stdout.isatty())
        _echo(render_text(report, color=color), nl=False, color=color)
    sys.exit(report.exit_code)


@cli.command()
@click.argument("stack", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the result here (atomically) instead of printing it.")
@click.option("--format", "fmt", type=click.Choice(["toml", "requirements", "pylock"]), default="toml", show_default=True)
@click.option("--pre", is_flag=True, help="Allow pre-releases everywhere (by default only where a specifier names one).")
@click.option("--max-rounds", type=click.IntRange(min=1), default=2000, show_default=True, help="The resolver's budget.")
@_db_option
def resolve(stack: str, output: str | None, fmt: str, pre: bool, max_rounds: int, db_path: str | None) -> None:
    """Pin every package of STACK, and the tracked packages they need, to the
    newest versions that work on its machine. Exit 1 (with the reason and
    the smallest changes that work) when there are none."""
    from .engine.check import check_stack
    from .engine.resolver import resolve as run_resolve
    from .formats.pinned import requirements, stack_toml
    from .knowledge.database import Database
    from .sources.stack import load_stack

    try:
        database = Database.load(db_path)
        loaded = load_stack(stack, database)
        resolution = run_resolve(loaded, database, max_rounds=max_rounds, pre=pre, closure=True)
        if not resolution.ok:
            report = check_stack(loaded, database, max_rounds=max_rounds)
            from .formats.text import render as render_text

            click.echo(render_text(report, color=_use_color(sys.stderr.isatty())), err=True, nl=False)
            sys.exit(EXIT_FINDINGS)
    except CompatError as exc:
        _fail(exc)
    chosen = {k: str(c.version) for k, c in resolution.versions.items() if not k.startswith("__") and c.version is not None}
    pins = {n: chosen[n] for n in loaded.packages if n in chosen}
    added = {n: v for n, v in chosen.items() if n not in loaded.packages}
    if fmt == "pylock":
        from .formats.pylock import pylock

        try:
            text = pylock(loaded, {**pins, **added}, database)
        except CompatError as exc:
            _fail(exc)
    elif fmt == "toml":
        text = stack_toml(loaded, pins, added)
    else:
        text = requirements(loaded, pins, added, database)
    if output:
        from ._files import write_atomic

        write_atomic(output, text)
        click.echo(f"wrote {output}: {len(pins) + len(added)} packages pinned", err=True)
    else:
        _echo(text, nl=False)


@cli.command()
@click.argument("name")
@click.option("--stack", "stack_path", type=click.Path(dir_okay=False), help="Show which constraints bind in this stack.")
@_db_option
def why(name: str, stack_path: str | None, db_path: str | None) -> None:
    """Every constraint on NAME: which release, rule or metadata imposes it,
    under which conditions, and (with --stack) which of them bind."""
    from ._names import did_you_mean, normalize
    from .engine.why import constraints_on, render
    from .knowledge.database import Database
    from .sources.stack import load_stack

    try:
        database = Database.load(db_path)
        target = normalize(name)
        loaded = load_stack(stack_path, database) if stack_path else None
        if target not in database.names() and (loaded is None or target not in loaded.packages):
            _fail(f"{name!r} is not in the database{did_you_mean(target, database.names())}")
        _echo(render(constraints_on(target, database, loaded)), nl=False)
    except CompatError as exc:
        _fail(exc)


@cli.group()
def db() -> None:
    """Inspect and maintain the constraint database."""


@db.command()
@_db_option
def lint(db_path: str | None) -> None:
    """Check the whole database: IDs, sources, specifiers, references. Exit 1 on any problem."""
    from .knowledge.database import Database
    from .knowledge.lint import lint_database

    try:
        database = Database.load(db_path)
    except CompatError as exc:
        _fail(exc)
    problems = lint_database(database)
    for problem in problems:
        _echo(str(problem))
    if problems:
        click.echo(f"{len(problems)} problem(s) in {database.root}", err=True)
        sys.exit(EXIT_FINDINGS)
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
    from packaging.version import InvalidVersion, Version

    from ._names import did_you_mean, normalize
    from .formats.component import describe, render_text
    from .knowledge.database import Database

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
        data = describe(database, component, version)
    except InvalidVersion:
        _fail(f"{version_text!r} is not a version")
    except CompatError as exc:
        _fail(exc)
    if fmt == "json":
        import json

        _echo(json.dumps(data, indent=2))
    else:
        _echo(render_text(data), nl=False)
    if version is not None and data.get("release") is None:
        sys.exit(EXIT_FINDINGS)


def _show_gpus(fmt: str, db_path: str | None) -> None:
    """`compat db show gpus`: the GPU catalog, one GPU a line (or a JSON list)."""
    from .knowledge.database import Database

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
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              help="Seconds one request may take in all (connecting, waiting and reading).")
@click.option("--deadline", type=click.FloatRange(min=0, min_open=True), default=3600.0, show_default=True,
              help="Seconds the whole run may take (each package's requests get at most 600 s of it).")
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True, help="Retries of a failed request, with backoff.")
@click.option("--workers", type=click.IntRange(min=1), default=8, show_default=True, help="Requests in flight at once.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="HOST",
              help="A host besides the index's that may serve files (repeatable; adds to sync.toml's allow_hosts).")
@click.option("--allow-removal", is_flag=True,
              help="Rewrite a snapshot even when the index no longer lists releases it holds.")
def sync(db_path: str | None, index_url: str | None, packages: tuple[str, ...], since, timeout: float,  # type: ignore[no-untyped-def]
         deadline: float, retries: int, workers: int, allow_hosts: tuple[str, ...], allow_removal: bool) -> None:
    """Refresh the metadata snapshots (data/metadata/) from a package index.

    Nothing is written unless every package was read: a failing index leaves
    the old snapshots intact (exit 2). A package whose snapshot holds a
    release the index no longer lists keeps its old snapshot, and the run
    exits 4 after writing the others. docs/reliability.md says what is
    refused and why.
    """
    import os

    from .knowledge.database import Database
    from .knowledge.index import IndexClient, project_name
    from .knowledge.sync import index_url_from_environment, load_plan
    from .knowledge.sync import sync as run_sync

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
        progress = _progress if sys.stderr.isatty() else None
        result = run_sync(plan, database.metadata_dir, client, workers=workers, progress=progress,
                          allow_removal=allow_removal)
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
    if result.unknown:
        _echo(f"{result.unknown} release(s) whose requirements the index does not state (sdists with dynamic metadata)")
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


def _progress(iterator, length: int):  # type: ignore[no-untyped-def]
    with click.progressbar(iterator, length=length, label="reading metadata", file=sys.stderr) as bar:
        yield from bar


EXIT_INTERNAL = 3
_REPORT_URL = "https://github.com/compat-dev/compat/issues"


def main(argv: list[str] | None = None) -> None:
    """Run the command line; exit 0 (no conflict), 1 (conflict), 2 (input
    compat cannot use), 3 (compat itself failed: a bug) or, for `db sync`
    only, 4 (some package kept its old snapshot).

    Exit 1 means a conflict and nothing else, so nothing else may exit 1:
    not an interruption, a usage error, nor an unexpected exception, which
    prints one line (the traceback only with --debug or COMPAT_DEBUG=1).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("COMPAT_DEBUG", "") not in ("", "0")
    args = [a for a in args if a != "--debug"]
    try:
        code = cli.main(args=args, prog_name="compat", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # usage errors, bad paths: input compat cannot use
        exc.show()
        sys.exit(EXIT_INPUT)
    except (click.Abort, KeyboardInterrupt):
        click.echo("compat: interrupted", err=True)
        sys.exit(130)
    except (_OutputClosed, BrokenPipeError):  # the reader went away (| head): not compat's failure, not a conflict
        _quiet_stdout()
        sys.exit(141)
    except CompatError as exc:
        _fail(exc)
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit 3
        if debug:
            import traceback

            traceback.print_exc()
        summary = f"{type(exc).__name__}: {exc}".splitlines()[0][:300] if str(exc) else type(exc).__name__
        hint = "" if debug else " (run again with --debug or COMPAT_DEBUG=1 for the traceback)"
        click.echo(f"compat: internal error ({summary}); please report it at {_REPORT_URL}{hint}", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)  # --help and --version return their code


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
