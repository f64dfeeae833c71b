"""Run training in a forked process, so the UI thread never competes for the GIL.

The child inherits the trainer as it is (fork copies nothing until written), merges until the
target or a cancel, sends snapshots a few times a second, and finally its training state; the
parent's thread worker only relays messages and, at the end, puts that state into its trainer.
"""

import gc
import multiprocessing
import os
import threading
import time

from textual.worker import get_current_worker

from .messages import TrainFinished, TrainProgress
from .snapshot import View, take_snapshot

FRAME = 0.2  # seconds between snapshots: a few a second is plenty


def _child(trainer, target: int, view: View, conn, cancel) -> None:
    gc.disable()  # this process only trains, then exits: see core/gcpause.py
    try:
        todo = trainer.merges_for_vocab(target)
        done, reason = 0, "target"
        started = last = time.monotonic()
        while done < todo:
            if cancel.is_set():
                reason = "cancelled"
                break
            if trainer.step() is None:
                reason = "exhausted"
                break
            done += 1
            now = time.monotonic()
            if now - last >= FRAME:
                last = now
                conn.send(("progress", (take_snapshot(trainer, view), done, todo, done / (now - started))))
        conn.send(("done", (trainer.training_state(), done, reason)))
    except BaseException as exc:  # the parent shows it; the child must not reach the terminal
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()
        os._exit(0)


def train_in_child(app, trainer, lock: threading.Lock, target: int, view_of) -> None:
    worker = get_current_worker()
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    cancel = context.Event()
    with lock:
        process = context.Process(target=_child, args=(trainer, target, view_of(), send, cancel), daemon=True)
        process.start()
    send.close()
    result = None
    try:
        while result is None:
            if worker.is_cancelled:
                cancel.set()
            if not receive.poll(0.05):
                if not process.is_alive() and not receive.poll(0):
                    result = ("error", "the training process ended without a result")
                continue
            kind, payload = receive.recv()
            if kind == "progress":
                snap, done, todo, rate = payload
                app.post_message(TrainProgress(snap, done, todo, rate))
            else:
                result = (kind, payload)
    finally:
        cancel.set()
        process.join(timeout=5)
        receive.close()
    kind, payload = result
    if kind == "error":
        with lock:
            snap = take_snapshot(trainer, view_of())
        app.post_message(TrainFinished(snap, 0, f"failed: {payload}"))
        return
    state, done, reason = payload
    with lock:
        trainer.restore_state(state)
        snap = take_snapshot(trainer, view_of())
    app.post_message(TrainFinished(snap, done, reason))
