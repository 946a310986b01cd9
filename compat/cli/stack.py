"""`compat check`, `compat resolve` and `compat why`: the commands that read a stack."""

from __future__ import annotations

import sys

import click

from ..errors import CompatError
from . import EXIT_FINDINGS, _db_option, _echo, _fail, _use_color, cli

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
    from ..engine.check import check_stack
    from ..knowledge.database import Database
    from ..sources.stack import check_ignore, load_stack

    try:
        db = Database.load(db_path)
        loaded = load_stack(stack, db)
        ignore = check_ignore(ignore)
        report = check_stack(loaded, db, strict=strict or None, ignore=ignore, max_rounds=max_rounds,
                             require_known=require_known or None)
    except CompatError as exc:
        _fail(exc)
    if fmt == "json":
        from ..formats.json import render as render_json

        _echo(render_json(report), nl=False)
    else:
        from ..formats.text import render as render_text

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
    from ..engine.check import check_stack
    from ..engine.resolver import resolve as run_resolve
    from ..formats.pinned import requirements, stack_toml
    from ..knowledge.database import Database
    from ..sources.stack import load_stack

    try:
        database = Database.load(db_path)
        loaded = load_stack(stack, database)
        resolution = run_resolve(loaded, database, max_rounds=max_rounds, pre=pre, closure=True)
        if not resolution.ok:
            report = check_stack(loaded, database, max_rounds=max_rounds)
            from ..formats.text import render as render_text

            click.echo(render_text(report, color=_use_color(sys.stderr.isatty())), err=True, nl=False)
            sys.exit(EXIT_FINDINGS)
    except CompatError as exc:
        _fail(exc)
    chosen = {k: str(c.version) for k, c in resolution.versions.items() if not k.startswith("__") and c.version is not None}
    pins = {n: chosen[n] for n in loaded.packages if n in chosen}
    added = {n: v for n, v in chosen.items() if n not in loaded.packages}
    if fmt == "pylock":
        from ..formats.pylock import pylock

        try:
            text = pylock(loaded, {**pins, **added}, database)
        except CompatError as exc:
            _fail(exc)
    elif fmt == "toml":
        text = stack_toml(loaded, pins, added)
    else:
        text = requirements(loaded, pins, added, database)
    if output:
        from .._files import write_atomic

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
    from .._names import did_you_mean, normalize
    from ..engine.why import constraints_on, render
    from ..knowledge.database import Database
    from ..sources.stack import load_stack

    try:
        database = Database.load(db_path)
        target = normalize(name)
        loaded = load_stack(stack_path, database) if stack_path else None
        if target not in database.names() and (loaded is None or target not in loaded.packages):
            _fail(f"{name!r} is not in the database{did_you_mean(target, database.names())}")
        _echo(render(constraints_on(target, database, loaded)), nl=False)
    except CompatError as exc:
        _fail(exc)
