"""Loading a corpus, as a plain function a thread worker runs: read files with progress, build
the trainer, post the result. (Training to a target runs in a child process: runner.py.)"""

import time
from pathlib import Path

from textual.worker import get_current_worker

from ..core.corpus import Corpus, iter_documents
from ..core.errors import CorpusError, TokWorkbenchError
from ..core.session import Settings
from ..core.trainer import Trainer
from .messages import LoadFailed, LoadProgress, SessionReady

FRAME = 0.2  # seconds between progress posts: a few updates a second is plenty


def load_session(app, paths: list[str] | None, corpus: Corpus | None, settings: Settings) -> None:
    """Read `paths` (unless a corpus is given) and build a trainer; report progress by bytes."""
    worker = get_current_worker()
    started = time.perf_counter()
    try:
        config = settings.config()
        if corpus is None:
            corpus = _read(app, paths or [], worker)
            if corpus is None:
                return
        total = max(1, sum(len(d.text) for d in corpus.documents))
        last = [0.0]

        def progress(chars: int) -> None:
            now = time.monotonic()
            if now - last[0] > FRAME:
                last[0] = now
                app.post_message(LoadProgress(chars, total, "pre-tokenizing and counting chunks…"))

        app.post_message(LoadProgress(0, total, "pre-tokenizing and counting chunks…"))
        trainer = Trainer((d.text for d in corpus.documents), config, keep_layout=True, progress=progress)
        if trainer.chars == 0:
            raise CorpusError("the corpus is empty: its files hold no text")
    except TokWorkbenchError as exc:
        app.post_message(LoadFailed(str(exc)))
        return
    except MemoryError:
        app.post_message(LoadFailed("out of memory while loading the corpus"))
        return
    if not worker.is_cancelled:
        stats = corpus.stats()
        app.post_message(SessionReady(corpus, stats, settings, trainer, time.perf_counter() - started))


def _read(app, paths, worker) -> Corpus | None:
    last = [0.0]

    def progress(done: int, total: int, name: str) -> None:
        now = time.monotonic()
        if now - last[0] > FRAME:
            last[0] = now
            app.post_message(LoadProgress(done, max(total, 1), f"reading {Path(name).name}"))

    docs, skipped = [], []
    for doc in iter_documents(paths, "strict", skipped, progress):
        if worker.is_cancelled:
            return None
        docs.append(doc)
    if not docs:
        raise CorpusError("no corpus given: name at least one file or folder")
    if not any(d.text for d in docs):
        raise CorpusError("the corpus is empty: its files hold no text")
    return Corpus(docs, skipped)
