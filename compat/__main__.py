from ._script import run

run()
