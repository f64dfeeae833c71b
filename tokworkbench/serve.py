"""`tokworkbench serve`: the workbench as a web page, through textual-serve (the optional extra
`serve`), for a machine where no full-screen terminal can run.

textual-serve starts one `python -m tokworkbench app ...` per browser session, with the settings
given to `serve`. It listens on 127.0.0.1 unless told otherwise: the way in from another machine
is an SSH tunnel (`ssh -L 8000:localhost:8000 HOST`), never an open port. textual_serve (and
through it aiohttp and rich) is imported only when a server is started.
"""

import os
import shlex
import sys

from .core.errors import TokWorkbenchError
from .core.models.roles import ROLES

NEEDS_EXTRA = "serve needs the optional extra: pip install 'tokworkbench[serve]'"
TITLE = "tokworkbench"


def app_command(args) -> str:
    """The shell command that opens the workbench on `args`' paths and settings.

    Each option is written as --name=VALUE, so a value that begins with a dash (a special token)
    still reads as that option's value; the paths come first, since --special takes every word
    after it, and a path that begins with a dash is written ./-path.
    """
    words = [sys.executable, "-m", "tokworkbench", "app"]
    words += [f"./{p}" if p.startswith("-") else p for p in args.paths]
    words += [f"--units={args.units}", f"--normalize={args.normalize}", f"--tie-break={args.tie_break}"]
    words += [f"--target={args.target}"] if args.target is not None else []  # unset: fitted to the corpus
    words += [f"--split={args.split}"] if args.split else []  # unset: gpt4, or a -m model's own
    words += [f"--inspect={args.model}"] if args.model else []
    if getattr(args, "model_kind", "bpe") != "bpe":  # the Unigram options only mean something then
        words += [f"--model={args.model_kind}", f"--algorithm={args.algorithm}",
                  f"--prune-fraction={args.prune_fraction}", f"--shrinking-factor={args.shrinking_factor}",
                  f"--sub-iterations={args.sub_iterations}", f"--max-piece-length={args.max_piece_length}"]
        words += [f"--seed-size={args.seed_size}"] if args.seed_size is not None else []
    words += [f"--{role}={getattr(args, role)}" for role in ROLES if getattr(args, role, None) is not None]
    if len(args.special) == 1:
        words.append(f"--special={args.special[0]}")
    elif args.special:  # the command line took them as one list, so they read back as one
        words += ["--special", *args.special]
    return shlex.join(words)


def default_public_url(host: str, port: int) -> str:
    """Where the browser finds the page, unless told otherwise (an IPv6 address in brackets)."""
    name = f"[{host}]" if ":" in host else host
    return f"http://{name}:{port}"


def serve(command: str, host: str, port: int, url: str | None = None) -> int:
    """Serve `command` to browsers on host:port until interrupted (Ctrl+C or SIGTERM)."""
    if not 0 < port < 65536:
        raise TokWorkbenchError(f"--port {port} is not a TCP port (1 to 65535)")
    try:
        from textual_serve.server import Server
    except ModuleNotFoundError:  # textual-serve, or a package it needs, is not installed
        raise TokWorkbenchError(NEEDS_EXTRA) from None
    server = Server(command, host=host, port=port, title=TITLE, public_url=url or default_public_url(host, port))
    try:
        server.serve()
    except OSError as exc:  # the address is taken, or not one of this machine's, or no address at all
        reason = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)
        raise TokWorkbenchError(f"cannot serve on {host}:{port}: {reason}") from None
    return 0
