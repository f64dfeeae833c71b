"""The command line: train, count, encode, decode, inspect, export, vocab, batches, compare, diff,
lock, check and the workbench (app, serve) — thin wrappers over the same core the app uses, one
module each.

With no sub-command it starts the workbench. Every failure prints one line and exits 1 (argument
errors exit 2 with the usage, as argparse does). Outputs are checked before any work: a bad
`-o` never wastes a training run, and nothing is written over one of the command's inputs.
The modules share cli/options.py (option groups, the settings' flags, output, the error line);
none imports this package's __init__, which imports them all through cli/parser.py.
"""

import atexit
import gc
import os
import signal
import sys

from tokworkbench.cli.options import PROG, advice, flush_stdout, silence_stdout
from tokworkbench.cli.parser import COMMANDS, DEFAULT, SCREENS, build_parser, command, error_status
from tokworkbench.core.errors import Terminated, TokWorkbenchError
from tokworkbench.core.inspection.escape import printable

__all__ = ["build_parser", "entry", "main"]


def entry() -> None:
    """The installed command. Once a command that draws no screen has returned, its output is
    written and flushed and nothing is left to do, yet the interpreter's teardown would free every
    object and module one at a time: 0.15-0.3 s once numba and LLVM are loaded, a sixth of a
    10 MB training run. The exit handlers still run; then the process leaves. The workbench's
    screens leave the usual way, their threads joined, and so does a run under a profiler or a
    debugger (`python -m cProfile -m tokworkbench ...`), which writes its results after this returns.
    A command also runs without the cyclic collector (core/gcpause.py): its passes over a run's
    objects cost a 10 MB training 0.3 s of its 1.8."""
    argv = _with_command(sys.argv[1:])
    screen = argv[0] in SCREENS
    if not screen:
        gc.disable()
    status = main(argv)
    if screen or _watched():
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: the command was started with it closed
                stream.flush()
        except (OSError, ValueError):  # the reader went away, or the stream is closed
            pass
    os._exit(status)


def _watched() -> bool:
    """A profiler, debugger or coverage tool is attached, and writes its results after `entry`
    returns. From Python 3.12 cProfile (and newer debuggers and coverage) hook in through
    sys.monitoring, not sys.setprofile: the quick exit cut their files off."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    if sys.version_info >= (3, 12):
        return any(sys.monitoring.get_tool(tool) is not None for tool in range(6))  # the six tool ids
    return False


def _with_command(argv: list[str]) -> list[str]:
    """The workbench is the command when the first word names none."""
    return argv if argv and argv[0] in (*COMMANDS, "-h", "--help") else [DEFAULT, *argv]


def main(argv: list[str] | None = None) -> int:
    argv = _with_command(sys.argv[1:] if argv is None else argv)
    args = build_parser(only=argv[0] if argv[0] in COMMANDS else None).parse_args(argv)
    if args.command not in SCREENS:
        signal.signal(signal.SIGTERM, _terminated)
    module = command(args.command)
    try:
        status = module.run(args)
        flush_stdout()
        return status
    except TokWorkbenchError as exc:
        print(printable(f"{PROG}: error: {advice(exc, args, module.FLAGS)}"), file=sys.stderr)  # it may quote a file
        return error_status(args.command)
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
