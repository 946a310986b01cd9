"""`compat detect`: a stack.toml for the machine compat runs on."""

from __future__ import annotations

import click

from ..errors import CompatError
from ..sources.detect import DEFAULT_TIMEOUT  # (the group imports this module for `compat detect` alone)
from . import Seconds, _db_option, _deliver, _fail, _output_option, cli


@cli.command()
@_output_option("the stack", "atomically: a complete file or none")
@click.option("--python", "python", metavar="PATH",
              help="Describe the environment of this interpreter (default: the one compat runs in).")
@click.option("--timeout", type=Seconds(0.1), default=DEFAULT_TIMEOUT, show_default=True,
              help="Seconds that nvidia-smi, rocm-smi, the torch import and the interpreter's listing of its "
                   "distributions may each take before they are stopped.")
@_db_option
def detect(output: str | None, python: str | None, timeout: float, db_path: str | None) -> None:
    """Write a stack.toml for this machine: Python, platform and glibc; the
    tracked packages installed, with their build labels; the GPUs, their
    count, compute capability and driver (nvidia-smi, or rocm-smi); and the
    CUDA or ROCm version torch was built with. What cannot be found is left
    out, with a note (on standard error and as a comment in the file)."""
    from ..knowledge.database import Database
    from ..sources.detect import detect as run_detect
    from ..formats.detected import notes_of, render
    from ..knowledge.binding import load_stack

    try:
        database = Database.load(db_path)
        text = render(run_detect(python, timeout, platforms=database.platforms), database)
    except CompatError as exc:
        _fail(exc)
    # What compat writes, compat must read back: a stack that does not load is compat's bug (exit 3), never a file.
    from .. import _toml

    try:
        load_stack(_toml.loads(text, file="<detected>"), database)
    except CompatError as exc:
        raise RuntimeError(f"the detected stack does not load: {exc}") from exc
    for note in notes_of(text):
        click.echo(f"compat: note: {note}", err=True)
    _deliver(text, output)
