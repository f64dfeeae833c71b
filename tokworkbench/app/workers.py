"""Loading a corpus, as a plain function a thread worker runs: read files with progress, build
the trainer, post the result. (Training to a target runs in a child process: runner.py.)"""

import time
from pathlib import Path

from textual.worker import get_current_worker

from ..core.text.corpus import Corpus, list_files, load_corpus
from ..core.errors import TokWorkbenchError
from ..core.session import Settings
from ..core.bpe.trainer import Trainer
from .messages import LoadFailed, LoadProgress, SessionReady
from .runner import FRAME  # a few progress posts a second is plenty


SYNC_LOAD_BYTES = 1_000_000  # below this a corpus loads in tens of milliseconds


def loads_quickly(paths: list[str]) -> bool:
    """Whether these files are small enough to load on the UI thread without a visible pause."""
    try:
        return sum(f.stat().st_size for f, _ in list_files(paths)) < SYNC_LOAD_BYTES
    except (OSError, TokWorkbenchError):
        return False  # the worker reports it properly


def _throttled(app):
    """A progress callback that posts at most one LoadProgress per frame."""
    last = [0.0]

    def post(done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if now - last[0] > FRAME:
            last[0] = now
            app.post_message(LoadProgress(done, max(total, 1), what))

    return post


def build_session(paths: list[str] | None, corpus: Corpus | None, settings: Settings,
                  post=None) -> SessionReady | LoadFailed:
    """Read `paths` (unless a corpus is given) and build a trainer, reporting progress through
    `post(done, total, what)` if given. The core's own checks (bad files, empty corpus) come
    back as LoadFailed."""
    post = post or (lambda done, total, what: None)
    try:
        config = settings.config()
        if corpus is None:
            corpus = load_corpus(paths or [], "strict",
                                 lambda done, total, name: post(done, total, f"reading {Path(name).name}"))
        total = sum(len(d.text) for d in corpus.documents)
        counting = "pre-tokenizing and counting chunks…"
        post(0, max(total, 1), counting)
        trainer = Trainer((d.text for d in corpus.documents), config, keep_layout=True,
                          progress=lambda chars: post(chars, total, counting))
    except TokWorkbenchError as exc:
        return LoadFailed(str(exc))
    except MemoryError:
        return LoadFailed("out of memory while loading the corpus")
    return SessionReady(corpus, corpus.stats(), settings, trainer)


def load_session(app, paths: list[str] | None, corpus: Corpus | None, settings: Settings) -> None:
    """`build_session` in a thread worker, posting its progress and its result to the app."""
    worker = get_current_worker()
    result = build_session(paths, corpus, settings, _throttled(app))
    if not worker.is_cancelled:
        app.post_message(result)
