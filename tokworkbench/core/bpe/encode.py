"""BPE on one chunk: apply the merges by rank (ours), or join the lowest-ranked bytes (tiktoken's).

Both rules repeat "find the lowest-ranked adjacent pair, join it". The plain loops below rescan
the whole chunk for every join, which is quadratic: one 5M-character chunk (a `--split none`
document, a long run of one letter) ran for minutes, and so did exporting or importing a model
with such a token. Long inputs go through `_Levels` instead, which is O(n log n).

`_Levels` keeps the chunk as a doubly linked list in arrays (a join writes the new id over the
left unit and unlinks the right one; nothing moves), the current rank of the pair starting at
each position in `cur`, and pending (rank, position) entries: a heap of ranks, each rank with
its positions. Entries are never removed when a join changes a pair; an entry counts only if
`cur` still holds its rank when its rank comes up (lazy invalidation). All positions of the
lowest rank are taken together, left to right without overlap, in numpy when there are many
and in a Python loop when there are few (a numpy call costs about as much as a Python step).

Taking a rank's positions together is what our rule does, and what tiktoken's does too as long
as no join makes a pair ranked below the one being joined: it would be joined first. That never
happens with a merge list in which each merge joins ids made before it (every loader and the
trainer guarantee this), and rarely with a ranks file. When it happens `_Levels` gives up and
the exact one-join-at-a-time version runs instead: the list loop for our rule, a per-position
heap for tiktoken's.
"""

import heapq

import numpy as np

from tokworkbench.core.bpe.flatchunks import sorted_distinct

# Below these lengths the plain loops win (measured: chunks of English under a `--split none`
# model, and runs of one byte; most chunks have fewer than 20 units).
_LEVELS_FROM = 192
# tiktoken's rule: the per-position heap beats the plain loop from 12 bytes; `_Levels` (whose
# pair lookups join bytes) beats it on text from about 8K, but on a token whose ranks are a
# chain of ever longer prefixes it takes twice as long, and a file's tokens stay below 64K
_HEAP_FROM = 12
_RUNS_CHECK_FROM = 1024
_BYTE_LEVELS_FROM = 1 << 16
_RUNS_MAX = 64  # a long input with fewer runs of one unit than this is joined run by run
_FEW = 24  # a rank with at most this many positions is joined in a Python loop, not in numpy


class _Fallback(Exception):
    """A join made a pair ranked no higher than the one being joined: do it one join at a time."""


def merge_ids(ids: list[int], rank_of, never: int, first_new: int, table=None) -> list[int]:
    """`ids` (base units) after the merges: all occurrences of the lowest-ranked pair are merged
    left to right at once, since a merge only makes pairs that contain its new id, whose ranks
    are all higher. `rank_of(a << 32 | b, never)` gives a pair's rank or `never`; merge r makes
    id `first_new + r`. `table`, a `MergeTable` of the same merges, lets long inputs look pairs
    up in numpy. Works in place on `ids` and returns it."""
    if len(ids) >= _LEVELS_FROM:
        ranker = _MergeRanks(rank_of, never, first_new, table)
        try:
            ids[:] = _join_long(np.array(ids, dtype=np.int64), ranker).tolist()
            return ids
        except _Fallback:
            pass  # a merge list out of order; the list loop below is the definition
    return _merge_short(ids, rank_of, never, first_new)


def _merge_short(ids: list[int], rank_of, never: int, first_new: int) -> list[int]:
    """The plain loop: quadratic, and fastest on short chunks. Pairs are looked up as one
    integer: no tuple to build and hash."""
    if len(ids) < 2:
        return ids
    pair_ranks = [rank_of(a << 32 | b, never) for a, b in zip(ids, ids[1:])]
    while True:
        r = min(pair_ranks)
        if r == never:
            return ids
        z = first_new + r
        i = pair_ranks.index(r)
        while True:
            ids[i : i + 2] = (z,)
            del pair_ranks[i]
            if i:
                pair_ranks[i - 1] = rank_of(ids[i - 1] << 32 | z, never)
            if i < len(pair_ranks):
                pair_ranks[i] = rank_of(z << 32 | ids[i + 1], never)
            elif not pair_ranks:
                return ids
            try:
                i = pair_ranks.index(r, i + 1)
            except ValueError:
                break


