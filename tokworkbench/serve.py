"""`tokworkbench serve`: the workbench as a web page, through textual-serve (the optional extra
`serve`), for a machine where no full-screen terminal can run.

textual-serve starts one `python -m tokworkbench app ...` per browser session, with the settings
given to `serve` (cli/serve.py writes that command line, from the options `app` reads). A
session is the workbench running as the user who started `serve`, with its open and save
dialogs, so the door is locked. This module holds the rules; serve_guard.py applies them in
aiohttp, and cli/serve.py starts the server:
- a random token, printed once in the URL (as Jupyter does), is needed for the page and for
  every websocket upgrade, and compared in constant time;
- a websocket whose Origin is not the page's own is refused, so no other web page in the
  user's browser can drive a session, even one that has learned the token;
- it listens on 127.0.0.1 unless told otherwise, and on an address other machines can reach
  only with --allow-insecure-host (the token then crosses the network in clear): the way in from
  another machine is an SSH tunnel (`ssh -L 8000:localhost:8000 HOST`), never an open port;
- at most --max-sessions sessions run at once (each is two processes).
textual_serve (and through it aiohttp and rich) is imported only when a server is started.
"""

import hmac
import ipaddress
import secrets
from urllib.parse import urlsplit

from tokworkbench.core.errors import TokWorkbenchError

NEEDS_EXTRA = "serve needs the optional extra: pip install 'tokworkbench[serve]'"
TITLE = "tokworkbench"


def default_public_url(host: str, port: int) -> str:
    """Where the browser finds the page, unless told otherwise (an IPv6 address in brackets)."""
    name = f"[{host}]" if ":" in host else host
    return f"http://{name}:{port}"


INSECURE_FLAG = "--allow-insecure-host"
MAX_SESSIONS = 4
LOOPBACK_NAMES = ("localhost",)


def new_token() -> str:
    """The secret a browser needs to open the workbench: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def token_ok(given: str | None, token: str) -> bool:
    """Whether `given` is the token, compared in constant time (no early exit that would let
    timing reveal how much of a guess was right)."""
    return given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (localhost, 127.0.0.0/8, ::1): other machines
    cannot reach it. An empty host, 0.0.0.0 or :: listens on every address."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of a URL, loopback names made one, default ports filled in."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = "loopback" if is_loopback(parts.hostname) else parts.hostname.lower()
    return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)


def origin_ok(origin: str | None, public_url: str) -> bool:
    """Whether a websocket's Origin header is the page's own: the public URL's scheme, host and
    port (localhost, 127.0.0.1 and [::1] count as one host, so a tunnel opened as either works).
    No header at all is a client that is not a browser, which still needs the token; a browser
    always sends one, so a page elsewhere (or "null", a sandboxed one) is refused."""
    if origin is None:
        return True
    mine = _origin(public_url)
    return mine is not None and _origin(origin) == mine


def check_host(host: str, allow_insecure: bool) -> None:
    """Refuse an address other machines can reach unless the user has named the risk."""
    if not is_loopback(host) and not allow_insecure:
        shown = host or "every address"
        raise TokWorkbenchError(
            f"--host {shown} can be reached from other machines, and anyone who reaches it and learns the "
            f"token (sent in clear over HTTP) runs the workbench as you; use an SSH tunnel "
            f"(ssh -L 8000:localhost:8000 HOST) to 127.0.0.1, or add {INSECURE_FLAG}")


def page_url(public_url: str, token: str) -> str:
    """The one URL printed for the user: the page, with the token."""
    return f"{public_url.rstrip('/')}/?token={token}"
