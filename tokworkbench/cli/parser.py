"""The command line's parser: one sub-command per module of this package, listed here once."""

import argparse

from tokworkbench.cli import (
    app,
    arena,
    batches,
    check,
    compare,
    count,
    decode,
    diff,
    encode,
    export,
    health,
    inspect,
    lock,
    pipeline,
    serve,
    train,
    tree,
    vocab,
)
from tokworkbench.cli.options import PROG

# name -> module, in the order --help lists them; each module has add_parser(sub), run(args) -> int
# and FLAGS (which of the flags the error hints name it has: options.HINTS)
COMMANDS = {"app": app, "train": train, "count": count, "encode": encode, "decode": decode, "inspect": inspect,
            "serve": serve, "export": export, "vocab": vocab, "batches": batches, "compare": compare,
            "health": health, "lock": lock, "check": check, "diff": diff, "tree": tree, "pipeline": pipeline,
            "arena": arena}
DEFAULT = "app"  # the command when the first word is none of these
SCREENS = ("app", "serve")  # Textual answers their signals itself
ERROR_STATUS = {"compare": compare.ERROR_STATUS, "check": check.ERROR_STATUS, "diff": diff.ERROR_STATUS}  # the exit status of an error where it is not 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A workbench for byte-pair-encoding tokenizers. Without a command, opens the "
        "workbench on PATHs (or on the embedded sample texts).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser
