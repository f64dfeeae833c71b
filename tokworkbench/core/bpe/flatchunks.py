"""The distinct chunks as one flat, linked array with a pair -> positions index; merges run in numpy.

Every base unit of every distinct chunk has a fixed position (chunks laid end to end in order of
first appearance), and a token is named by the position of its first unit. Comparing positions
therefore compares (chunk, offset), which is the `first` tie-break's key. A merge writes the new
id over the left token, punches a hole where the right one stood and relinks its neighbours.
Nothing moves, so an undo writes the same cells back: the right token of an occurrence at p
stood at p + (units of the left token), so the positions alone are a step's whole undo record,
and what the merge destroyed and created is worked out again from the cells (4 bytes a position
instead of 13 arrays a step: 154 MB of records at 32k merges on multi-10M before).

A merge with many occurrences costs a few dozen numpy calls over them, not a Python step per
occurrence: on multilingual text the Python loop over occurrences was 80% of training time (long
CJK chunks hold many occurrences of the early pairs). Most merges, though, have a handful of
occurrences (more than half of 32k on multi-10M have under 10), and there those numpy calls'
fixed cost was the whole step (180 us); such merges take a plain Python path over memoryviews
of the same arrays instead, which does the same thing in the same order.

The arrays are int32 while positions fit (they hold the distinct chunks' units, not the corpus),
which halves the store; pair keys, counts and sums are int64 or Python ints.
"""

from operator import itemgetter
from typing import NamedTuple

import numpy as np

from tokworkbench.core.transfer import Rebuild, built

Pair = tuple[int, int]
EMPTY = np.zeros(0, dtype=np.int64)
SMALL = 40  # a merge or undo with at most this many candidate positions takes the Python path
_INT32_MAX = 2**31 - 1


def pair_keys(left: int, right: int) -> int:
    """One integer per pair (ids stay below 2**31): pairs sort and group as numbers, and as
    dictionary keys they hash faster and cost the garbage collector nothing, unlike tuples."""
    return (left << 32) | right


def key_array(left, right) -> np.ndarray:
    """`pair_keys` over arrays (either side may be one id), always as int64."""
    return (np.asarray(left, dtype=np.int64) << 32) | np.asarray(right, dtype=np.int64)


def key_pair(key: int) -> Pair:
    return key >> 32, key & 0xFFFFFFFF


class Grouped(NamedTuple):
    """Distinct pairs (ascending keys), each with its weighted count, its leftmost position and,
    when asked for, its positions (for the index)."""

    keys: list[int]
    counts: list[int]
    leftmost: list[int]
    positions: list | None = None  # per key: an array, or a list for a few

    @staticmethod
    def of(keys: np.ndarray, at: np.ndarray, weight: np.ndarray, order: np.ndarray | None = None,
           with_positions: bool = True) -> "Grouped":
        """`order`, if given, must sort `keys` stably (a caller may know a cheaper way)."""
        if len(keys) == 0:
            return Grouped([], [], [], [] if with_positions else None)
        if order is None:
            order = np.argsort(keys, kind="stable")
        keys, at = keys[order], at[order]
        starts = np.concatenate(([0], np.flatnonzero(keys[1:] != keys[:-1]) + 1))
        return Grouped.sorted(keys[starts], starts, at, weight, with_positions)

    @staticmethod
    def sorted(keys: np.ndarray, starts: np.ndarray, at: np.ndarray, weight: np.ndarray,
               with_positions: bool = True) -> "Grouped":
        """From positions already grouped by pair: `keys[i]` stands at at[starts[i]:starts[i+1]]."""
        counts = np.add.reduceat(weight[at], starts, dtype=np.int64)
        positions = None
        if with_positions:
            bounds = starts.tolist()
            bounds.append(len(at))
            positions = [at[i:j] for i, j in zip(bounds, bounds[1:])]  # np.split costs 5x more per piece
        return Grouped(keys.tolist(), counts.tolist(), np.minimum.reduceat(at, starts).tolist(), positions)

    @staticmethod
    def of_list(entries: list[tuple[int, int]], weight) -> "Grouped":
        """The same from (key, position) pairs in the order the numpy path would concatenate them."""
        entries.sort(key=itemgetter(0))  # stable, as argsort(kind="stable")
        keys: list[int] = []
        counts: list[int] = []
        leftmost: list[int] = []
        positions: list[list[int]] = []
        last = None
        for key, at in entries:
            if key == last:
                counts[-1] += weight[at]
                if at < leftmost[-1]:
                    leftmost[-1] = at
                positions[-1].append(at)
            else:
                keys.append(key)
                counts.append(weight[at])
                leftmost.append(at)
                positions.append([at])
                last = key
        return Grouped(keys, counts, leftmost, positions)


