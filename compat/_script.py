"""The console script (and ``python -m compat``): the command line, in a
process that ends with it.

It turns the cyclic garbage collector off before it imports the command
line. Importing click, packaging and compat makes tens of thousands of
objects, none of them garbage, and the collector walks them again and again
as they come (a few milliseconds of every run, more than any other single
step of a short check). Once they are in, they are frozen (left out of every
later walk) and the collector is on again, for commands that run long; a
check turns it off for its own run (cli/stack.py). `compat.cli.run` then
ends the process once its output is flushed.
"""

from __future__ import annotations

import gc
from typing import NoReturn


def run() -> NoReturn:
    gc.disable()
    from .cli import run as command_line

    gc.freeze()
    gc.enable()
    command_line()
