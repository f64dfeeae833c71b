"""The command line's parser: one sub-command per module of this package, listed here once.

A command's module is imported when that command runs (or --help lists them all): importing
every command and the core they use took 0.1 s of each run, a twentieth of a 10 MB training."""

import argparse
import importlib
from types import ModuleType

from tokworkbench.cli.options import PROG

# in the order --help lists them; each is the module tokworkbench.cli.NAME, which has
# add_parser(sub), run(args) -> int and FLAGS (which of the flags the error hints name it has:
# options.HINTS)
COMMANDS = ("app", "train", "count", "encode", "decode", "inspect", "serve", "export", "vocab", "batches",
            "compare", "health", "lock", "check", "diff", "tree", "pipeline", "arena")
DEFAULT = "app"  # the command when the first word is none of these
SCREENS = ("app", "serve")  # Textual answers their signals itself
ANSWERS = ("compare", "check", "diff")  # their 1 is an answer: an error exits with their module's ERROR_STATUS


def command(name: str) -> ModuleType:
    return importlib.import_module(f"tokworkbench.cli.{name}")


def error_status(name: str) -> int:
    return command(name).ERROR_STATUS if name in ANSWERS else 1


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the one named `only` (what a run needs)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A workbench for byte-pair-encoding tokenizers. Without a command, opens the "
        "workbench on PATHs (or on the embedded sample texts).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in (only,) if only else COMMANDS:
        command(name).add_parser(sub)
    return parser