class Applied(NamedTuple):
    """What one merge changed: its counts for the trainer, and its positions, the undo record."""

    pair: Pair
    new_id: int
    positions: np.ndarray  # where the new token stands: the left token of each occurrence
    added: Grouped  # pairs the merge created (all hold the new id)
    removed: Grouped  # pairs it destroyed, other than the merged pair itself (no positions)
    replacements: int  # weighted


class FlatChunks:
    """Token ids of all distinct chunks, their links, and where each adjacent pair occurs.

    The index may keep positions where a pair no longer stands (a superset is enough to find a
    pair's occurrences; `merge` checks them), never miss one where it does. Its values are
    arrays, or lists for a few positions (a list is smaller and quicker to make than an array).
    """

    def __init__(self, units: np.ndarray, lengths: np.ndarray, weights: np.ndarray):
        size = int(lengths.sum())
        self.size = size  # also the position of the sentinel "no token here"
        pos = np.int32 if size < _INT32_MAX else np.int64
        self.starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        self.ids = np.empty(size + 1, dtype=np.int32)  # ids stay below 2**31 (see pair_keys)
        self.ids[:size] = units
        self.ids[size] = -1  # holes hold -1 too, so no pair test ever matches them
        positions = np.arange(size + 1, dtype=pos)
        filled = lengths > 0
        self.next = positions + 1
        self.next[self.starts[1:][filled] - 1] = size
        self.next[size] = size
        self.prev = positions - 1
        self.prev[self.starts[:-1][filled]] = size
        del positions
        heaviest = int(weights.max()) if len(weights) else 0
        self.weight = np.zeros(size + 1, dtype=np.int32 if heaviest <= _INT32_MAX else np.int64)
        self.weight[:size] = np.repeat(weights, lengths)
        self._views()
        self.index: dict[int, np.ndarray | list[int]] = {}  # pair key -> positions

    def _views(self) -> None:
        self._mark = np.zeros(self.size + 1, dtype=bool)
        # element access for the small path: a memoryview reads a Python int, numpy a numpy scalar
        self._cells = tuple(memoryview(a) for a in (self.ids, self.next, self.prev, self.weight))

    def __getstate__(self):
        """The index travels as three arrays rather than one object per pair."""
        state = dict(self.__dict__)
        del state["_mark"], state["_cells"]  # all False between merges; views of the arrays
        state["index"] = _pack(self.index, self.next.dtype)
        return state

    def __setstate__(self, state):
        packed = state.pop("index")
        self.__dict__.update(state)
        self._views()
        self.index = _unpack(*packed)

    def moving_state(self) -> dict:
        """What training changes, to carry it to another process: not the weights and chunk
        starts, which stay as they were built (a quarter of the store). The index is rebuilt
        as it is unpickled (see core/transfer.py)."""
        state = self.__getstate__()
        del state["weight"], state["starts"]
        state["index"] = Rebuild(_unpack, *state["index"])
        return state

    def take_state(self, state: dict) -> None:
        """Take `moving_state()` of a store built from the same chunks."""
        state = dict(state)
        index = built(state.pop("index"))
        self.__dict__.update(state, weight=self.weight, starts=self.starts)
        self._views()
        self.index = index

    def own_arrays(self) -> None:
        """Private copies of the arrays a merge or undo writes in place (see Trainer.own_arrays)."""
        self.ids, self.next, self.prev = self.ids.copy(), self.next.copy(), self.prev.copy()
        self._views()

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays and the index's arrays (lists not counted)."""
        arrays = self.ids.nbytes + self.next.nbytes + self.prev.nbytes + self.weight.nbytes + self._mark.nbytes
        return arrays + sum(v.nbytes for v in self.index.values() if isinstance(v, np.ndarray))

    def initial_pairs(self) -> Grouped:
        """Every adjacent pair with its weighted count and leftmost position; fills the index."""
        left = np.flatnonzero(self.next[: self.size] != self.size).astype(self.next.dtype)
        if len(left) and self.ids[: self.size].max() < 256:
            # bytes: 16-bit keys sort by radix (5x faster), and no int64 key per position is made
            # (on multi-10M those arrays were 100 MB of the build's peak)
            small = self.ids[left].astype(np.uint16) << 8
            small |= self.ids[left + 1].astype(np.uint16)
            order = np.argsort(small, kind="stable")
            small = small[order]
            at = left[order]
            del order, left
            starts = np.concatenate(([0], np.flatnonzero(small[1:] != small[:-1]) + 1))
            distinct = small[starts]
            grouped = Grouped.sorted(key_array(distinct >> 8, distinct & 255), starts, at, self.weight)
        else:
            grouped = Grouped.of(key_array(self.ids[left], self.ids[left + 1]), left, self.weight)
        self.index = dict(zip(grouped.keys, grouped.positions))
        return Grouped(grouped.keys, grouped.counts, grouped.leftmost)

    def tokens(self, chunk: int) -> list[int]:
        ids = self.ids[self.starts[chunk] : self.starts[chunk + 1]]
        return ids[ids >= 0].tolist()

    def live_cells(self, chunks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The chunks' cells end to end, read at once: where each token starts in that run (a
        live cell; a hole belongs to the token on its left), its id, and where each chunk
        starts in it. A view's window reads some 500 chunks a merge; one read each took 0.9 ms."""
        starts, ends = self.starts[chunks], self.starts[chunks + 1]
        units = ends - starts
        begins = np.concatenate(([0], np.cumsum(units)))
        cells = self.ids[np.repeat(starts - begins[:-1], units) + np.arange(begins[-1])]
        at = np.flatnonzero(cells >= 0)
        return at, cells[at], begins

    def tokens_between(self, chunk: int, lo: int, hi: int) -> tuple[int, list[int]]:
        """The tokens of a chunk that overlap its units [lo, hi), and the unit offset where the
        first of them starts. A view of a window reads the window, not the chunk: `tokens` of one
        5M-unit chunk takes 0.1-0.3 s, and building spans for all of it took 19-80 s."""
        start, end = int(self.starts[chunk]), int(self.starts[chunk + 1])
        lo, hi = max(0, lo), min(hi, end - start)
        if lo >= hi:
            return min(lo, end - start), []
        ids, first, step = self.ids, start + lo, 256
        while ids[first] < 0:  # a hole belongs to the token on its left; a chunk starts with a token
            block = ids[max(start, first - step) : first]
            live = np.flatnonzero(block >= 0)
            first -= len(block)
            if len(live):
                first += int(live[-1])
                break
            step *= 2
        window = ids[first : start + hi]
        return first - start, window[window >= 0].tolist()

    def standing(self, keys: np.ndarray, at: np.ndarray) -> np.ndarray:
        """Whether each pair (by key) still stands at its position."""
        keys = np.asarray(keys, dtype=np.int64)
        at = np.asarray(at, dtype=self.next.dtype)
        return (self.ids[at] == keys >> 32) & (self.ids[self.next[at]] == keys & 0xFFFFFFFF)

    def forget(self, key: int) -> None:
        """Drop a pair that no longer occurs anywhere from the index."""
        self.index.pop(key, None)

    def leftmost(self, key: int) -> int:
        """The smallest position where the pair stands (-1 if none); drops stale index entries."""
        at = self.index.get(key)
        if at is None:
            return -1
        at = np.asarray(at, dtype=self.next.dtype)
        at = sorted_distinct(at[self.standing(key, at)])
        self.index[key] = at
        return int(at[0]) if len(at) else -1

    # -- a merge and its undo ---------------------------------------------------------------
    def merge(self, a: int, b: int, z: int) -> Applied:
        """Replace (a, b) by z left to right without overlap ("aaa" with (a, a) gives [z, a])."""
        candidates = self.index.pop(pair_keys(a, b), EMPTY)
        if len(candidates) <= SMALL:
            return self._merge_few(a, b, z, candidates)
        ids, nxt, prv = self.ids, self.next, self.prev
        at = sorted_distinct(np.asarray(candidates, dtype=np.intp))  # numpy indexes fastest with intp
        right = nxt[at].astype(np.intp)
        hit = (ids[at] == a) & (ids[right] == b)
        P, Q = at[hit], right[hit]
        if a == b and len(P) > 1:
            P, Q = _leftmost_of_runs(P, Q, nxt)
        R, free = self._right_of(P, Q)
        removed = self._around(a, b, P, Q, R, free, with_positions=False)
        ids[P] = z
        ids[Q] = -1
        nxt[P] = R
        prv[R] = P  # prv[end] takes junk, never read
        added = self._created(z, P, R, free, with_positions=True)
        self.index.update(zip(added.keys, added.positions))
        return Applied((a, b), z, P.astype(nxt.dtype), added, removed, int(self.weight[P].sum(dtype=np.int64)))

    def unmerge(self, a: int, b: int, z: int, P: np.ndarray, width: int) -> tuple[list[int], Grouped]:
        """Exactly undo the merge of (a, b) into z at positions P, which must be the newest merge
        still in effect; `width` is the units of token a. Returns the keys of the pairs the merge
        had created (all gone now) and the pairs it had destroyed (back now)."""
        if len(P) <= SMALL:
            return self._unmerge_few(a, b, z, P.tolist(), width)
        ids, nxt, prv = self.ids, self.next, self.prev
        P = P.astype(np.intp)
        Q = P + width
        R, free = self._right_of(P, Q, after=True)
        added = self._created(z, P, R, free, with_positions=False).keys
        ids[P] = a
        ids[Q] = b
        nxt[P] = Q  # nxt[Q] still points to R: a hole is never relinked
        prv[R] = Q
        removed = self._around(a, b, P, Q, R, free, with_positions=True)
        self._reindex(a, b, P, Q, added, removed)
        return added, removed

    def _reindex(self, a, b, P, Q, added: list[int], removed: Grouped) -> None:
        index = self.index
        for key in added:
            index.pop(key, None)
        for key, where in zip(removed.keys, removed.positions):
            old = index.get(key)
            if old is None:
                index[key] = where
            elif isinstance(old, list) and isinstance(where, list):
                index[key] = old + where
            else:
                index[key] = np.concatenate((np.asarray(old, dtype=self.next.dtype), where))
        if len(P):  # where (a, b) stood: P, and in a run of a == b also each Q
            if a == b:
                P = sorted(P + Q) if isinstance(P, list) else np.union1d(P, Q)
            index[pair_keys(a, b)] = P if isinstance(P, list) else P.astype(self.next.dtype, copy=False)

    def _right_of(self, P: np.ndarray, Q: np.ndarray, after: bool = False):
        """The token right of each occurrence, and whether it is free: there, and not the left
        token of another occurrence (then the two occurrences' new pair is counted once, from
        the left side of the second). `after`: the links as the merge left them."""
        R = (self.next[P] if after else self.next[Q]).astype(np.intp)
        mark = self._mark
        mark[P] = True
        free = (R != self.size) & ~mark[R]
        mark[P] = False
        return R, free

    def _around(self, a, b, P, Q, R, free, with_positions: bool) -> Grouped:
        """The pairs occurrences at P, Q have around them before the merge: (x, a) on the left,
        (b, y) on the right, without (a, b) itself ("aaaa": the (a, a) between two merges)."""
        ids, end = self.ids, self.size
        L = self.prev[P].astype(np.intp)
        left_at = L[L != end]
        keys = np.concatenate((key_array(ids[left_at], a), key_array(b, ids[R[free]])))
        at = np.concatenate((left_at, Q[free])).astype(self.next.dtype)
        keep = keys != pair_keys(a, b)
        return Grouped.of(keys[keep], at[keep], self.weight, with_positions=with_positions)

    def _created(self, z, P, R, free, with_positions: bool) -> Grouped:
        """The pairs holding z after the merge: (x, z) on the left, (z, y) on free right sides."""
        ids, end = self.ids, self.size
        new_left = self.prev[P].astype(np.intp)
        new_left = new_left[new_left != end]
        keys = np.concatenate((key_array(ids[new_left], z), key_array(z, ids[R[free]])))
        at = np.concatenate((new_left, P[free])).astype(self.next.dtype)
        return Grouped.of(keys, at, self.weight, with_positions=with_positions)

    # -- the same for a few positions, in Python --------------------------------------------
    # The same cells read and written in the same order as above, one position at a time. Pairs
    # are gathered in dicts (key -> [count, leftmost, positions]): nothing downstream needs them
    # sorted, only grouped.
    def _merge_few(self, a: int, b: int, z: int, candidates) -> Applied:
        ids, nxt, prv, weight = self._cells
        P: list[int] = []
        Q: list[int] = []
        R: list[int] = []
        last = -1
        for p in sorted(set(candidates.tolist() if isinstance(candidates, np.ndarray) else candidates)):
            if ids[p] == a and p != last:  # p == last: the right token of a == b just merged
                q = nxt[p]
                if ids[q] == b:
                    P.append(p)
                    Q.append(q)
                    R.append(nxt[q])
                    last = q
        free = self._free_few(P, R)
        lost = self._around_few(a, b, P, Q, R, free, False)
        replacements = 0
        for p, q, r in zip(P, Q, R):
            ids[p] = z
            ids[q] = -1
            nxt[p] = r
            prv[r] = p
            replacements += weight[p]
        made = self._created_few(z, P, R, free)
        added = Grouped(list(made), [e[0] for e in made.values()], [e[1] for e in made.values()],
                        [e[2] for e in made.values()])
        self.index.update(zip(added.keys, added.positions))
        removed = Grouped(list(lost), list(lost.values()), [])
        return Applied((a, b), z, np.array(P, dtype=self.next.dtype), added, removed, replacements)

    def _unmerge_few(self, a: int, b: int, z: int, P: list[int], width: int) -> tuple[list[int], Grouped]:
        ids, nxt, prv, _ = self._cells
        Q = [p + width for p in P]
        R = [nxt[p] for p in P]
        free = self._free_few(P, R)
        added = list(self._created_few(z, P, R, free))
        for p, q, r in zip(P, Q, R):
            ids[p] = a
            ids[q] = b
            nxt[p] = q
            prv[r] = q
        lost = self._around_few(a, b, P, Q, R, free, True)
        removed = Grouped(list(lost), [e[0] for e in lost.values()], [e[1] for e in lost.values()],
                          [e[2] for e in lost.values()])
        self._reindex(a, b, P, Q, added, removed)
        return added, removed

    def _free_few(self, P: list[int], R: list[int]) -> list[bool]:
        end = self.size
        taken = set(P) if len(P) > 1 else ()
        return [r != end and r not in taken for r in R]

    def _around_few(self, a, b, P, Q, R, free, full: bool) -> dict:
        """The pairs around the occurrences before the merge, as `_around`: key -> count, or
        with `full` key -> [count, leftmost, positions]."""
        ids, _, prv, weight = self._cells
        end, ab = self.size, pair_keys(a, b)
        sides = [((ids[left] << 32) | a, left) for left in map(prv.__getitem__, P) if left != end]
        sides += [((b << 32) | ids[r], q) for q, r, f in zip(Q, R, free) if f]
        found: dict = {}
        get = found.get
        for key, at in sides:
            if key == ab:
                continue
            if not full:
                found[key] = get(key, 0) + weight[at]
                continue
            e = get(key)
            if e is None:
                found[key] = [weight[at], at, [at]]
            else:
                e[0] += weight[at]
                if at < e[1]:
                    e[1] = at
                e[2].append(at)
        return found

    def _created_few(self, z, P, R, free) -> dict:
        """key -> [count, leftmost, positions] of the pairs holding z (positions ascend, so the
        first is the leftmost; (x, z) and (z, y) never share a key, since y is never z)."""
        ids, _, prv, weight = self._cells
        end = self.size
        made: dict = {}
        get = made.get
        for p in P:
            left = prv[p]
            if left != end:
                key = (ids[left] << 32) | z
                e = get(key)
                if e is None:
                    made[key] = [weight[left], left, [left]]
                else:
                    e[0] += weight[left]
                    e[2].append(left)
        for p, r, f in zip(P, R, free):
            if f:
                key = (z << 32) | ids[r]
                e = get(key)
                if e is None:
                    made[key] = [weight[p], p, [p]]
                else:
                    e[0] += weight[p]
                    e[2].append(p)
        return made


