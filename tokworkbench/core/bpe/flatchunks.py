"""The distinct chunks as one flat, linked array with a pair -> positions index; merges run in numpy.

Every base unit of every distinct chunk has a fixed position (chunks laid end to end in order of
first appearance), and a token is named by the position of its first unit. Comparing positions
therefore compares (chunk, offset), which is the `first` tie-break's key. A merge writes the new
id over the left token, punches a hole where the right one stood and relinks its neighbours.
Nothing moves, so an undo writes the same cells back.

A step costs a few dozen numpy calls over the pair's occurrences, not a Python step per
occurrence. On multilingual text the Python loop over occurrences was 80% of training time:
long CJK chunks hold many occurrences of the early pairs.
"""

from typing import NamedTuple

import numpy as np

Pair = tuple[int, int]
EMPTY = np.zeros(0, dtype=np.int64)


def pair_keys(left, right):
    """One integer per pair (ids stay below 2**31): pairs sort and group as numbers, and as
    dictionary keys they hash faster and cost the garbage collector nothing, unlike tuples."""
    return (left << 32) | right


def key_pair(key: int) -> Pair:
    return key >> 32, key & 0xFFFFFFFF


class Grouped(NamedTuple):
    """Distinct pairs (as sorted keys), each with its positions, weighted count and leftmost
    position, as arrays: a step's undo record keeps two of these for the whole session."""

    keys: np.ndarray
    starts: np.ndarray  # where each pair's run of positions begins in `at`
    at: np.ndarray
    counts: np.ndarray
    leftmost: np.ndarray

    @staticmethod
    def of(keys: np.ndarray, at: np.ndarray, weight: np.ndarray, order: np.ndarray | None = None) -> "Grouped":
        """`order`, if given, must sort `keys` stably (a caller may know a cheaper way)."""
        if len(keys) == 0:
            return Grouped(EMPTY, EMPTY, EMPTY, EMPTY, EMPTY)
        if order is None:
            order = np.argsort(keys, kind="stable")
        keys, at = keys[order], at[order]
        starts = np.concatenate(([0], np.flatnonzero(keys[1:] != keys[:-1]) + 1))
        return Grouped(keys[starts], starts, at, np.add.reduceat(weight[at], starts),
                       np.minimum.reduceat(at, starts))

    def pair_keys(self) -> list[int]:
        return self.keys.tolist()

    def positions(self) -> list[np.ndarray]:
        at, bounds = self.at, self.starts.tolist()
        bounds.append(len(at))
        return [at[i:j] for i, j in zip(bounds, bounds[1:])]  # np.split costs 5x more per piece


class Applied(NamedTuple):
    """What one merge changed: enough to report its counts and to undo it exactly."""

    pair: Pair
    new_id: int
    positions: np.ndarray  # where the new token stands: the left token of each occurrence
    holes: np.ndarray  # where the right token stood
    candidates: np.ndarray  # the pair's index entry before the merge, put back by undo
    added: Grouped  # pairs the merge created (all hold the new id)
    removed: Grouped  # pairs it destroyed, other than the merged pair itself
    replacements: int  # weighted


