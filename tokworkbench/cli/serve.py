"""`tokworkbench serve PATH...`: the workbench as a web page (tokworkbench/serve.py), each browser
session running `app` with these settings: the command line for it is written here, from the
same option definitions `app` reads."""

import argparse
import os
import shlex
import sys

from tokworkbench import serve as server
from tokworkbench.cli.app import app_model, app_settings, workbench_options
from tokworkbench.cli.options import SETTING_FLAGS, dest_of
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.models.roles import ROLES
from tokworkbench.core.registry.kinds import kind_named

FLAGS = frozenset({"split"})
WORKBENCH = ("units", "normalizer", "tie_break", "target", "split", "kind")  # the settings every session is given


def add_parser(sub) -> argparse.ArgumentParser:
    srv = sub.add_parser(
        "serve", help="serve the workbench as a web page (needs the extra: pip install 'tokworkbench[serve]')",
        description="Serve the workbench as a web page: each browser session opens its own workbench on "
        "PATHs with these settings, running as you. It prints the URL to open, with a random token that "
        "every request needs. It listens on 127.0.0.1 (this machine only); from another machine, open an "
        "SSH tunnel (ssh -L 8000:localhost:8000 HOST) and browse to the printed URL.",
    )
    workbench_options(srv)
    srv.add_argument("--host", default="127.0.0.1",
                     help="address to listen on (default: 127.0.0.1; reach it through an SSH tunnel, "
                     "ssh -L 8000:localhost:8000 HOST, rather than listening on a public address)")
    srv.add_argument(server.INSECURE_FLAG, action="store_true",
                     help="let --host be an address other machines can reach (0.0.0.0, a LAN address): anyone "
                     "who reaches the port and learns the token, which HTTP sends in clear, runs the workbench as you")
    srv.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    srv.add_argument("--max-sessions", type=int, default=server.MAX_SESSIONS, metavar="N",
                     help=f"browser sessions open at once (default: {server.MAX_SESSIONS}; each runs two processes)")
    srv.add_argument("--public-url", metavar="URL",
                     help="the address the browser uses, where it is not http://HOST:PORT "
                     "(a tunnel to another local port: ssh -L 9000:localhost:8000 HOST needs http://localhost:9000)")
    return srv


def run(args) -> int:
    """The workbench in a browser: checked here as `app` checks it, then each session runs `app`."""
    app_settings(args)  # a bad flag is one line now, not a broken page in every session
    app_model(args)
    return serve_page(app_command(args), args.host, args.port, args.public_url,
                      allow_insecure=args.allow_insecure_host, max_sessions=args.max_sessions)


def app_command(args) -> str:
    """The shell command that opens the workbench on `args`' paths and settings.

    Each option is written as --name=VALUE, so a value that begins with a dash (a special token)
    still reads as that option's value; the paths come first, since --special takes every word
    after it, and a path that begins with a dash is written ./-path. A setting left unset (None:
    --target, --split, --seed-size) stays unset, to be fitted or chosen as `app` would.
    """
    words = [sys.executable, "-m", "tokworkbench", "app"]
    words += [f"./{p}" if p.startswith("-") else p for p in args.paths]
    kind = kind_named(args.kind)
    settings = WORKBENCH + tuple(name for name in kind.options if name not in WORKBENCH)  # a kind's own: for it only
    for name in settings:
        value = getattr(args, dest_of(name))
        if isinstance(value, bool):  # a switch (--byte-fallback) takes no value
            words += [SETTING_FLAGS[name]] if value else []
        elif isinstance(value, tuple):  # a list (--control-symbols): comma-separated, as the flag reads it
            words += [f"{SETTING_FLAGS[name]}={','.join(value)}"] if value else []
        elif value == "":  # nothing given (--required-chars)
            continue
        elif value is not None:
            words.append(f"{SETTING_FLAGS[name]}={value}")
    words += [f"--inspect={args.model}"] if args.model else []
    words += [f"--{role}={getattr(args, role)}" for role in ROLES if getattr(args, role) is not None]
    if len(args.special) == 1:
        words.append(f"{SETTING_FLAGS['special_tokens']}={args.special[0]}")
    elif args.special:  # the command line took them as one list, so they read back as one
        words += [SETTING_FLAGS["special_tokens"], *args.special]
    return shlex.join(words)


def serve_page(command: str, host: str, port: int, url: str | None = None, allow_insecure: bool = False,
          max_sessions: int = server.MAX_SESSIONS, token: str | None = None) -> int:
    """Serve `command` to browsers on host:port until interrupted (Ctrl+C or SIGTERM)."""
    if not 0 < port < 65536:
        raise TokWorkbenchError(f"--port {port} is not a TCP port (1 to 65535)")
    if max_sessions < 1:
        raise TokWorkbenchError(f"--max-sessions {max_sessions} lets no one in; give 1 or more")
    server.check_host(host, allow_insecure)
    try:
        from tokworkbench.serve_guard import GuardedServer
    except ModuleNotFoundError:  # textual-serve, or a package it needs, is not installed
        raise TokWorkbenchError(server.NEEDS_EXTRA) from None
    if not server.is_loopback(host):
        print(f"tokworkbench: warning: listening on {host or 'every address'}: other machines can reach this "
              "port, and the token crosses the network in clear", file=sys.stderr, flush=True)
    guarded = GuardedServer(command, token=token or server.new_token(), max_sessions=max_sessions, host=host, port=port,
                           title=server.TITLE, public_url=url or server.default_public_url(host, port))
    try:
        guarded.serve()
    except OSError as exc:  # the address is taken, or not one of this machine's, or no address at all
        reason = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)
        raise TokWorkbenchError(f"cannot serve on {host}:{port}: {reason}") from None
    return 0