def _pack(index: dict, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An index as three arrays: keys, sizes, positions end to end. The entries are joined as
    bytes (a third of np.concatenate's time over 170k small arrays), the few lists made arrays
    first; an array of another width makes the total come out wrong, and numpy joins them."""
    keys = np.fromiter(index, dtype=np.int64, count=len(index))
    parts = list(index.values())
    sizes = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    if not parts:
        return keys, sizes, EMPTY.astype(dtype)
    for i in [i for i, part in enumerate(parts) if type(part) is list]:
        parts[i] = np.array(parts[i], dtype=dtype)
    try:
        joined = np.frombuffer(bytearray().join(parts), dtype=dtype)  # writable, as the index's arrays are
    except (BufferError, ValueError):  # not contiguous, or not a whole number of items
        joined = None
    if joined is None or len(joined) != int(sizes.sum()):
        joined = np.concatenate(parts, dtype=dtype, casting="unsafe")
    return keys, sizes, joined


def _unpack(keys: np.ndarray, sizes: np.ndarray, positions: np.ndarray) -> dict:
    """The index back from `_pack`, as views of `positions`, made one size at a time (a third
    less time than a view per pair from a list of bounds: 170k pairs on multi-10M at 5k merges).
    Lists for the small entries took less time still, but as 130k objects the cyclic collector
    tracks, they tripled it with the collector on and left it a full collection to make later.
    Entry order does not matter to the index."""
    starts = np.cumsum(sizes) - sizes
    order = np.argsort(sizes, kind="stable")
    ordered = sizes[order]
    index: dict = {}
    for group in np.split(order, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1):
        if len(group):
            n = int(sizes[group[0]])
            index.update(zip(keys[group].tolist(), [positions[i : i + n] for i in starts[group].tolist()]))
    return index


def sorted_distinct(at: np.ndarray) -> np.ndarray:
    """np.unique, without its fixed cost: entries repeat only after an undo put some back."""
    at = np.sort(at)
    if len(at) > 1:
        fresh = at[1:] != at[:-1]
        if not fresh.all():
            at = at[np.concatenate(([True], fresh))]
    return at


def _leftmost_of_runs(P: np.ndarray, Q: np.ndarray, nxt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In a run of k equal tokens the pair stands k-1 times; merging left to right takes the
    1st, 3rd, 5th... of them. P is sorted, so a run is consecutive entries linked by `nxt`."""
    linked = np.concatenate(([False], nxt[P[:-1]] == P[1:]))
    index = np.arange(len(P))
    run_start = np.maximum.accumulate(np.where(linked, 0, index))
    take = (index - run_start) % 2 == 0
    return P[take], Q[take]
