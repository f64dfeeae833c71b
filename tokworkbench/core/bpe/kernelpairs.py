"""The trainer's pair state as arrays for the compiled merge loop (`mergekernel.py`).

It owns the pair table, the position pool, the heap and the undo records; the token cells
(ids, links, weights) are the `FlatChunks` arrays, shared, so reading chunk tokens works as on
the numpy path. Every array is plain numpy: a training state travels whole through shared
memory (core/transfer.py) and is usable as it lands, with nothing rebuilt.
Import this module only after `jit.available()`: it imports numba.
"""

import numpy as np

from tokworkbench.core.bpe import mergekernel as K

_HEAP = ("hc", "hk", "hp")
# what a step or an undo changes, and so what travels
MOVING = ("table", "tfirst", "ppos", "plink", "order", *_HEAP, "app_pos", "app_start", "meta")

# Pool nodes and the table's links are 32-bit while the pool stays below this many nodes. A run
# needs up to 4 nodes a unit, so a corpus of a quarter as many units starts with 64 bits; steps
# and undos past that (an undo puts back positions the lists still hold) widen them (`_grow`).
LINKS32_BELOW = 2**31


def _pow2(n: int) -> int:
    return 1 << max(4, int(n - 1).bit_length())


class KernelPairs:
    """Pair counts, positions and selection for one `FlatChunks`, merged in compiled code."""

    def __init__(self, flat, order: list[int] | None, use_first: bool, sign: int, keep: int, vocab: int):
        self.flat = flat
        size = flat.size
        pos = flat.next.dtype
        link = np.int32 if 4 * size < LINKS32_BELOW else np.int64
        self.ppos = np.empty(size + size // 4 + 1024, dtype=pos)  # a position per unit to begin with
        self.plink = np.empty(len(self.ppos), dtype=link)
        self.meta = m = np.zeros(K.META, dtype=np.int64)
        m[K.POOL_FREE] = -1
        m[K.USE_FIRST] = use_first
        m[K.SIGN] = sign
        m[K.SIZE] = size
        m[K.KEEP] = keep
        m[K.VOCAB] = vocab
        self.table, self.tfirst = K.count_pairs(flat.ids, flat.next, flat.weight, self.ppos, self.plink, m,
                                                K.empty_table(1 << 12, link))
        if not use_first:
            self.tfirst = np.zeros(1, dtype=np.int64)  # kept only for the `first` rule
        self.order = np.zeros(_pow2(vocab + 4096), dtype=np.int64)
        if order is not None:
            self.order[: len(order)] = order
        heap = _pow2(min(int(m[K.LIVE]), 4 * keep) + 1024)
        self.hc, self.hk, self.hp = (np.empty(heap, dtype=np.int64) for _ in range(3))
        self.app_pos = np.empty(size // 4 + 1024, dtype=pos)
        self.app_start = np.zeros(_pow2(vocab + 4096), dtype=np.int64)
        self._rebuild(everything=False)

    # -- state ------------------------------------------------------------------------------
    def moving_state(self) -> dict:
        """The arrays, cut to what is in use plus room to grow where the rest is junk. Cut bare,
        the first step after a cancel grew seven arrays again: 9 ms of the 70 from `escape` to
        a usable session (multi-10M, 15k merges), against about 1 ms to carry the room."""
        m = self.meta
        state = {name: getattr(self, name) for name in MOVING}
        for names, used in ((("ppos", "plink"), m[K.POOL_TOP]), (_HEAP, m[K.HSIZE]), (("app_pos",), m[K.APP_TOP]),
                            (("app_start",), m[K.MERGES] + 1)):
            for name in names:
                state[name] = state[name][: _with_room(int(used))]
        return state

    def take_state(self, state: dict) -> None:
        """Take `moving_state()`. A small array that travelled inside the pickle may land
        unaligned or read-only, which numba compiles for anew (a second on the first look at
        the pairs): those are copied."""
        vars(self).update((name, np.require(array, requirements=("C", "A", "W"))) for name, array in state.items())

    def own_arrays(self) -> None:
        for name in MOVING:
            setattr(self, name, getattr(self, name).copy())

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in MOVING)

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.meta[K.LIVE])

    def count(self, key: int) -> int:
        s = K.find(self.table, key)
        return int(self.table[s]["count"]) if s >= 0 else 0

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair's key and count (table order)."""
        live = self.table["count"] > 0
        return self.table["key"][live], self.table["count"][live]

    def counts(self) -> dict[int, int]:
        keys, counts = self.pairs()
        return dict(zip(keys.tolist(), counts.tolist()))

    def index(self) -> dict[int, list[int]]:
        """pair key -> the positions its list holds (for the tests' recount)."""
        positions, sizes = K.lists(self.table, self.ppos, self.plink)
        live = np.flatnonzero(self.table["count"] > 0)
        bounds = np.concatenate(([0], np.cumsum(sizes[live]))).tolist()
        keys = self.table["key"][live].tolist()
        return {key: positions[i:j].tolist() for key, i, j in zip(keys, bounds, bounds[1:])}

    def tie_key(self, key: int) -> int:
        """The pair's tie key as the heap ranks it (smaller wins among equal counts)."""
        if self.meta[K.USE_FIRST]:
            return int(self.tfirst[K.find(self.table, key)])
        return (int(self.order[key >> 32]) << 32) + int(self.order[key & 0xFFFFFFFF])

    def firsts(self) -> dict[int, int]:
        live = self.table["count"] > 0
        return dict(zip(self.table["key"][live].tolist(), self.tfirst[live].tolist()))

    def best(self) -> int:
        """The best pair's key, or -1 when none is left."""
        while True:
            got = K.best(self.table, self.tfirst, self.order, self.hc, self.hk, self.hp, self.meta, True)
            if got != K.NEED:
                return int(got)
            self._grow()

    def top(self, k: int) -> tuple[list[int], list[int]]:
        """The k best pairs' keys and counts, in selection order."""
        keys = np.empty(k, dtype=np.int64)
        counts = np.empty(k, dtype=np.int64)
        while True:
            n = K.top(self.table, self.tfirst, self.order, self.hc, self.hk, self.hp, self.meta,
                      k, keys, counts)
            if n != K.NEED:
                return keys[:n].tolist(), counts[:n].tolist()
            self._grow()

    def positions(self, step: int) -> np.ndarray:
        """Where merge `step` (0-based) put its new token: its undo record."""
        return self.app_pos[self.app_start[step] : self.app_start[step + 1]]

    # -- training ---------------------------------------------------------------------------
    def run(self, k: int, forced: list[int] = ()) -> np.ndarray:
        """Up to k merges (`forced` pair keys first); rows (a, b, new id, count, replacements).
        Fewer rows than k: no pair was left."""
        out = np.empty((k, 5), dtype=np.int64)
        forced = np.asarray(forced, dtype=np.int64)
        done = 0
        while done < k:
            flat = self.flat
            made, status = K.run(flat.ids, flat.next, flat.prev, flat.weight, *self._args(),
                                 k - done, forced[done:], out[done:])
            done += made
            if status == K.NEED:
                self._grow()
            elif status == K.NONE:
                break
        return out[:done]

    def load_step_code(self) -> None:
        """Load `run`'s compiled code with the arguments `run` passes, asking for no merge."""
        flat = self.flat
        K.run(flat.ids, flat.next, flat.prev, flat.weight, *self._args(), 0,
              np.empty(0, dtype=np.int64), np.empty((0, 5), dtype=np.int64))

    def undo(self, a: int, b: int, count: int, width: int) -> None:
        flat = self.flat
        while K.undo(flat.ids, flat.next, flat.prev, flat.weight, *self._args(), a, b, count, width) == K.NEED:
            self._grow()

    # -- inside -----------------------------------------------------------------------------
    def _args(self) -> tuple:
        return (self.table, self.tfirst, self.ppos, self.plink,
                self.order, self.hc, self.hk, self.hp, self.app_pos, self.app_start, self.meta)

    def _rebuild(self, everything: bool) -> None:
        while not K.rebuild(self.table, self.tfirst, self.order, self.hc, self.hk, self.hp, self.meta,
                            everything):
            self._grow()

    def _grow(self) -> None:
        """Grow what the kernel asked for (at least double, so growing is rare)."""
        m = self.meta
        need = int(m[K.NEED_POOL])
        if need > len(self.ppos):
            cap = max(need, len(self.ppos) * 3 // 2)
            if cap >= LINKS32_BELOW and self.plink.dtype != np.int64:  # a node's number would not fit
                self.plink = self.plink.astype(np.int64)
                self.table = self.table.astype(K.table_type(np.int64))
            self.ppos, self.plink = _grown(self.ppos, cap, m[K.POOL_TOP]), _grown(self.plink, cap, m[K.POOL_TOP])
        need = int(m[K.NEED_TABLE])
        if need:
            bits = _pow2(2 * need).bit_length() - 1  # half full at most: rehashed again after 0.1 more
            self.table, self.tfirst, used = K.rehash(self.table, self.tfirst, 1 << bits)
            m[K.USED] = used
        need = int(m[K.NEED_HEAP])
        if need > len(self.hc):
            cap = _pow2(max(need, 2 * len(self.hc)))
            self.hc, self.hk, self.hp = (_grown(a, cap, m[K.HSIZE]) for a in (self.hc, self.hk, self.hp))
        need = int(m[K.NEED_APP])
        if need > len(self.app_pos):
            self.app_pos = _grown(self.app_pos, max(need, len(self.app_pos) * 3 // 2), m[K.APP_TOP])
        if m[K.MERGES] + 2 > len(self.app_start):
            self.app_start = _grown(self.app_start, 2 * len(self.app_start), m[K.MERGES] + 1)
        if m[K.VOCAB] + 1 > len(self.order):
            self.order = _grown(self.order, 2 * len(self.order), m[K.VOCAB])
        m[K.NEED_POOL] = m[K.NEED_TABLE] = m[K.NEED_HEAP] = m[K.NEED_APP] = 0


def _with_room(used: int) -> int:
    """What of an array to carry when `used` entries are in use: a step or an undo adds
    positions, heap entries and a merge, and growing costs a copy of the whole array."""
    return used + used // 8 + 4096


def _grown(array: np.ndarray, size: int, used: int) -> np.ndarray:
    out = np.empty(size, dtype=array.dtype)
    out[:used] = array[:used]
    return out
