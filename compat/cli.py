"""The command line. It maps flags to the pieces; the work is elsewhere."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

from . import __version__
from .errors import CompatError

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2


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
@click.option("--ignore", "ignore", multiple=True, metavar="ID", help="Suppress a finding by ID (repeatable; * and ? allowed).")
@_db_option
def check(stack: str, fmt: str, strict: bool, ignore: tuple[str, ...], db_path: str | None) -> None:
    """Check STACK (a stack.toml): exit 0 if it works, 1 if not, 2 if the input is bad."""
    from .engine.check import check_stack
    from .knowledge.database import Database
    from .sources.stack import load_stack

    try:
        db = Database.load(db_path)
        loaded = load_stack(stack, db)
        report = check_stack(loaded, db, strict=strict or None, ignore=ignore)
    except CompatError as exc:
        _fail(exc)
    if fmt == "json":
        from .formats.json import render as render_json

        click.echo(render_json(report), nl=False)
    else:
        from .formats.text import render as render_text

        color = _use_color(sys.stdout.isatty())
        click.echo(render_text(report, color=color), nl=False, color=color)
    sys.exit(report.exit_code)


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
        click.echo(str(problem))
    if problems:
        click.echo(f"{len(problems)} problem(s) in {database.root}", err=True)
        sys.exit(EXIT_FINDINGS)
    counts = database.counts()
    click.echo(
        f"ok: {counts['components']} components, {counts['releases']} releases, {counts['rules']} rules, "
        f"{counts['sources']} sources, {counts['gpus']} GPUs"
    )


def main() -> None:
    cli(prog_name="compat")


if __name__ == "__main__":  # pragma: no cover
    main()
