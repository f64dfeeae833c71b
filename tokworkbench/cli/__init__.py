"""The command line: train, count, encode, decode, inspect, export, vocab, batches, compare, diff,
lock, check and the workbench (app, serve) — thin wrappers over the same core the app uses, one
module each.

With no sub-command it starts the workbench. Every failure prints one line and exits 1 (argument
errors exit 2 with the usage, as argparse does). Outputs are checked before any work: a bad
`-o` never wastes a training run, and nothing is written over one of the command's inputs.
The modules share cli/options.py (option groups, the settings' flags, output, the error line);
none imports this package's __init__, which imports them all through cli/parser.py.
"""

import signal
import sys

from tokworkbench.cli.app import app_settings
from tokworkbench.cli.options import PROG, advice, flush_stdout, silence_stdout
from tokworkbench.cli.parser import COMMANDS, DEFAULT, ERROR_STATUS, SCREENS, build_parser
from tokworkbench.core.errors import Terminated, TokWorkbenchError
from tokworkbench.core.inspection.escape import printable

__all__ = ["app_settings", "build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in (*COMMANDS, "-h", "--help"):
        argv = [DEFAULT, *argv]
    args = build_parser().parse_args(argv)
    if args.command not in SCREENS:
        signal.signal(signal.SIGTERM, _terminated)
    module = COMMANDS[args.command]
    try:
        status = module.run(args)
        flush_stdout()
        return status
    except TokWorkbenchError as exc:
        print(printable(f"{PROG}: error: {advice(exc, args, module.FLAGS)}"), file=sys.stderr)  # it may quote a file
        return ERROR_STATUS.get(args.command, 1)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{PROG}: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:  # the reader went away (| head): quiet, but not a success
        silence_stdout()
        return 141


def _terminated(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: the unwinding must not be cut short
    raise Terminated()
