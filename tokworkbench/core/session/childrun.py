"""Run a session's training in a forked process, so a UI thread never competes for the GIL.

The child inherits the learner as it is (fork copies nothing until written), steps until the
target or a cancel, sends progress a few times a second, and at the end its training state;
the caller's thread relays progress and finally puts that state into its own learner. The state
travels a part at a time, its arrays through shared memory (core/transfer.py): the caller
rebuilds each part while the child packs the next, and holds the GIL for one piece at a time.
On the compiled path (bpe/mergekernel.py) the pair tables are arrays too and are used where
they land (5 ms to restore multi-10M at 5k merges); on the numpy path a cancel still costs
rebuilding them as Python objects on both sides (about 0.4 s of CPU each on a busy machine).

Fork is used only where it is the platform's own default (Linux). Forking a process that runs
threads is safe here because the child touches nothing but the learner and its pipe: it takes
no lock the parent's threads might hold (it gets a fresh session lock) and never returns into
the parent's code. Elsewhere (macOS, Windows) the run happens in the calling thread instead,
which keeps every result the same and only costs the UI some smoothness.
"""

import gc
import multiprocessing
import os
import threading
from collections.abc import Callable
from dataclasses import replace

from tokworkbench.core.gcpause import collector_paused
from tokworkbench.core.models.protocol import Transferable
from tokworkbench.core.session.session import FinishReason, RunFinished, RunProgress, Session
from tokworkbench.core.session.snapshot import Snapshot, View
from tokworkbench.core.text.parallel import can_fork
from tokworkbench.core.transfer import Arena, pack, unpack

POLL = 0.005  # seconds between looks at `cancelled()` while nothing arrives: part of a cancel's delay
RESERVE = 16 << 20  # shared memory beyond the estimate; a part that does not fit goes through the pipe


def run_in_child(session: Session, view: View, cancelled: Callable[[], bool],
                 on_progress: Callable[[RunProgress], None],
                 on_stopped: Callable[[RunFinished, Snapshot], None] | None = None) -> RunFinished:
    """Train to the session's target; `cancelled()` is polled, `on_progress` called with each
    report. `on_stopped(finished, snapshot)` hears that the child has stopped, with the view of
    where it stopped, before its state comes back: a screen can say so at once. Returns once
    the session holds the result (or the failure is known)."""
    if not can_fork():
        return _run_here(session, view, cancelled, on_progress)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    cancel = context.Event()
    steps = context.RawValue("q", 0)  # the child's step count, read when a cancel comes
    at_cancel = None
    with session.lock:
        nbytes = _state_nbytes(session.learner)
    arena = Arena(nbytes + nbytes // 4 + RESERVE) if nbytes else None
    with session.lock:  # no step is half made when the child is copied
        process = context.Process(target=_child, args=(session, view, send, cancel, steps, arena, nbytes),
                                  daemon=True)
        process.start()
    send.close()
    result = None
    loaded = False
    state: dict = {}
    try:
        while result is None:
            if at_cancel is None and cancelled():
                at_cancel = steps.value
                cancel.set()
            if not receive.poll(POLL):
                if not process.is_alive() and not receive.poll(0):
                    result = ("error", "the training process ended without a result")
                continue
            kind, payload = receive.recv()
            if kind == "progress":  # with the child's count, which goes on while the report waits
                on_progress(replace(payload, made=lambda: steps.value))
                if not loaded and isinstance(session.learner, Transferable):
                    _load_step_code(session)
                loaded = True
            elif kind == "stopped":  # the state follows; the screen need not wait for it
                if on_stopped is not None:
                    stopped, snapshot = payload
                    on_stopped(_with_after_cancel(stopped, at_cancel), snapshot)
            elif kind == "part":  # rebuilt now, while the child packs the next
                name, packed = payload
                with collector_paused():  # a part of thousands of records set off a full pass over
                    state[name] = unpack(packed, arena)  # this process's heap: 130 ms of a cancel's 190
            else:
                result = (kind, payload)
        kind, payload = result
        if kind == "done":
            with session.lock:
                session.learner.restore_state(state)
    finally:
        cancel.set()
        receive.close()
        # the child has sent its last word; freeing a big process's memory as it exits took
        # 30 ms, which the caller need not wait for
        threading.Thread(target=process.join, args=(5,), daemon=True).start()
    if kind == "error":
        return RunFinished(FinishReason.FAILED, 0, payload)
    return _with_after_cancel(payload, at_cancel)


def _load_step_code(session: Session) -> None:
    """The child has stepped, so the compiled step is in numba's cache: load it here now, not
    on the first step after the run. A speed-up only: whatever goes wrong is the step's to meet.
    (Where numba cannot keep a cache, this compiles the step, as that first step would.)"""
    try:
        with session.lock:
            session.learner.load_step_code()
    except Exception:
        pass


def _with_after_cancel(finished: RunFinished, at_cancel: int | None) -> RunFinished:
    return finished if at_cancel is None else replace(finished, after_cancel=finished.done - at_cancel)


def _state_nbytes(learner) -> int:
    """The learner's own estimate of its state's arrays; 0 (no shared memory) for a learner
    whose state is small."""
    return learner.state_nbytes() if isinstance(learner, Transferable) else 0


def _run_here(session, view, cancelled, on_progress) -> RunFinished:
    steps = session.run(view, cancelled)
    while True:
        try:
            on_progress(next(steps))
        except StopIteration as stop:
            return stop.value


def _child(session: Session, view: View, conn, cancel, done, arena: Arena | None, nbytes: int) -> None:
    gc.disable()  # this process only trains, then exits: see core/gcpause.py
    session.lock = threading.Lock()  # the parent held its own while forking
    try:
        if isinstance(session.learner, Transferable):
            session.learner.own_arrays()  # they may be the last run's shared memory, which the parent reads
        touching = None
        if arena is not None:  # the pages the state will be copied into, touched beside the first steps
            touching = threading.Thread(target=arena.prefault, args=(nbytes,), daemon=True)
            touching.start()
        steps = session.run(view, cancel.is_set, on_step=lambda n: setattr(done, "value", n))
        while True:
            try:
                conn.send(("progress", next(steps)))
            except StopIteration as stop:
                finished = stop.value
                break
        conn.send(("stopped", (finished, session.snapshot(view))))
        if touching is not None:
            touching.join()  # it writes zeros: done before anything is placed
        for name, value in session.learner.training_state().items():
            conn.send(("part", (name, pack(value, arena))))
        conn.send(("done", finished))
    except BaseException as exc:  # the parent shows it; the child must not reach the terminal
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()
        os._exit(0)