def lowest_rank_parts(ranks: dict[bytes, int], data: bytes) -> list[bytes]:
    """tiktoken's rule: repeatedly join the adjacent pair whose bytes have the lowest rank (the
    leftmost such pair on a tie). Only `ranks.get(bytes)` is used (a rank, or None)."""
    if len(data) >= _RUNS_CHECK_FROM:
        units = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
        runs = np.flatnonzero(units[1:] != units[:-1]) + 1
        if len(runs) < _RUNS_MAX or len(data) >= _BYTE_LEVELS_FROM:
            ranker = _ByteRanks(ranks)
            try:
                out = _join_runs(units, runs, ranker) if len(runs) < _RUNS_MAX else _Levels(units, ranker).run()
                return [ranker.tokens[t] for t in out.tolist()]
            except _Fallback:
                pass
    if len(data) >= _HEAP_FROM:
        return _lowest_rank_heap(ranks, data)
    parts = [bytes([b]) for b in data]
    while len(parts) > 1:
        best, where = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best):
                best, where = r, i
        if best is None:
            break
        parts[where : where + 2] = [parts[where] + parts[where + 1]]
    return parts


def _lowest_rank_heap(ranks: dict[bytes, int], data: bytes) -> list[bytes]:
    """tiktoken's rule one join at a time: a heap of (rank, position) over a linked list, where
    an entry counts only while `cur` still holds its rank. Ranks may come in any order here.
    A part is `data[i:nxt[i]]`: a pair is looked up as one slice, never built by joining."""
    data = bytes(data)
    n = len(data)
    get = ranks.get
    cur = [get(data[i : i + 2]) for i in range(n - 1)]
    cur.append(None)  # None: no pair here, or one without a rank
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap = [(r, i) for i, r in enumerate(cur) if r is not None]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        r, i = pop(heap)
        if cur[i] != r:
            continue
        j = nxt[i]
        k = nxt[i] = nxt[j]
        cur[j] = None
        rk = None
        if k < n:
            prv[k] = i
            rk = get(data[i : nxt[k]])
            if rk is not None:
                push(heap, (rk, i))
        cur[i] = rk
        p = prv[i]
        if p >= 0:
            rp = cur[p] = get(data[p:k])
            if rp is not None:
                push(heap, (rp, p))
    parts, i = [], 0
    while i < n:
        parts.append(data[i : nxt[i]])
        i = nxt[i]
    return parts


class _MergeRanks:
    """Pair ranks and new ids for our rule: merge r makes `first_new + r`."""

    strict = False

    def __init__(self, rank_of, never: int, first_new: int, table):
        self.get, self.never, self.first_new, self.table = rank_of, never, first_new, table

    def many(self, keys: np.ndarray) -> np.ndarray:
        if self.table is not None and len(keys) > _FEW:
            return self.table.rank(keys).astype(np.int64, copy=False)
        return _many(self.get, self.never, keys)

    def made(self, r: int) -> int:
        return self.first_new + r


class _ByteRanks:
    """Pair ranks and new ids for tiktoken's rule. Parts are numbered locally: bytes b is b,
    and each joined string gets the next number the first time a rank makes it. A pair's rank
    is that of its joined bytes, looked up once per distinct pair."""

    strict = True

    def __init__(self, ranks: dict[bytes, int]):
        self.ranks = ranks
        self.never = 1 << 62
        self.tokens: list[bytes] = [bytes([b]) for b in range(256)]
        self._made: dict[int, int] = {}  # rank -> local number of its bytes
        self._memo: dict[int, int] = {}  # pair key -> rank

    def get(self, key: int, _never=None) -> int:
        r = self._memo.get(key)
        if r is None:
            r = self._memo[key] = self._rank(self.tokens[key >> 32] + self.tokens[key & 0xFFFFFFFF])
        return r

    def _rank(self, data: bytes) -> int:
        r = self.ranks.get(data)
        if r is None:
            return self.never
        if not 0 <= r < self.never:
            raise _Fallback  # a rank this numbering cannot hold
        z = self._made.setdefault(r, len(self.tokens))
        if z == len(self.tokens):
            self.tokens.append(data)
        elif self.tokens[z] != data:
            raise _Fallback  # two strings share a rank: not one new part per rank
        return r

    def many(self, keys: np.ndarray) -> np.ndarray:
        return _many(self.get, self.never, keys)

    def made(self, r: int) -> int:
        return self._made[r]


