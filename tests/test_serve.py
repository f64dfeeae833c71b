"""`tokworkbench serve`: the workbench as a web page through textual-serve.

The server is started for real on 127.0.0.1 and its page fetched over HTTP; where Debian's
chromium is installed, a headless browser opens the page, waits until the app process it starts
has drawn the workbench, and takes a screenshot. Every wait is bounded, and every process a test
starts is ended in a finally, so a failure cannot hang the run.
"""

import base64
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tokworkbench.cli import build_parser, main
from tokworkbench.cli.app import app_settings
from tokworkbench.cli.serve import app_command
from tokworkbench.serve import MAX_SESSIONS, NEEDS_EXTRA, is_loopback, origin_ok, token_ok

SERVER_START_SECONDS = 20  # until the page answers
APP_DRAW_SECONDS = 45  # until the browser's session has drawn the app
SETTLE_SECONDS = 15  # until two screenshots in a row are the same
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


# The command line, without a server.

def test_without_the_extra_serve_is_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "textual_serve", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    monkeypatch.setitem(sys.modules, "tokworkbench.serve_guard", None)  # even if a test imported it
    assert main(["serve"]) == 1
    assert capsys.readouterr().err == f"tokworkbench: error: {NEEDS_EXTRA}\n"
    assert NEEDS_EXTRA == "serve needs the optional extra: pip install 'tokworkbench[serve]'"


def test_bad_serve_flags_are_one_line_before_any_server(capsys):
    assert main(["serve", "--split", "gpt5"]) == 1
    assert "did you mean gpt4" in capsys.readouterr().err
    assert main(["serve", "--target", "0"]) == 1
    assert main(["serve", "/no/such/corpus"]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["serve", "--port", "0"]) == 1
    assert capsys.readouterr().err == "tokworkbench: error: --port 0 is not a TCP port (1 to 65535)\n"


def test_serve_takes_the_apps_settings_flags_with_the_same_defaults():
    parser = build_parser()
    served = vars(parser.parse_args(["serve"]))
    assert (served.pop("host"), served.pop("port"), served.pop("public_url")) == ("127.0.0.1", 8000, None)
    assert (served.pop("allow_insecure_host"), served.pop("max_sessions")) == (False, MAX_SESSIONS)
    assert served | {"command": "app"} == vars(parser.parse_args(["app"]))


