"""textual-serve's Server with the door locked (see serve.py for the rules and why).

The page textual-serve ships builds its websocket URL as `data-session-websocket-url` plus
`?width=..&height=..`, so a token in that URL's query would be swallowed into the width. The
token therefore goes in the websocket's path (`/ws/TOKEN`, a route of its own), and the page
itself is fetched as `/?token=TOKEN`. That works whatever name the browser used for this
machine (localhost or 127.0.0.1 through a tunnel), which a cookie would not: cookies are kept
by host name, and are shared by every port of it. Static files (textual-serve's own script, CSS
and fonts) stay open: they hold nothing of the user's, and the page fetches them without the token.

Logs never show the token: a filter on the log handler blanks it from every record (aiohttp's
access log would print each request line, and browsers send the page's URL as Referer), and
tracebacks are logged without their local variables (a request's repr holds its path).
"""

import logging

import aiohttp_jinja2
from aiohttp import web
from rich.logging import RichHandler
from textual_serve.server import LogHighlighter, Server

from tokworkbench.serve import origin_ok, page_url, token_ok

REDACTED = "<token>"
OPEN_PREFIX = "/static/"


class Redact(logging.Filter):
    """Replaces the token in every record's text before it is written."""

    def __init__(self, token: str):
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if self.token in text:
            record.msg, record.args = text.replace(self.token, REDACTED), ()
        return True


class GuardedServer(Server):
    """A Server that asks for the token on every request but its static files, refuses a
    websocket from a foreign Origin, and runs at most `max_sessions` sessions at once."""

    def __init__(self, command: str, *, token: str, max_sessions: int, **kwargs):
        super().__init__(command, **kwargs)
        self.token, self.max_sessions, self.sessions = token, max_sessions, 0

    def initialize_logging(self) -> None:
        """textual-serve's logging, without local variables in tracebacks, the token blanked."""
        handler = RichHandler(show_path=False, show_time=False, rich_tracebacks=True, tracebacks_show_locals=False,
                              highlighter=LogHighlighter(), console=self.console)
        handler.addFilter(Redact(self.token))
        logging.basicConfig(level="DEBUG" if self.debug else "INFO", format="%(message)s", datefmt="[%X]",
                            handlers=[handler], force=True)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.router.add_get("/ws/{token}", self.handle_websocket, name="session")
        app.middlewares.append(self.guard)
        return app

    @web.middleware
    async def guard(self, request: web.Request, handler):
        if request.path.startswith(OPEN_PREFIX):
            return await handler(request)
        if not token_ok(request.match_info.get("token") or request.query.get("token"), self.token):
            raise web.HTTPForbidden(text="tokworkbench serve: open the URL it printed, with its token\n")
        if request.headers.get("Upgrade", "").lower() == "websocket" and not origin_ok(
                request.headers.get("Origin"), self.public_url):
            raise web.HTTPForbidden(text="tokworkbench serve: a websocket from another web page is refused\n")
        response = await handler(request)
        if request.match_info.route.name == "index":  # the page holds the token: keep it out of caches and Referers
            response.headers["Cache-Control"] = "no-store"
            response.headers["Referrer-Policy"] = "no-referrer"
        return response

    async def on_startup(self, app: web.Application) -> None:
        """The one place the token is shown: the URL to open, on a line of its own."""
        self.console.print(f"Serving tokworkbench (at most {self.max_sessions} sessions at once); open", highlight=False)
        self.console.print(page_url(self.public_url, self.token), highlight=False, markup=False, soft_wrap=True)
        self.console.print("\n[cyan]Press Ctrl+C to quit")

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict:
        """textual-serve's page, its websocket URL carrying the token in the path."""
        context = await Server.handle_index.__wrapped__(self, request)
        context["app_websocket_url"] = f"{context['app_websocket_url']}/{self.token}"
        return context

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One session, if fewer than `max_sessions` are running (each is an app process and
        its training child)."""
        if self.sessions >= self.max_sessions:
            raise web.HTTPServiceUnavailable(
                text=f"tokworkbench serve: {self.max_sessions} sessions are open already; close one first\n")
        self.sessions += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions -= 1
