"""`compat upgrade`, `compat diff` and `compat outdated`: what moving a stack takes and brings."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

import click

from ..errors import CompatError
from . import _color_option, _colored, _db_option, _deliver, _fail, _format_option, _output_option, cli

if TYPE_CHECKING:
    from ..engine.plan import OutdatedReport, Plan
    from ..knowledge.database import Database

_format = _format_option(["text", "json", "markdown"], "text",
                         help="text for people; json; markdown for a pull-request comment.")
_output = _output_option("the report")
_ignore = click.option("--ignore", "ignore", multiple=True, metavar="ID",
                       help="Suppress a finding by ID in the checks (repeatable; * and ? allowed).")


@cli.command()
@click.argument("stack", type=click.Path(dir_okay=False))
@click.option("--to", "targets", multiple=True, required=True, metavar="SPEC",
              help="What to reach: vllm==0.33.0, transformers>=5.20, or vllm for its newest release that can work "
                   "(repeatable; python==3.12, cuda==13.0 and driver==580 name the machine).")
@_output
@_format
@_color_option
@_ignore
@_db_option
def upgrade(stack: str, targets: tuple[str, ...], output: str | None, fmt: str, color: str, ignore: tuple[str, ...],
            db_path: str | None) -> None:
    """Plan the upgrade of STACK to each --to: the fewest changes that reach
    it and pass a check (what moves, and why), and every known issue fixed or
    introduced, behaviour change and note it crosses that applies to this
    stack. Exit 0 with a plan, 1 when none reaches the target."""
    from ..api import upgrade as plan_upgrade

    _run(db_path, fmt, output, color, lambda database: plan_upgrade(stack, targets, database=database, ignore=ignore))


@cli.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@_output
@_format
@_color_option
@_ignore
@_db_option
def diff(old: str, new: str, output: str | None, fmt: str, color: str, ignore: tuple[str, ...],
         db_path: str | None) -> None:
    """What moves from OLD to NEW (two stack files, such as the two sides of a
    pull request) and what it changes for NEW: the same report as upgrade.
    Exit 0 if NEW passes a check, 1 if not."""
    from ..api import diff as plan_diff

    _run(db_path, fmt, output, color, lambda database: plan_diff(old, new, database=database, ignore=ignore))


@cli.command()
@click.argument("stack", type=click.Path(dir_okay=False))
@_output
@_format
@_color_option
@_ignore
@_db_option
def outdated(stack: str, output: str | None, fmt: str, color: str, ignore: tuple[str, ...],
             db_path: str | None) -> None:
    """For each package of STACK: the newest release it could move to without
    breaking anything else, and the newest release of all with what blocks it."""
    from ..api import outdated as find_outdated

    _run(db_path, fmt, output, color, lambda database: find_outdated(stack, database=database, ignore=ignore))


def _run(db_path: str | None, fmt: str, output: str | None, color: str,
         make: Callable[[Database], Plan | OutdatedReport]) -> NoReturn:
    """Load the database, `make` the report with it (the library's function,
    which reads the stack files, the --ignore patterns and the stacks'
    overlays), show it and exit with its code; bad input exits 2."""
    from ..knowledge.database import Database

    try:
        result = make(Database.load(db_path))
    except CompatError as exc:
        _fail(exc)
    _show(result, fmt, output, fmt == "text" and _colored(color, sys.stdout, output))
    sys.exit(result.exit_code)


def _show(result: Plan | OutdatedReport, fmt: str, output: str | None, color: bool) -> None:
    from ..engine.plan import Plan

    if fmt == "markdown":
        from ..formats import markdown

        text = markdown.render_plan(result) if isinstance(result, Plan) else markdown.render_outdated(result)
    else:
        from ..formats import plan as formats

        if fmt == "json":
            text = formats.render_json(result) if isinstance(result, Plan) else formats.render_outdated_json(result)
        else:
            text = formats.render_text(result, color=color) if isinstance(result, Plan) \
                else formats.render_outdated_text(result)
    _deliver(text, output, color=color)