def _many(get, never: int, keys: np.ndarray) -> np.ndarray:
    """Ranks of many pair keys: one lookup each, or up to a thousand, where finding the
    distinct keys first costs more than it saves."""
    if len(keys) <= 1024:
        return np.array([get(k, never) for k in keys.tolist()], dtype=np.int64)
    distinct, where = np.unique(keys, return_inverse=True)
    return np.array([get(k, never) for k in distinct.tolist()], dtype=np.int64)[where]


def _first_ranks(ranker, units: np.ndarray) -> np.ndarray:
    """Ranks of all adjacent pairs of base units. Over a small alphabet (bytes), through a
    table of the pairs that occur: one lookup per distinct pair and no sort."""
    side = int(units.max()) + 1
    if side * side > min(1 << 20, 16 * len(units)):  # the table would cost more than it saves
        return ranker.many((units[:-1] << 32) | units[1:])
    codes = units[:-1] * side + units[1:]
    table = np.full(side * side, ranker.never, dtype=np.int64)
    get, never = ranker.get, ranker.never
    for code in np.flatnonzero(np.bincount(codes, minlength=side * side)).tolist():
        a, b = divmod(code, side)
        table[code] = get(a << 32 | b, never)
    return table[codes]


def _join_long(units: np.ndarray, ranker) -> np.ndarray:
    runs = np.flatnonzero(units[1:] != units[:-1]) + 1
    if len(runs) < _RUNS_MAX:
        return _join_runs(units, runs, ranker)
    return _Levels(units, ranker).run()


