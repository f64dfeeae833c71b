"""Carry a training state from the training child to its parent fast: arrays through shared
memory, the rest pickled one part at a time.

Through the pipe a 60 MB state (multi-10M at 5k merges) was pickled whole, pushed through 64 KB
of pipe buffer at a time, read back and unpickled: 0.8-1.3 s between a cancel and a usable
session. Here an `Arena` (anonymous shared memory, made before the fork, so both processes map
it) takes every large buffer the pickler meets (pickle protocol 5 hands them out of band): the
child copies each in once and the parent copies it out once, into memory of its own, so nothing
it keeps is shared with the next run's child. Only the objects' own pickle goes through the pipe.

A `Rebuild` is a value that is made by a call when it is unpickled: the parent's rebuilding (a
dict of positions, the merge records) then happens while it receives that part, as the child
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
    """Shared memory both sides of a fork see. Untouched pages cost nothing, so `capacity` can be
    generous; `prefault` touches the first `ready` bytes (in the child, while the run starts) so
    the copies at the end do not pay a page fault per 4 KB."""

    def __init__(self, capacity: int):
        self.capacity = max(capacity, mmap.PAGESIZE)
        self.memory = mmap.mmap(-1, self.capacity, flags=mmap.MAP_SHARED | _MAP_NORESERVE)
        self.used = 0  # written by the child only

    def prefault(self, ready: int) -> None:
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

    def take(self, at: int, n: int) -> bytearray:
        """A private, writable copy of what the other side placed at `at`."""
        with memoryview(self.memory) as whole, whole[at : at + n] as part:
            return bytearray(part)

    def close(self) -> None:
        self.memory.close()


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
    buffers = [arena.take(at, n) for at, n in packed.buffers] if packed.buffers else None
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
    """`value`, pickled PIECE entries at a time (see the module's docstring)."""
    if isinstance(value, dict):
        keys, values = list(value), list(value.values())
        return Rebuild(_dict_of, [pickle.dumps((keys[i : i + PIECE], values[i : i + PIECE]), protocol=5)
                                  for i in range(0, len(keys), PIECE)])
    return Rebuild(_list_of, [pickle.dumps(value[i : i + PIECE], protocol=5) for i in range(0, len(value), PIECE)])


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
