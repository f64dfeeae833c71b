"""Sub-commands that live in their own modules: each has `add_parser(sub)` and `run(args)`.

cli.py registers every module named here, so a new command is a new module and one line.
"""

from tokworkbench.commands import batches, compare, vocab

MODULES = {"vocab": vocab, "batches": batches, "compare": compare}