def _join_runs(units: np.ndarray, starts: np.ndarray, ranker) -> np.ndarray:
    """Rank by rank over runs of one unit: "a" * 5_000_000 is one run [a, 5000000], and joining
    (a, a) makes it [z, 2500000]. Each rank costs a pass over the runs, not over the units.
    A run of c units holds the pair (u, u) c - 1 times; left to right, c // 2 of them join."""
    bounds = [0, *starts.tolist(), len(units)]
    ids = units[bounds[:-1]].tolist()
    counts = [j - i for i, j in zip(bounds, bounds[1:])]
    get, never = ranker.get, ranker.never
    while True:
        best, pair = never, None
        for i, u in enumerate(ids):
            for v in ((u,) if counts[i] > 1 else ()) + ((ids[i + 1],) if i + 1 < len(ids) else ()):
                r = get(u << 32 | v, never)
                if r < best:
                    best, pair = r, (u, v)
                elif r == best != never and pair != (u, v):
                    raise _Fallback  # two pairs share the lowest rank (two ways to one string)
        if pair is None:
            return np.repeat(np.array(ids, dtype=np.int64), counts)
        r, (x, y) = best, pair
        z = ranker.made(r)
        out: list[list[int]] = []
        met = []  # what each join meets on its right before this rank's later joins
        last = len(ids) - 1
        for i, (u, c) in enumerate(zip(ids, counts)):
            if x == y:
                if u != x or c < 2:
                    out.append([u, c])
                    continue
                out.append([z, c // 2])
                if c % 2:
                    out.append([x, 1])
                if c > 2:
                    met.append(x)
                if c % 2 == 0 and i < last:
                    met.append(ids[i + 1])
                continue
            joined_left = i > 0 and ids[i - 1] == x and u == y
            joins = i < last and u == x and ids[i + 1] == y
            c -= joined_left + joins
            if c:
                out.append([u, c])
            if joins:
                out.append([z, 1])
                if counts[i + 1] > 1:
                    met.append(y)
                elif i + 2 <= last:
                    met.append(ids[i + 2])
        ids, counts = [], []
        for u, c in out:  # neighbouring runs of one id become one
            if ids and ids[-1] == u:
                counts[-1] += c
            else:
                ids.append(u)
                counts.append(c)
        # a join may make no pair ranked at or below its own, now or on the way (see _Levels)
        pairs = [z << 32 | v for v in met]
        for i, u in enumerate(ids):
            if u == z and counts[i] > 1:
                pairs.append(z << 32 | z)
            if i < len(ids) - 1 and z in (u, ids[i + 1]):
                pairs.append(u << 32 | ids[i + 1])
        if any(get(key, never) <= r for key in pairs):
            raise _Fallback


class _Levels:
    """The chunk as a linked list in arrays, joined rank by rank (see the module docstring).

    Pending entries come two ways: a rank with many positions keeps them as arrays (`bulk`,
    under the heap of ranks `bulk_ranks`), and a position added on its own is one integer
    `rank << 32 | position` in `heap`, which therefore pops by rank, then leftmost first.
    """

    def __init__(self, units: np.ndarray, ranker):
        n = len(units)
        self.ranker, self.n = ranker, n
        self.never = never = ranker.never
        self.ids = np.empty(n + 1, dtype=np.int64)  # n: the "no unit" sentinel; dead units hold -1
        self.ids[:n] = units
        self.ids[n] = -1
        self.next = np.arange(1, n + 2, dtype=np.int64)
        self.next[n - 1 :] = n
        self.prev = np.arange(-1, n, dtype=np.int64)
        self.prev[0] = n
        self.cur = np.full(n + 1, never, dtype=np.int64)  # rank of the pair starting here
        self.cur[: n - 1] = _first_ranks(ranker, units)
        # the same arrays for one-at-a-time access: indexing a memoryview gives a Python int
        self._views = tuple(memoryview(a) for a in (self.ids, self.next, self.prev, self.cur))
        self.heap: list[int] = []
        self.bulk: dict[int, list[np.ndarray]] = {}
        self.bulk_ranks: list[int] = []
        at = np.flatnonzero(self.cur != never)
        self._add_many(at, self.cur[at])

    def run(self) -> np.ndarray:
        """The ids left standing, in order."""
        heap, bulk, bulk_ranks, pop = self.heap, self.bulk, self.bulk_ranks, heapq.heappop
        join_one = self._join_one
        while heap or bulk_ranks:
            if heap and (not bulk_ranks or heap[0] >> 32 < bulk_ranks[0]):
                entry = pop(heap)
                r = entry >> 32
                join_one(r, self.ranker.made(r), entry & 0xFFFFFFFF)
                continue
            r = pop(bulk_ranks)
            parts = bulk.pop(r)  # more than one only when two pairs make one string (tiktoken's)
            single = []
            while heap and heap[0] >> 32 == r:
                single.append(pop(heap) & 0xFFFFFFFF)
            if single:
                parts.append(np.array(single, dtype=np.int64))
            at = parts[0] if len(parts) == 1 else sorted_distinct(np.concatenate(parts))
            self._join_many(r, at)
        ids = self.ids[: self.n]
        return ids[ids >= 0]

    def _add_many(self, at: np.ndarray, ranks: np.ndarray) -> None:
        """Pending entries for positions `at` (ascending) with these ranks (none `never`)."""
        if len(at) <= _FEW:
            push, heap = heapq.heappush, self.heap
            for entry in ((ranks << 32) | at).tolist():
                push(heap, entry)
            return
        order = np.argsort(ranks, kind="stable")  # keeps each rank's positions ascending
        at, ranks = at[order], ranks[order]
        starts = np.flatnonzero(np.concatenate(([True], ranks[1:] != ranks[:-1])))
        sizes = np.diff(np.append(starts, len(at)))
        few = np.repeat(sizes <= _FEW, sizes)
        if few.any():
            push, heap = heapq.heappush, self.heap
            for entry in ((ranks[few] << 32) | at[few]).tolist():
                push(heap, entry)
            starts = starts[sizes > _FEW]
        bounds = starts.tolist()
        bulk, bulk_ranks = self.bulk, self.bulk_ranks
        for r, i, size in zip(ranks[starts].tolist(), bounds, sizes[sizes > _FEW].tolist()):
            pending = bulk.get(r)
            if pending is None:
                bulk[r] = [at[i : i + size]]
                heapq.heappush(bulk_ranks, r)
            else:
                pending.append(at[i : i + size])

    def _join_one(self, r: int, z: int, p: int) -> None:
        """Join rank r at position p if it still stands there, as the plain loop would."""
        ids, nxt, prv, cur = self._views
        if cur[p] != r:
            return  # gone, or the pair there changed
        get, end, never, heap = self.ranker.get, self.n, self.never, self.heap
        q = nxt[p]
        ids[p] = z
        ids[q] = -1
        cur[q] = never
        k = nxt[q]
        nxt[p] = k
        rk = never
        if k != end:
            prv[k] = p
            rk = get(z << 32 | ids[k], never)
            if rk <= r:
                raise _Fallback
            if rk != never:
                heapq.heappush(heap, rk << 32 | p)
        cur[p] = rk
        left = prv[p]
        if left != end:
            rl = cur[left] = get(ids[left] << 32 | z, never)
            if rl <= r:
                raise _Fallback
            if rl != never:
                heapq.heappush(heap, rl << 32 | left)

    def _join_many(self, r: int, at: np.ndarray) -> None:
        """Join rank r at these positions (ascending) in numpy. Entries that no longer hold are
        dropped; in a run of equal pairs ("aaaa" with (a, a)) every other one is joined, from
        the left, as joining one at a time would."""
        ids, nxt, prv, cur, end, never = self.ids, self.next, self.prev, self.cur, self.n, self.never
        ranker = self.ranker
        at = at[cur[at] == r]
        if not len(at):
            return
        Q = nxt[at]
        run = len(at) > 1 and bool((Q[:-1] == at[1:]).any())
        if run:
            at, Q = _every_other_of_runs(at, Q)
        R = nxt[Q]
        z = ranker.made(r)
        has_right = R != end
        # Joined one at a time, each join first meets its right neighbour as it was before
        # this rank's joins; that pair must not outrank this one either.
        if ranker.strict:
            if (ranker.many((z << 32) | ids[R[has_right]]) <= r).any():
                raise _Fallback
        elif run and ranker.get(z << 32 | int(ids[at[0]]), never) <= r:
            raise _Fallback
        ids[at] = z
        ids[Q] = -1
        cur[Q] = never
        cur[at] = never
        nxt[at] = R
        prv[R] = at  # prv[end] takes junk, never read
        # the pairs that changed: left of each join and right of it, ascending, once each
        L = prv[at]
        changed = np.empty(2 * len(at), dtype=np.int64)
        changed[0::2] = L
        changed[1::2] = at
        keep = np.empty(2 * len(at), dtype=bool)
        keep[0::2] = L != end
        keep[2::2] &= L[1:] != at[:-1]  # two joins side by side share that pair
        keep[1::2] = has_right
        changed = changed[keep]
        ranks = ranker.many((ids[changed] << 32) | ids[nxt[changed]])
        if len(ranks) and ranks.min() <= r:
            raise _Fallback
        cur[changed] = ranks
        live = ranks != never
        self._add_many(changed[live], ranks[live])


def _every_other_of_runs(P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In a run of k equal pairs side by side, joining left to right takes the 1st, 3rd, ..."""
    linked = np.concatenate(([False], Q[:-1] == P[1:]))
    index = np.arange(len(P))
    take = (index - np.maximum.accumulate(np.where(linked, 0, index))) % 2 == 0
    return P[take], Q[take]


def merge_by_pairs(ids: list[int], table: dict[int, tuple[int, int]]) -> list[int]:
    """HF's rule (tokenizers' `Word::merge_all`): join the adjacent pair of lowest priority,
    leftmost on a tie, where `table[a << 32 | b]` is (priority, made id). Unlike `merge_ids`, a
    pair's parts may be made by lower-priority entries and two pairs may make the same id (HF
    files converted from tiktoken ranks hold every split of a token). A heap of (priority,
    position, made) over a linked list; an entry counts only while the pair at its position
    still makes its id, HF's own check (the pair's span is then the same, so it is the same pair)."""
    n = len(ids)
    if n < 2:
        return ids
    get = table.get
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        m = get(ids[i] << 32 | ids[i + 1])
        if m is not None:
            heap.append((m[0], i, m[1]))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        _, i, z = pop(heap)
        j = nxt[i]
        if not alive[i] or j >= n:
            continue
        m = get(ids[i] << 32 | ids[j])
        if m is None or m[1] != z:
            continue
        ids[i] = z
        alive[j] = False
        k = nxt[i] = nxt[j]
        if k < n:
            prv[k] = i
        p = prv[i]
        if p >= 0:
            m = get(ids[p] << 32 | z)
            if m is not None:
                push(heap, (m[0], p, m[1]))
        if k < n:
            m = get(z << 32 | ids[k])
            if m is not None:
                push(heap, (m[0], i, m[1]))
    return [t for t, keep in zip(ids, alive) if keep]