class PackedApplied(NamedTuple):
    """An `Applied` as one array: what the trainer keeps for undo. Thousands of steps' records
    pickle (to carry a run back from the training process) as thousands of arrays, not
    thirteen times as many: 3 s to pickle and 2 s to load at 32k merges before this."""

    pair: Pair
    new_id: int
    replacements: int
    sizes: tuple[int, ...]
    data: np.ndarray

    @staticmethod
    def of(applied: Applied) -> "PackedApplied":
        parts = (applied.positions, applied.holes, applied.candidates, *applied.added, *applied.removed)
        return PackedApplied(applied.pair, applied.new_id, applied.replacements, tuple(map(len, parts)),
                             np.concatenate(parts))

    @staticmethod
    def join(records: list["PackedApplied"]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Many records as three arrays, for carrying a whole run between processes."""
        head = np.array([(*r.pair, r.new_id, r.replacements) for r in records], dtype=np.int64).reshape(-1, 4)
        sizes = np.array([r.sizes for r in records], dtype=np.int64).reshape(-1, 13)
        data = np.concatenate([r.data for r in records]) if records else EMPTY
        return head, sizes, data

    @staticmethod
    def split(head: np.ndarray, sizes: np.ndarray, data: np.ndarray) -> list["PackedApplied"]:
        bounds = np.concatenate(([0], np.cumsum(sizes.sum(axis=1)))).tolist()
        return [PackedApplied((a, b), z, n, tuple(sz), data[i:j])
                for (a, b, z, n), sz, i, j in zip(head.tolist(), sizes.tolist(), bounds, bounds[1:])]

    def unpack(self) -> Applied:
        bounds = np.cumsum((0,) + self.sizes).tolist()
        p = [self.data[i:j] for i, j in zip(bounds, bounds[1:])]
        return Applied(self.pair, self.new_id, p[0], p[1], p[2], Grouped(*p[3:8]), Grouped(*p[8:13]),
                       self.replacements)


class FlatChunks:
    """Token ids of all distinct chunks, their links, and where each adjacent pair occurs.

    The index may keep positions where a pair no longer stands (a superset is enough to find a
    pair's occurrences; `merge` checks them), never miss one where it does. Its values are bare
    arrays (an undo that puts positions back concatenates).
    """

    def __init__(self, units: np.ndarray, lengths: np.ndarray, weights: np.ndarray):
        size = int(lengths.sum())
        self.size = size  # also the position of the sentinel "no token here"
        self.starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        self.ids = np.empty(size + 1, dtype=np.int64)
        self.ids[:size] = units
        self.ids[size] = -1  # holes hold -1 too, so no pair test ever matches them
        positions = np.arange(size + 1, dtype=np.int64)
        filled = lengths > 0
        self.next = positions + 1
        self.next[self.starts[1:][filled] - 1] = size
        self.next[size] = size
        self.prev = positions - 1
        self.prev[self.starts[:-1][filled]] = size
        self.weight = np.zeros(size + 1, dtype=np.int64)
        self.weight[:size] = np.repeat(weights, lengths)
        self._mark = np.zeros(size + 1, dtype=bool)
        self.index: dict[int, np.ndarray] = {}  # pair key -> positions

    def __getstate__(self):
        """The index travels as three arrays rather than one array per pair."""
        state = dict(self.__dict__)
        del state["_mark"]  # all False between merges
        keys = np.fromiter(self.index, dtype=np.int64, count=len(self.index))
        parts = list(self.index.values())
        state["index"] = (keys, np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)),
                          np.concatenate(parts) if parts else EMPTY)
        return state

    def __setstate__(self, state):
        keys, sizes, positions = state.pop("index")
        self.__dict__.update(state)
        self._mark = np.zeros(self.size + 1, dtype=bool)
        bounds = np.concatenate(([0], np.cumsum(sizes))).tolist()
        self.index = dict(zip(keys.tolist(), (positions[i:j] for i, j in zip(bounds, bounds[1:]))))

    def initial_pairs(self) -> Grouped:
        """Every adjacent pair with its weighted count and leftmost position; fills the index."""
        left = np.flatnonzero(self.next[: self.size] != self.size)
        a, b = self.ids[left], self.ids[left + 1]
        order = None
        if self.size and self.ids[: self.size].max() < 256:  # bytes: 16-bit keys sort by radix, 5x faster
            order = np.argsort((a * 256 + b).astype(np.uint16), kind="stable")
        grouped = Grouped.of(pair_keys(a, b), left, self.weight, order)
        self.index = dict(zip(grouped.pair_keys(), grouped.positions()))
        return grouped

    def tokens(self, chunk: int) -> list[int]:
        ids = self.ids[self.starts[chunk] : self.starts[chunk + 1]]
        return ids[ids >= 0].tolist()

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
        return (self.ids[at] == keys >> 32) & (self.ids[self.next[at]] == keys & 0xFFFFFFFF)

    def forget(self, key: int) -> None:
        """Drop a pair that no longer occurs anywhere from the index."""
        self.index.pop(key, None)

    def leftmost(self, key: int) -> int:
        """The smallest position where the pair stands (-1 if none); drops stale index entries."""
        at = self.index.get(key)
        if at is None:
            return -1
        at = sorted_distinct(at[self.standing(key, at)])
        self.index[key] = at
        return int(at[0]) if len(at) else -1

    def merge(self, a: int, b: int, z: int) -> Applied:
        """Replace (a, b) by z left to right without overlap ("aaa" with (a, a) gives [z, a])."""
        ids, nxt, prv, end = self.ids, self.next, self.prev, self.size
        ab = pair_keys(a, b)
        candidates = self.index.pop(ab, EMPTY)
        at = sorted_distinct(candidates)
        right = nxt[at]
        hit = (ids[at] == a) & (ids[right] == b)
        P, Q = at[hit], right[hit]
        if a == b and len(P) > 1:
            P, Q = _leftmost_of_runs(P, Q, nxt)
        R, L = nxt[Q], prv[P]
        self._mark[P] = True
        right_free = (R != end) & ~self._mark[R]  # a right neighbour that is not merged itself
        self._mark[P] = False

        # pairs destroyed: (x, a) left of each occurrence, (b, y) right of it (once each)
        has_left = L != end
        left_at = L[has_left]
        removed_keys = np.concatenate((pair_keys(ids[left_at], a), pair_keys(b, ids[R[right_free]])))
        removed_at = np.concatenate((left_at, Q[right_free]))
        keep = removed_keys != ab  # "aaaa": the (a, a) between two merges is the merged pair
        removed = Grouped.of(removed_keys[keep], removed_at[keep], self.weight)

        ids[P] = z
        ids[Q] = -1
        nxt[P] = R
        prv[R] = P  # prv[end] takes junk, never read

        new_left = prv[P]
        new_left = new_left[new_left != end]
        added_keys = np.concatenate((pair_keys(ids[new_left], z), pair_keys(z, ids[R[right_free]])))
        added_at = np.concatenate((new_left, P[right_free]))
        added = Grouped.of(added_keys, added_at, self.weight)
        self.index.update(zip(added.pair_keys(), added.positions()))
        return Applied((a, b), z, P, Q, candidates, added, removed, int(self.weight[P].sum()))

    def unmerge(self, applied: Applied) -> None:
        """Exactly undo `applied`, which must be the newest merge still in effect."""
        a, b = applied.pair
        P, Q = applied.positions, applied.holes
        R = self.next[P]
        self.ids[P] = a
        self.ids[Q] = b
        self.next[P] = Q  # next[Q] still points where it did: a hole is never relinked
        self.prev[R] = Q
        index = self.index
        for key in applied.added.pair_keys():
            index.pop(key, None)
        for key, where in zip(applied.removed.pair_keys(), applied.removed.positions()):
            old = index.get(key)
            index[key] = where if old is None else np.concatenate((old, where))
        if len(applied.candidates):
            index[pair_keys(a, b)] = applied.candidates


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
