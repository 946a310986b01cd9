"""`compat resolve` and `compat why`: the commands that answer with versions
and with constraints (apart from `check`, whose every run would otherwise
make their options too)."""

from __future__ import annotations

import sys

import click

from ..errors import CompatError
from . import (EXIT_FINDINGS, _color_option, _colored, _db_option, _deliver, _echo, _fail, _format_option,
               _output_option, cli)
from .stack import _fail_as, _stack_overlay


@cli.command()
@click.argument("stack", type=click.Path(dir_okay=False))
@_output_option("the result")
@_format_option(["toml", "requirements", "pylock"], "toml")
@_color_option
@click.option("--pre", is_flag=True, help="Allow pre-releases everywhere (by default only where a specifier names one).")
@click.option("--max-rounds", type=click.IntRange(min=1), default=2000, show_default=True, help="The resolver's budget.")
@_db_option
def resolve(stack: str, output: str | None, fmt: str, color: str, pre: bool, max_rounds: int,
            db_path: str | None) -> None:
    """Pin every package of STACK, and the tracked packages they need, to the
    newest versions that work on its machine. Exit 1 (with the reason and
    the smallest changes that work) when there are none."""
    from ..api import resolve as run_resolve
    from ..formats.pinned import requirements, stack_toml
    from ..knowledge.database import Database
    from ..knowledge.binding import load_stack

    try:
        database = Database.load(db_path)
        given = load_stack(stack, database)
        database = _stack_overlay(database, given)
        resolution = run_resolve(given, database=database, pre=pre, max_rounds=max_rounds)
        if not resolution.ok:
            from ..formats.text import render as render_text

            assert resolution.report is not None
            colored = _colored(color, sys.stderr)
            click.echo(render_text(resolution.report, color=colored), err=True, nl=False, color=colored)
            sys.exit(EXIT_FINDINGS)
    except CompatError as exc:
        _fail(exc)
    loaded, pins, added = resolution.stack, resolution.packages, resolution.added
    if fmt == "pylock":
        from ..formats.pylock import pylock

        try:
            text = pylock(loaded, {**pins, **added}, database)
        except CompatError as exc:
            _fail(exc)
    elif fmt == "toml":
        text = stack_toml(loaded, pins, added, path=output)  # its [compat] overlay relative to where it is written
    else:
        text = requirements(loaded, pins, added, database)
    _deliver(text, output, f": {len(pins) + len(added)} packages pinned")


@cli.command()
@click.argument("name")
@click.argument("stack", required=False, type=click.Path(dir_okay=False))
@click.option("--stack", "stack_path", type=click.Path(dir_okay=False), help="Show which constraints bind in this stack "
              "(or give it after NAME).")
@click.option("--all", "show_all", is_flag=True, help="With a STACK, list the constraints that do not bind it too "
              "(the JSON report always has them all).")
@_format_option(["text", "json"], "text")
@_db_option
def why(name: str, stack: str | None, stack_path: str | None, show_all: bool, fmt: str, db_path: str | None) -> None:
    """Every constraint on NAME (a package, or python, cuda, driver, rocm,
    gpu): which release, rule, build or metadata imposes it, under which
    conditions, and (with a STACK) those that bind it, the stack's own, and
    what stops each newer release the stack admits (--all: the others too)."""
    if stack and stack_path and stack != stack_path:
        raise click.UsageError(f"two stacks: {stack} and --stack {stack_path}; give one")
    stack_path = stack_path or stack
    from .._names import is_name, normalize

    if not is_name(name.strip()):
        shown = name if len(name) <= 60 else name[:60] + "…"
        _fail_as(fmt, CompatError(f"{shown!r} is not a name: compat why takes a package (vllm) or python, cuda, "
                                  "driver, rocm, gpu; the versions a stack pins are its STACK's"))
    from ..engine.why import constraints_on, render
    from ..knowledge.database import Database
    from ..knowledge.binding import load_stack

    try:
        database = Database.load(db_path)
        loaded = load_stack(stack_path, database) if stack_path else None
        report = constraints_on(normalize(name), _stack_overlay(database, loaded), loaded)
    except CompatError as exc:
        _fail_as(fmt, exc)
    if fmt == "json":
        import json

        _echo(json.dumps(report.to_dict(), indent=2))
    else:
        _echo(render(report, show_all=show_all), nl=False)  # (without a stack, nothing is left out)
