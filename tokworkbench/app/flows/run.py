"""A run to the target (r) in a forked child, its progress line, its stop (escape) and its
end: the steps come back while the screen says so, and the keys that need the learner wait."""

import threading
import time
from collections.abc import Callable
from functools import partial

from textual.worker import Worker, get_current_worker

from tokworkbench.app import messages as msg
from tokworkbench.app.flows.ui import Ui
from tokworkbench.app.kind_views import step_noun
from tokworkbench.app.labels import describe_finish, describe_stop
from tokworkbench.app.widgets.progress import ProgressRow
from tokworkbench.core.heap import settle
from tokworkbench.core.session.childrun import run_in_child
from tokworkbench.core.session.session import FinishReason, RunFinished, Session
from tokworkbench.core.session.snapshot import Snapshot, View

STOP_PAINT_WAIT = 0.5  # seconds a stopped run's state waits for the screen to show the stop


class TrainingRun:
    def __init__(self, ui: Ui, session: Callable[[], Session], progress: Callable[[], ProgressRow],
                 show: Callable[[Snapshot], None], keys_changed: Callable[[], None],
                 after_refresh: Callable[[Callable[[], None]], object], run_worker: Callable[..., Worker],
                 post_message: Callable[[object], object]):
        """`show(snapshot)`: the panes show it (with the settings' roles); `keys_changed`: the
        bindings are read again; `after_refresh`, `run_worker` and `post_message` are the screen's."""
        self.ui, self.session, self.progress, self.show = ui, session, progress, show
        self.keys_changed, self.after_refresh = keys_changed, after_refresh
        self.run_worker, self.post_message = run_worker, post_message
        self.running = False
        self._caught_up: Snapshot | None = None  # the stopped run's view, once the panes show it
        self.stopped = False  # the run's child has stopped; its state is still coming back
        self.stop_painted_at: float | None = None  # perf_counter when a stop was last on screen
        self.last: RunFinished | None = None  # how the latest run ended
        self._worker: Worker | None = None
        self._todo = 0  # the steps the latest run set out to make (its progress bar's length)

    @property
    def stopping(self) -> bool:
        """Escape was pressed and the run has not ended yet: its state is on its way back."""
        return self.running and (self.stopped or (self._worker is not None and self._worker.is_cancelled))

    def _noun(self) -> str:
        return step_noun(self.session().learner.kind)

    def start(self, view: View, vocab_size: int) -> None:
        session = self.session()
        with self.ui.reporting("Cannot run"):
            todo = session.steps_to_target()
            if todo == 0:
                self.ui.notify(f"the vocabulary is already {vocab_size:,} ≥ target "
                               f"{session.settings.target:,}; press t to raise the target")
                return
            self.running = True
            self._todo = todo
            self.keys_changed()
            self.progress().show(f"esc cancels · training to {session.settings.target:,}…", 0, todo)
            self._worker = self.run_worker(partial(self._train, session, view), thread=True, exclusive=True,
                                           exit_on_error=False, group="train", description="Training")

    def _train(self, session: Session, view: View) -> None:
        worker = get_current_worker()
        shown: list = []  # the child's view where it stopped: the session's too once its state is back

        def stopped(finished: RunFinished, snapshot: Snapshot) -> None:
            shown.append(snapshot)
            painted = threading.Event()
            self.post_message(msg.TrainStopped(finished, snapshot, painted))
            # the stop on screen first: rebuilding the state holds the GIL in pieces, and the
            # child packs the next parts meanwhile, so this wait costs the state little
            painted.wait(STOP_PAINT_WAIT)

        finished = run_in_child(session, view, lambda: worker.is_cancelled,
                                lambda progress: self.post_message(msg.TrainProgress(progress)), stopped)
        failed = finished.reason is FinishReason.FAILED or not shown
        self.post_message(msg.TrainFinished(finished, session.snapshot(view) if failed else shown[-1]))

    def on_progress(self, message: msg.TrainProgress) -> None:
        if self._worker is not None and self._worker.is_cancelled:
            return  # a report sent before the cancel arrived: keep saying that it is stopping
        p = message.progress
        noun = self._noun()
        made = p.made_now()  # the run's count now: the report's snapshot is a frame or two older
        self.progress().show(f"esc cancels · training… {made:,}/{p.total:,} {noun}s · "
                             f"{p.rate:,.{1 if p.rate < 10 else 0}f} {noun}s/s", made, p.total)  # what to press first: 80 columns cut the rest
        self.show(p.snapshot)

    def on_stopped(self, message: msg.TrainStopped) -> None:
        """The run has stopped: shown now, while its state comes back (the keys that need the
        learner wait for on_finished)."""
        if not self.running:
            if message.painted is not None:
                message.painted.set()
            return
        self.stopped = True
        finished = message.finished
        self.progress().show(f"{describe_stop(finished, self.session().learner.kind)}; bringing its state back…",
                             finished.done, max(finished.done, self._todo))

        def catch_up() -> None:
            """The panes follow the stop a frame later: the stop alone is one line to paint, where
            the panes at 200×60 cost a frame of 100 ms that the user would wait through first.
            The state comes back while they paint (its parts hold the GIL a few ms at a time):
            waiting for their frame put 100 ms at 200×60 between the escape and the next key."""
            self.stop_painted_at = time.perf_counter()
            if message.painted is not None:
                message.painted.set()
            if self.stopped:  # not if the state came back meanwhile: its snapshot is newer
                self.show(message.snapshot)
                self._caught_up = message.snapshot

        self.after_refresh(catch_up)

    def on_finished(self, message: msg.TrainFinished) -> None:
        settle()  # the state the run brought back: out of the full collections' walks
        self.running = self.stopped = False
        self._worker = None
        self.progress().hide()
        if message.snapshot is not self._caught_up:  # the stop's view is the state's: shown already
            self.show(message.snapshot)
        self._caught_up = None
        self.keys_changed()
        finished = self.last = message.finished
        if finished.reason is FinishReason.FAILED:
            self.ui.notify(finished.error or "unknown error", title="Training stopped", severity="error")
        else:
            self.ui.notify(describe_finish(finished, message.snapshot.vocab_size, message.snapshot.steps,
                                           self.session().learner.kind))

    def cancel(self) -> None:
        """The child stops before its next merge; what it made comes back while this says so."""
        if self._worker is not None and not self._worker.is_cancelled:
            self._worker.cancel()
            noun = self._noun()
            self.progress().show(f"stopping: the run ends before its next {noun}; bringing its {noun}s back…")