@pytest.mark.parametrize("argv", [
    [],
    ["--units", "char", "--split", "regex:\\w+|[^\\w\\s]+| ?'\"$HOME", "--normalize", "nfkc",
     "--tie-break", "lexmin", "--target", "500", "--special", "<unk>", "two words", "-1"],
    ["--special=-x", "--split", "o200k", "--", "-dashed", "a folder with spaces/", "$(false)"],
    ["--bos", "<s>", "--eos=-</s>", "--special", "<pad>", "--pad", "<pad>"],
    ["--kind", "spbpe", "--byte-fallback", "--character-coverage", "0.98", "--sp-normalization", "identity"],
    ["--kind", "spbpe", "--target", "800"],
    ["--kind", "spbpe", "--split-digits", "--user-defined-symbols", "<a>,-b", "--control-symbols", "<c>",
     "--required-chars=-xé"],
    ["--kind", "unigram", "--algorithm", "em", "--control-symbols=<mask>"],
])
def test_each_session_runs_the_app_with_the_same_paths_and_settings(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the paths must exist: app_settings checks them
    for name in ("-dashed", "a folder with spaces", "$(false)"):
        (tmp_path / name).mkdir()
    parser = build_parser()
    served = parser.parse_args(["serve", *argv])
    words = shlex.split(app_command(served))
    assert words[:4] == [sys.executable, "-m", "tokworkbench", "app"]
    app = parser.parse_args(words[3:])
    assert app_settings(app) == app_settings(served)
    assert [Path(p) for p in app.paths] == [Path(p) for p in served.paths]  # ./-dashed is -dashed


# The server, for real.

@dataclass
class Served:
    url: str  # the page's URL as serve printed it, with the token
    page: str
    process: subprocess.Popen
    log: Path

    @property
    def port(self) -> int:
        return int(self.url.split("/")[2].rsplit(":", 1)[1])

    @property
    def token(self) -> str:
        return self.url.split("?token=", 1)[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def local_get(url: str, timeout: float) -> str:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1, never a proxy
    with opener.open(url, timeout=timeout) as response:
        return response.read().decode("utf-8")


def status_of(url: str) -> int:
    try:
        local_get(url, timeout=5)
    except urllib.error.HTTPError as exc:
        return exc.code
    return 200


def end_group(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM to the process, SIGKILL after `grace` seconds; then SIGKILL to whatever it started
    (app sessions, browser renderers) that is still in its process group."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        pass


PRINTED_URL = re.compile(r"^(http://\S+/\?token=[A-Za-z0-9_-]+)$", re.M)


@contextmanager
def running_server(tmp_path: Path, *args: str, port: int | None = None):
    """`tokworkbench serve` on `port` (by default a free one) of 127.0.0.1, once it has printed its
    URL and the page answers there; ended on exit."""
    port = port or free_port()
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "tokworkbench", "serve", "--port", str(port), *args],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            deadline = time.monotonic() + SERVER_START_SECONDS
            while True:
                if process.poll() is not None:
                    pytest.fail(f"serve exited with {process.returncode}:\n{log_path.read_text()}")
                printed = PRINTED_URL.search(log_path.read_text(errors="replace"))
                try:
                    if printed:
                        page = local_get(printed[1], timeout=2)
                        break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"no page after {SERVER_START_SECONDS} s:\n{log_path.read_text()}")
                time.sleep(0.2)
            yield Served(printed[1], page, process, log_path)
        finally:
            end_group(process, grace=10)


def test_serve_answers_with_textual_serves_page_and_stops_on_sigterm(tmp_path):
    pytest.importorskip("textual_serve", reason="the serve extra is not installed")
    with running_server(tmp_path) as served:
        page, process, port = served.page, served.process, served.port
        assert served.url == f"http://127.0.0.1:{port}/?token={served.token}"
        assert 'class="textual-terminal"' in page
        assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws/{served.token}"' in page
        assert f'src="http://127.0.0.1:{port}/static/js/textual.js"' in page
        assert "<div>tokworkbench</div>" in page  # the title the dialog shows before the app starts
        process.terminate()
        process.wait(10)
    assert process.returncode == 0  # SIGTERM is a clean shutdown, not a traceback


# Who may come in (issue 28, item 1).

def test_the_token_is_compared_whole_and_the_origin_must_be_the_pages():
    assert token_ok("abc", "abc") and not token_ok("abd", "abc") and not token_ok(None, "abc")
    assert not token_ok("", "abc") and not token_ok("ab\udc80", "abc") and not token_ok("é", "abc")
    page = "http://127.0.0.1:8000"
    assert origin_ok(None, page)  # not a browser: it still needs the token
    for same in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"):
        assert origin_ok(same, page), same
    for foreign in ("http://evil.example.com", "http://127.0.0.1:9999", "https://127.0.0.1:8000", "null",
                    "http://evil.example.com:8000", "file://", ""):
        assert not origin_ok(foreign, page), foreign
    assert origin_ok("https://wb.example.com", "https://wb.example.com/")
    assert [is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3", "0.0.0.0", "", "::",
                                     "192.168.1.5", "example.com")] == [True] * 5 + [False] * 5


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.168.1.5"])
def test_a_host_others_can_reach_needs_the_flag_that_names_the_risk(host, capsys):
    assert main(["serve", "--host", host]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reached from other machines" in err and "--allow-insecure-host" in err


def test_max_sessions_must_let_someone_in(capsys):
    assert main(["serve", "--max-sessions", "0"]) == 1
    assert capsys.readouterr().err == "tokworkbench: error: --max-sessions 0 lets no one in; give 1 or more\n"


def upgrade(port: int, path: str, origin: str | None, host: str = "127.0.0.1") -> tuple[int, socket.socket]:
    """A websocket handshake by hand: the HTTP status of the answer, and the open socket (the
    caller closes it, which ends the session a 101 started)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    lines += [f"Origin: {origin}"] if origin is not None else []
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    answer = b""
    while b"\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    return int(answer.split(b" ", 2)[1]), sock


def status_of_upgrade(port: int, path: str, origin: str | None, host: str = "127.0.0.1") -> int:
    code, sock = upgrade(port, path, origin, host)
    sock.close()
    return code


def test_serve_lets_in_only_who_has_the_token_from_the_pages_own_origin(tmp_path):
    pytest.importorskip("textual_serve", reason="the serve extra is not installed")
    with running_server(tmp_path) as served:
        port, token = served.port, served.token
        base = f"http://127.0.0.1:{port}"
        assert [status_of(f"{base}/"), status_of(f"{base}/?token="), status_of(f"{base}/?token={token[:-1]}"),
                status_of(f"{base}/?token={token}x"), status_of(f"{base}/download/k")] == [403] * 5
        assert status_of(f"{base}/?token={token}") == 200
        assert status_of(f"{base}/static/js/textual.js") == 200  # textual-serve's own script: nothing of ours
        assert status_of_upgrade(port, "/ws", base) == 403
        assert status_of_upgrade(port, f"/ws/{token[:-1]}x", base) == 403
        assert status_of_upgrade(port, "/ws?width=80&height=24", None) == 403
        # a second local user's page, or any web page the user visits, knows no token; even one
        # that does is refused from another origin
        assert status_of_upgrade(port, f"/ws/{token}?width=80&height=24", "http://evil.example.com") == 403
        assert status_of_upgrade(port, f"/ws/{token}", f"http://127.0.0.1:{free_port()}") == 403
        assert status_of_upgrade(port, f"/ws/{token}", "null") == 403
        assert status_of_upgrade(port, f"/ws/{token}?width=80&height=24", base) == 101
        process = served.process
    log = served.log.read_text(errors="replace")
    assert log.count(token) == 1, "the token is shown only in the URL printed for the user"
    assert "<token>" in log  # the access log's request lines, blanked
    assert process.returncode is not None


def test_serve_caps_the_sessions_open_at_once(tmp_path):
    pytest.importorskip("textual_serve", reason="the serve extra is not installed")
    with running_server(tmp_path, "--max-sessions", "1") as served:
        origin = f"http://127.0.0.1:{served.port}"
        code, first = upgrade(served.port, f"/ws/{served.token}", origin)
        try:
            assert code == 101
            assert status_of_upgrade(served.port, f"/ws/{served.token}", origin) == 503
        finally:
            first.close()
        deadline = time.monotonic() + SERVER_START_SECONDS  # the first session's end frees its place
        while status_of_upgrade(served.port, f"/ws/{served.token}", origin) != 101:
            assert time.monotonic() < deadline, "the closed session's place was never freed"
            time.sleep(0.5)


@contextmanager
def tunnel(to_port: int):
    """What `ssh -L LOCAL:localhost:PORT HOST` is to a browser here: a local port whose every
    connection is carried to the server's port. Yields the local port."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while chunk := a.recv(65536):
                b.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            client.settimeout(None)
            try:  # the URL is printed a moment before the port listens: refuse this one, go on
                server = socket.create_connection(("127.0.0.1", to_port))
            except OSError:
                client.close()
                continue
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=pipe, args=(a, b), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_the_documented_tunnel_still_works(tmp_path):
    """README: ssh -L 8000:localhost:8000 HOST and open the printed URL (or the same with
    localhost for 127.0.0.1); through another local port, --public-url http://localhost:PORT."""
    pytest.importorskip("textual_serve", reason="the serve extra is not installed")
    with running_server(tmp_path) as served:  # the same port: the browser may say localhost
        page = local_get(served.url.replace("127.0.0.1", "localhost"), timeout=5)
        assert f"/ws/{served.token}" in page
        assert status_of_upgrade(served.port, f"/ws/{served.token}", f"http://localhost:{served.port}",
                                 host="localhost") == 101
    port = free_port()
    with tunnel(port) as local:
        with running_server(tmp_path, "--public-url", f"http://localhost:{local}", port=port) as served:
            # running_server reached the page through the printed URL, which is the tunnel's
            assert served.url.startswith(f"http://localhost:{local}/?token=")
            assert f'data-session-websocket-url="ws://localhost:{local}/ws/{served.token}"' in served.page
            assert status_of_upgrade(local, f"/ws/{served.token}?width=80&height=24", f"http://localhost:{local}",
                                     host="localhost") == 101
            assert status_of_upgrade(local, f"/ws/{served.token}", "http://evil.example.com",
                                     host="localhost") == 403


# A headless browser.

class Chromium:
    """Headless chromium driven through the DevTools protocol on --remote-debugging-pipe:
    NUL-separated JSON on the browser's file descriptors 3 (commands) and 4 (replies). No port
    is opened for it, and the standard library is enough. (A one-shot --screenshot, even with
    --virtual-time-budget, is taken before the page's websocket has started the app.)"""

    FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--no-proxy-server", "--window-size=1400,900",
             # every host name but 127.0.0.1 fails to resolve (the page asks Google for a font)
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             "--remote-debugging-pipe"]

    def __init__(self, executable: str, tmp_path: Path):
        self.executable, self.tmp_path = executable, tmp_path
        self.next_id, self.buffer = 0, b""

    def __enter__(self):
        with open(self.tmp_path / "chromium.log", "wb") as log:
            self.process = subprocess.Popen(
                ["sh", "-c", 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null', "sh", self.executable, *self.FLAGS,
                 f"--user-data-dir={self.tmp_path / 'profile'}", "about:blank"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 -- it is ended below in any case
            pass
        end_group(self.process, grace=5)
        self.process.stdin.close()
        self.process.stdout.close()

    def call(self, method: str, session: str | None = None, timeout: float = 10, **params):
        """Send one command and return its result, skipping the events that come before it."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.process.stdin.write(json.dumps(message).encode() + b"\0")
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            reply = self.read(deadline, method)
            if reply.get("id") == self.next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply["result"]

    def read(self, deadline: float, method: str) -> dict:
        fd = self.process.stdout.fileno()
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"chromium did not answer {method} in time")
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    pytest.fail(f"chromium closed its pipe during {method}:\n"
                                f"{(self.tmp_path / 'chromium.log').read_text(errors='replace')[-2000:]}")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str) -> str:
        """A new tab on `url`; returns the session that talks to it."""
        target = self.call("Target.createTarget", url=url)["targetId"]
        return self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def evaluate(self, session: str, expression: str):
        return self.call("Runtime.evaluate", session, expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self, session: str) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", session, timeout=20, format="png")["data"])


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the RGB(A) rows of an 8-bit, non-interlaced PNG (what chromium writes),
    decoded with zlib and the five PNG filters, so no image library is needed."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, f"an unexpected PNG: {header}"
    bpp = 3 if colour_type == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    assert len(raw) == height * (stride + 1)
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:  # Up
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [r if bpp == 3 else bytes(b for i, b in enumerate(r) if i % 4 != 3) for r in rows]


def test_png_pixels_decodes_every_filter():
    pixels = [bytes([x * 40, y * 60, (x * y) & 255]) for y in range(4) for x in range(5)]
    rows = [b"".join(pixels[y * 5:(y + 1) * 5]) for y in range(4)]
    # row 0 unfiltered; rows 1 to 3 as Sub, Up and Average would store them; Paeth below
    stored = [b"\x00" + rows[0]]
    stored.append(b"\x01" + bytes((rows[1][i] - (rows[1][i - 3] if i >= 3 else 0)) & 255 for i in range(15)))
    stored.append(b"\x02" + bytes((rows[2][i] - rows[1][i]) & 255 for i in range(15)))
    stored.append(b"\x03" + bytes((rows[3][i] - (((rows[3][i - 3] if i >= 3 else 0) + rows[2][i]) >> 1)) & 255
                                  for i in range(15)))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    def png(lines):
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 5, len(lines), 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(b"".join(lines))) + chunk(b"IEND", b""))

    assert png_pixels(png(stored)) == (5, 4, rows)

    def paeth(a, b, c):
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c

    line = b"\x04" + bytes((rows[1][i] - paeth(rows[1][i - 3] if i >= 3 else 0, rows[0][i],
                                                  rows[0][i - 3] if i >= 3 else 0)) & 255 for i in range(15))
    assert png_pixels(png([stored[0], line])) == (5, 2, rows[:2])


def settled_screenshot(browser: Chromium, session: str, unlike: bytes | None = None) -> bytes:
    """A screenshot once the screen has stopped changing (two in a row agree) and differs from
    `unlike`; at the deadline, the screen as it is."""
    shot, deadline = browser.screenshot(session), time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.5)
        shot, previous = browser.screenshot(session), shot
        if shot == previous and shot != unlike:
            break
    return shot


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_a_headless_browser_shows_the_workbench_and_types_into_it(tmp_path):
    pytest.importorskip("textual_serve", reason="the serve extra is not installed")
    settings = ["--tie-break", "lexmin", "--target", "500"]  # the app's title bar shows them
    with running_server(tmp_path, *settings) as served, Chromium(CHROMIUM, tmp_path) as browser:
        session = browser.open(served.url)
        # the page opens a websocket; the server starts `tokworkbench app` for it, and the page
        # marks its body -first-byte when the app's output arrives (-closed if the session ends)
        deadline = time.monotonic() + APP_DRAW_SECONDS
        state = None
        while state != "drawing":
            state = browser.evaluate(session, "document.body === null ? 'loading' : "
                                              "document.body.classList.contains('-closed') ? 'closed' : "
                                              "document.body.classList.contains('-first-byte') ? 'drawing' : 'waiting'")
            assert state != "closed", f"the app's session ended:\n{(tmp_path / 'serve.log').read_text()}"
            if time.monotonic() > deadline:
                pytest.fail(f"the app drew nothing in {APP_DRAW_SECONDS} s (page {state}):\n"
                            f"{(tmp_path / 'serve.log').read_text()}")
            time.sleep(0.25)
        # A headless page never has the focus, and a Textual app that is told so takes the focus
        # from its widgets (an empty footer); focus the terminal, as a user's click would.
        assert browser.evaluate(session, "(() => { const t = document.querySelector('.xterm-helper-textarea');"
                                         " t.focus(); return document.activeElement === t; })()")
        started = settled_screenshot(browser, session)
        for kind in ("keyDown", "keyUp"):  # n: one merge, typed through the websocket
            browser.call("Input.dispatchKeyEvent", session, type=kind, key="n", code="KeyN", text="n",
                         windowsVirtualKeyCode=78)
        merged = settled_screenshot(browser, session, unlike=started)
    for name, shot in (("serve.png", started), ("serve-after-n.png", merged)):
        (tmp_path / name).write_bytes(shot)
        print(f"screenshot: {tmp_path / name}")
    width, height, rows = png_pixels(started)
    assert width >= 1000 and height >= 600
    colours = {row[i:i + 3] for row in rows for i in range(0, len(row), 3)}
    assert len(colours) > 16, f"{tmp_path / 'serve.png'} is blank: {len(colours)} colour(s)"  # the app has many
    assert merged != started, "the key n changed nothing on the screen"
