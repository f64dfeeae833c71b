"""The long jobs, as plain functions a thread worker runs: load a corpus, train to a target.

They only iterate core generators, check for cancellation between steps, and post messages;
the trainer is theirs alone while they run.
"""

import sys
import threading
import time
from pathlib import Path

from textual.worker import get_current_worker

from ..core.corpus import Corpus, iter_documents
from ..core.errors import CorpusError, TokWorkbenchError
from ..core.session import Settings
from ..core.trainer import Trainer
from .messages import LoadFailed, LoadProgress, SessionReady, TrainFinished, TrainProgress
from .snapshot import View, take_snapshot

FRAME = 0.2  # seconds between progress posts: a few updates a second is plenty
SWITCH_INTERVAL = 0.0005  # seconds; CPython's default is 0.005
WORK_SLICE, REST = 0.010, 0.002  # train 10 ms, then let the UI run alone for 2 ms


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
        app.post_message(LoadProgress(0, 1, "pre-tokenizing and counting chunks…"))
        trainer = Trainer((d.text for d in corpus.documents), config, keep_layout=True)
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


def train_to(app, trainer: Trainer, lock: threading.Lock, target: int, view_of) -> None:
    """Merge until the vocabulary reaches `target`, posting snapshots a few times a second."""
    worker = get_current_worker()
    # The UI thread gives up the GIL at every event-loop turn and must win it back from this
    # thread each time; a short switch interval keeps those waits far below a frame.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        _train(app, trainer, lock, target, view_of, worker)
    finally:
        sys.setswitchinterval(interval)


def _train(app, trainer, lock, target, view_of, worker) -> None:
    todo = trainer.merges_for_vocab(target)
    done = 0
    started = last = rested = time.monotonic()
    reason = "target"
    while done < todo:
        if worker.is_cancelled:
            reason = "cancelled"
            break
        with lock:
            record = trainer.step()
        if record is None:
            reason = "exhausted"
            break
        done += 1
        now = time.monotonic()
        if now - rested >= WORK_SLICE:  # leave the UI thread a moment alone with the GIL
            time.sleep(REST)
            rested = time.monotonic()
        if now - last >= FRAME:
            last = now
            with lock:
                snap = take_snapshot(trainer, view_of())
            app.post_message(TrainProgress(snap, done, todo, done / (now - started)))
    with lock:
        snap = take_snapshot(trainer, view_of())
    app.post_message(TrainFinished(snap, done, reason))


__all__ = ["View", "load_session", "train_to"]
