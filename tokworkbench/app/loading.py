"""Loading a corpus for the main screen: on the UI thread when it is small, else in a worker
that posts its progress and its result as messages."""

import time
from collections.abc import Callable
from pathlib import Path

from tokworkbench.app import messages as msg
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.session.session import Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.text.corpus import list_files, load_corpus

FRAME = 0.2  # seconds between progress posts while loading
ModelLoader = Callable[[], Model]  # -m NAME: the model, read when the screen is up
SYNC_LOAD_BYTES = 1_000_000  # below this a corpus loads in tens of milliseconds


def loads_quickly(paths: list[str]) -> bool:
    """Whether these files are small enough to load on the UI thread without a visible pause."""
    try:
        return sum(f.stat().st_size for f, _ in list_files(paths)) < SYNC_LOAD_BYTES
    except (OSError, TokWorkbenchError):
        return False  # the worker reports it properly


def build_session(paths: list[str] | None, base: Session | None, settings: Settings,
                   post=None) -> msg.SessionReady | msg.LoadFailed:
    """Read `paths` (or reuse `base`'s corpus) and build a session; the core's own checks (bad
    files, empty corpus) come back as LoadFailed."""
    try:
        if base is not None:
            return msg.SessionReady(base.with_settings(settings, post))
        return msg.SessionReady(Session.open(paths or [], settings, post))
    except TokWorkbenchError as exc:
        return msg.LoadFailed(str(exc))
    except MemoryError:
        return msg.LoadFailed("out of memory while loading the corpus")


def build_inspection(paths: list[str] | None, model: "Model | ModelLoader", source: str,
                     post=None) -> msg.SessionReady | msg.LoadFailed:
    """Read `paths` and open a session that inspects `model` on them (-m): nothing is counted.
    A `ModelLoader` (a preset: parsing its ranks and finding its merges takes seconds when the
    derived cache is cold) is called here, in the load worker, after the first frame."""
    report = post or (lambda done, total, what: None)
    try:
        if not isinstance(model, Model):
            report(0, 0, f"reading {source}…")
            model = model()
        corpus = load_corpus(paths or [], "strict", lambda done, total, name: report(done, total, f"reading {Path(name).name}"))
        return msg.SessionReady(Session.inspect(corpus, model, source))
    except TokWorkbenchError as exc:
        return msg.LoadFailed(str(exc))
    except MemoryError:
        return msg.LoadFailed("out of memory while loading the corpus")


def throttled(post_message):
    """A progress callback that posts at most one LoadProgress per frame."""
    last = [0.0]

    def post(done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if now - last[0] > FRAME:
            last[0] = now
            post_message(msg.LoadProgress(done, max(total, 1), what))

    return post
