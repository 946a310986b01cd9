"""`compat matrix`: the compatible combinations of an axes file, for a CI matrix."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from ..errors import CompatError
from . import EXIT_FINDINGS, Seconds, _db_option, _deliver, _fail, _format_option, _isatty, _output_option, cli


@cli.command()
@click.argument("axes", type=click.Path(dir_okay=False))
@_format_option(["github", "json", "markdown"], "github",
                help="github: one line for fromJSON; json: rows with warnings; markdown: a support table.")
@_output_option("the matrix", "atomically; the exit code is the same")
@click.option("--explain-excluded", is_flag=True,
              help="List each excluded combination with the finding that excluded it (standard error for github).")
@click.option("--pairwise", is_flag=True,
              help="Only the fewest compatible rows that hold every pair of axis values some compatible row holds.")
@click.option("--strength", type=click.IntRange(min=1), metavar="N",
              help="As --pairwise, for every N-tuple of axis values (--pairwise is --strength 2).")
@click.option("--seed", type=int, default=0, show_default=True, help="Vary which rows --pairwise keeps.")
@click.option("--rows", "rows_axis", metavar="AXIS", help="markdown: the axis down the table (default: the first).")
@click.option("--columns", "columns_axis", metavar="AXIS", help="markdown: the axis across it (default: the second).")
@click.option("--max-rounds", type=click.IntRange(min=1), default=2000, show_default=True,
              help="The resolver's budget for each cell.")
@click.option("--deadline", type=Seconds(), default=900.0, show_default=True,
              help="Seconds the whole matrix may take; past them it stops with exit 2 (a matrix is all its cells).")
@_db_option
def matrix(axes: str, fmt: str, output: str | None, explain_excluded: bool, pairwise: bool, strength: int | None,
           seed: int, rows_axis: str | None, columns_axis: str | None, max_rounds: int, deadline: float,
           db_path: str | None) -> None:
    """The compatible combinations of AXES (an axes.toml), each resolved to a
    complete stack. Exit 0 with at least one, 1 if none works, 2 if the
    input is bad."""
    from .. import api
    from ..formats import matrix as render
    from ..knowledge.database import Database
    from ..knowledge.axes import load_axes

    if pairwise and strength not in (None, 2):
        _fail("--pairwise is --strength 2: give one of them")
    strength = 2 if pairwise else strength
    try:
        database = Database.load(db_path)
        loaded = load_axes(axes, database)
        if strength is not None and strength > len(loaded.axes):
            _fail(f"--strength {strength}: {loaded.shown_file} has {len(loaded.axes)} "
                  f"ax{'is' if len(loaded.axes) == 1 else 'es'}")
        shown_rows, shown_columns = _table_axes(loaded.names, rows_axis, columns_axis) if fmt == "markdown" \
            else (None, None)
        with _progress(loaded.cells) as progress:
            result = api.matrix(loaded, database=database, strength=strength, seed=seed, max_rounds=max_rounds,
                                progress=progress, deadline=deadline)
    except CompatError as exc:
        _fail(exc)
    click.echo(f"compat matrix: {render.summary(result)}", err=True)
    if fmt != "json" and render.uncoverable_text(result):
        click.echo(f"compat matrix: {render.uncoverable_text(result)}", err=True, nl=False)
    if fmt == "github":
        if len(result.rows) > 256:
            click.echo(f"compat matrix: {len(result.rows)} rows: GitHub Actions runs at most 256 jobs from one "
                       "matrix (--pairwise keeps fewer)", err=True)
        if explain_excluded:
            click.echo(render.excluded_text(result), err=True, nl=False)
        text = render.github(result)
    elif fmt == "json":
        text = render.json(result, explain=explain_excluded)
    else:
        assert shown_rows is not None
        text = render.markdown(result, shown_rows, shown_columns, explain=explain_excluded)
    _deliver(text, output, f": {len(result.rows)} row{'' if len(result.rows) == 1 else 's'}")
    if not result.rows:
        sys.exit(EXIT_FINDINGS)


def _table_axes(names: tuple[str, ...], rows: str | None, columns: str | None) -> tuple[str, str | None]:
    """The axes of the markdown table: as asked, else the first two."""
    from .._names import did_you_mean

    for option, name in (("--rows", rows), ("--columns", columns)):
        if name is not None and name not in names:
            _fail(f"{option} {name}: not an axis of the file (its axes: {', '.join(names)})"
                  f"{did_you_mean(name, names)}")
    rows = rows or next((n for n in names if n != columns), names[0])
    if columns is None:
        columns = next((n for n in names if n != rows), None)
    if columns == rows:
        _fail(f"--rows and --columns both name {rows}: give two axes")
    return rows, columns


@contextmanager
def _progress(cells: int) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on standard error when it is a terminal; nothing otherwise."""
    if not _isatty(sys.stderr):
        yield None
        return
    with click.progressbar(length=cells, label="compat matrix", file=sys.stderr) as bar:
        def update(done: int, total: int) -> None:
            bar.update(done - bar.pos)

        yield update
