"""`compat graph`: the dependency and conflict graph of a stack, to draw."""

from __future__ import annotations

import click

from ..errors import CompatError
from . import _db_option, _deliver, _fail, _format_option, _output_option, cli


@cli.command()
@click.argument("stack", type=click.Path(dir_okay=False))
@_format_option(["mermaid", "dot"], "mermaid",
                help="mermaid (GitHub draws it in a ```mermaid block of Markdown) or dot (Graphviz).")
@_output_option("the graph")
@click.option("--ignore", "ignore", multiple=True, metavar="ID",
              help="A finding ID (* and ? allowed) whose conflict is not drawn (repeatable).")
@_db_option
def graph(stack: str, fmt: str, output: str | None, ignore: tuple[str, ...], db_path: str | None) -> None:
    """Draw STACK's packages, what each requires, and the machine, with the
    conflicts its check finds in red. Exit 0 when drawn, whatever the
    check's verdict (compat check gives it); 2 if the stack cannot be read."""
    from ..engine.check import check_stack
    from ..formats.graph import render
    from ..knowledge.database import Database
    from ..knowledge.binding import load_stack
    from ..sources.stack import check_ignore

    try:
        database = Database.load(db_path)
        loaded = load_stack(stack, database)
        report = check_stack(loaded, database, ignore=check_ignore(ignore), suggest_fixes=False)
    except CompatError as exc:
        _fail(exc)
    text = render(report, database, fmt)
    _deliver(text, output)
