"""Pause CPython's cyclic garbage collector around a whole training run, or a batch encode.

Training makes no reference cycles (reference counting frees everything it drops), but each
step leaves a few long-lived objects behind (the undo record, the history entry), and the
collector keeps re-scanning all of them: on multi-10M at 32k merges that was about a sixth of
the merge time. Only batch callers use this (the CLI, `train`, the app's training child
process); `Trainer.run` itself leaves the collector alone, since its caller runs between steps.
A batch encode of many lines makes a list a line and a tuple a new word, none in a cycle: the
collector's passes over them were a third of SentencePiece BPE's `encode_batch` on 2 MB of lines.

A command of the installed CLI runs with the collector off from its start (`cli.entry`): it runs
once and exits, and turning the collector back on after a pause set off passes over every
object the pause had made, as the model was being written: 0.1 s inside the collector, 0.3 s
of a 10 MB training's 1.8 s of wall time. What runs long and makes cycles as it goes turns it
back on for that stretch (`collector_running`).
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_running() -> Iterator[None]:
    """The collector on (as it was after), for a stretch that makes reference cycles for as long
    as it runs: a Dask client's event loop, which talks to the cluster for the whole count."""
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was_enabled:
            gc.disable()


@contextmanager
def collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
