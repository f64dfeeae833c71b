"""Carry a training state from the training child to its parent fast: arrays through shared
memory, the rest pickled one part at a time.

Through the pipe a 60 MB state (multi-10M at 5k merges) was pickled whole, pushed through 64 KB
of pipe buffer at a time, read back and unpickled: 0.8-1.3 s between a cancel and a usable
session. Here an `Arena` (anonymous shared memory, made before the fork, so both processes map
the same pages) takes every large buffer the pickler meets (pickle protocol 5
hands them out of band): the child copies each in once, and the parent's arrays are views of
it, with no copy and no page fault (copying 41 MB out into fresh memory took 20 ms, 135 ms on a
busy machine). A parent's arrays may therefore live in shared memory: the next child copies the
arrays it writes to before its first step (the learner's `own_arrays`), so no child ever writes
where its parent reads. Only the objects' own pickle goes through the pipe.

A `Rebuild` is a value that is made by a call when it is unpickled: the parent's rebuilding (a
dict of positions, the numpy path's undo records) then happens while it receives that part, as the child
packs the next one, rather than after the last. `in_pieces` pickles a long list or dict in
pieces: unpickled whole, the 170k pair counts held the GIL, and so froze the UI thread, for
35 ms of CPU, stretched to 110 ms when the machine was busy; a piece at a time the UI gets its
turns in between.
"""

import mmap
import pickle
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_MAP_NORESERVE = 0x4000  # Linux: reserve no swap for the pages no one touches
SMALL_BUFFER = 1 << 16  # smaller buffers stay in the pickle itself
PIECE = 20_000  # entries of a long list or dict unpickled in one call (one hold of the GIL)
_ALIGN = 64


class Arena:
    """Shared memory both sides of a fork see. Untouched pages cost nothing; `prefault` touches
    the first bytes in the child as the run starts (not in the parent: mapping with
    MAP_POPULATE held the GIL, and froze the UI, for 6 ms a MB on a busy machine), so the copies
    at the end take no page fault per 4 KB on either side."""

    def __init__(self, capacity: int):
        self.capacity = max(capacity, mmap.PAGESIZE)
        self.memory = mmap.mmap(-1, self.capacity, flags=mmap.MAP_SHARED | _MAP_NORESERVE)
        self.used = 0  # written by the child only

    def prefault(self, ready: int) -> None:
        """Touch the pages of the first `ready` bytes. Not while anything is being placed: it
        writes zeros."""
        ready = min(ready, self.capacity)
        if ready > 0:
            np.frombuffer(self.memory, dtype=np.uint8, count=ready)[:: mmap.PAGESIZE] = 0

    def place(self, buffer: memoryview) -> int | None:
        """Copy a buffer in; where it went, or None when it does not fit."""
        n = buffer.nbytes
        at = self.used
        if at + n > self.capacity:
            return None
        self.memory[at : at + n] = buffer.cast("B")
        self.used = at + (n + _ALIGN - 1) // _ALIGN * _ALIGN
        return at

    def view(self, at: int, n: int) -> memoryview:
        """What the other side placed at `at`, where it lies (the mapping lives as long as any
        view of it does)."""
        return memoryview(self.memory)[at : at + n]


@dataclass(frozen=True)
class Packed:
    """One part of a state as it travels: its pickle and where its buffers are in the arena."""

    data: bytes
    buffers: tuple[tuple[int, int], ...]  # (offset, bytes), in the pickle's order


def pack(value, arena: Arena | None) -> Packed:
    placed = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        with buffer.raw() as raw:
            if arena is None or raw.nbytes < SMALL_BUFFER:
                return True  # in band
            at = arena.place(raw)
            if at is None:
                return True
            placed.append((at, raw.nbytes))
            return False

    data = pickle.dumps(value, protocol=5, buffer_callback=out_of_band)
    return Packed(data, tuple(placed))


def unpack(packed: Packed, arena: Arena | None):
    buffers = [arena.view(at, n) for at, n in packed.buffers] if packed.buffers else None
    return pickle.loads(packed.data, buffers=buffers)


class Rebuild:
    """`fn(*args)`, made when unpickled (`value()` makes it without pickling)."""

    def __init__(self, fn: Callable, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args

    def value(self):
        return self.fn(*self.args)


def in_pieces(value: list | dict) -> Rebuild:
    """`value`, pickled PIECE entries at a time when it is pickled (see the module's
    docstring); the pieces are made then, so a sender pickling parts in turn sends the ones
    before at once."""
    return _Pieces(value)


class _Pieces(Rebuild):
    def __init__(self, whole: list | dict):
        self.whole = whole

    def __reduce__(self):
        whole = self.whole
        if isinstance(whole, dict):
            keys, values = list(whole), list(whole.values())
            return _dict_of, ([pickle.dumps((keys[i : i + PIECE], values[i : i + PIECE]), protocol=5)
                               for i in range(0, len(keys), PIECE)],)
        return _list_of, ([pickle.dumps(whole[i : i + PIECE], protocol=5) for i in range(0, len(whole), PIECE)],)

    def value(self):
        return self.whole


def _dict_of(pieces: list[bytes]) -> dict:
    whole: dict = {}
    for piece in pieces:
        keys, values = pickle.loads(piece)
        whole.update(zip(keys, values))
    return whole


def _list_of(pieces: list[bytes]) -> list:
    whole: list = []
    for piece in pieces:
        whole += pickle.loads(piece)
    return whole


def built(value):
    """A state value as restore uses it: a `Rebuild` that was not pickled is made now."""
    return value.value() if isinstance(value, Rebuild) else value
