"""Byte-pair encoding of many chunks at once, in numpy rounds.

Encoding a large text meets tens of thousands of distinct chunks for the first time, and the
per-chunk Python merge loop cost as much as the regex split itself. Here every unfinished chunk
advances one merge per round: each finds its lowest-ranked pair and merges all its occurrences
left to right without overlap, which is exactly what `Tokenizer._bpe` does one chunk at a time.
A chunk leaves as soon as no pair of it has a rank, so a round costs only the chunks still open.

Rounds run until the chunk with the most rank levels is done, and each costs a pass over what
is still open, so one long chunk (a 1 MB run of letters) would take thousands of rounds over
itself. Long chunks are encoded on their own by `merge_ids`, which is O(n log n).
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .encode import merge_ids

_ALONE_FROM = 512  # bytes: a chunk this long is encoded on its own (rounds would run on for it)


_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of key * this


@dataclass(frozen=True)
class MergeTable:
    """Merges as sorted int64 pair keys (a << 32 | b) with their ranks, plus a dense rank table
    for pairs of small ids (most pairs a text meets are between bytes and early tokens) and an
    open-addressing hash table for the rest. A binary search over 100K keys cost most of a
    cold encode with the real vocabularies; the hash finds a pair in one or two probes."""

    keys: np.ndarray
    ranks: np.ndarray
    base_size: int
    dense: np.ndarray  # dense[a * side + b] = rank of (a, b), or `never`
    side: int

    never: int  # the rank of a pair that is not a merge: the number of merges

    @staticmethod
    def of(merges, base_size: int, side: int = 1024) -> "MergeTable":
        """A pair listed twice has the rank of its last listing, as in a dict built from the
        list (`Tokenizer._ranks`), which the per-chunk path looks pairs up in."""
        pairs = np.array(merges, dtype=np.int64).reshape(-1, 2)
        keys = (pairs[:, 0] << 32) | pairs[:, 1]
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        order = order[np.append(ordered[1:] != ordered[:-1], True)[: len(order)]]
        dense = np.full(side * side, len(pairs), dtype=np.int32)
        small = order[(pairs[order, 0] < side) & (pairs[order, 1] < side)]
        dense[pairs[small, 0] * side + pairs[small, 1]] = small
        return MergeTable(keys[order], order.astype(np.int64), base_size, dense, side, len(pairs))

    @cached_property
    def rank_of(self):
        """`rank_of(key, default)`, one pair at a time (a dict's `get`)."""
        return dict(zip(self.keys.tolist(), self.ranks.tolist())).get

    @cached_property
    def _hash(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Slots holding each key (-1: empty) and its rank, at most a quarter full; a key sits at
        its hash or the first free slot after it (linear probing)."""
        bits = max(4, (4 * len(self.keys)).bit_length())
        slot_keys = np.full(1 << bits, -1, dtype=np.int64)
        slot_ranks = np.zeros(1 << bits, dtype=np.int64)
        mask = (1 << bits) - 1
        todo = np.arange(len(self.keys))
        at = _slot(self.keys, bits)
        while len(todo):
            free = slot_keys[at] == -1
            # of the keys that want one free slot, the first takes it; the rest probe on
            _, first = np.unique(at[free], return_index=True)
            take = np.flatnonzero(free)[first]
            slot_keys[at[take]] = self.keys[todo[take]]
            slot_ranks[at[take]] = self.ranks[todo[take]]
            left = np.ones(len(todo), dtype=bool)
            left[take] = False
            todo, at = todo[left], (at[left] + 1) & mask  # their slots are taken now
        return slot_keys, slot_ranks, bits

    def _hashed(self, keys: np.ndarray) -> np.ndarray:
        slot_keys, slot_ranks, bits = self._hash
        mask = (1 << bits) - 1
        at = _slot(keys, bits)
        found = slot_keys[at]
        out = np.where(found == keys, slot_ranks[at], self.never)
        todo = np.flatnonzero((found != keys) & (found != -1))
        at = at[todo]
        while len(todo):  # collisions: probe the next slots
            at = (at + 1) & mask
            found = slot_keys[at]
            hit = found == keys[todo]
            out[todo[hit]] = slot_ranks[at[hit]]
            more = ~hit & (found != -1)
            todo, at = todo[more], at[more]
        return out

    def rank(self, keys: np.ndarray) -> np.ndarray:
        if not len(self.keys):
            return np.full(len(keys), 0, dtype=np.int64)
        a, b = keys >> 32, keys & 0xFFFFFFFF
        small = (a < self.side) & (b < self.side)
        if small.all():
            return self.dense[a * self.side + b]
        out = np.empty(len(keys), dtype=np.int64)
        out[small] = self.dense[a[small] * self.side + b[small]]
        out[~small] = self._hashed(keys[~small])
        return out


def _slot(keys: np.ndarray, bits: int) -> np.ndarray:
    return ((keys.astype(np.uint64) * _HASH_MULT) >> np.uint64(64 - bits)).astype(np.int64)


def _fresh(ids: np.ndarray, sizes: np.ndarray, table: MergeTable, rank=None, last=None):
    """Arrays for `_rounds` over units that are all alive, chunk after chunk of these sizes:
    ranks (looked up unless given), last-unit flags, links, chunk starts."""
    n = len(ids)
    starts = np.cumsum(sizes) - sizes
    if last is None:
        last = np.zeros(n, dtype=bool)
        last[np.cumsum(sizes) - 1] = True
    if rank is None:
        rank = np.full(n, table.never, dtype=np.int32)
        pos = np.flatnonzero(~last)
        rank[pos] = table.rank((ids[pos].astype(np.int64) << 32) | ids[pos + 1])
    nxt = np.arange(1, n + 1, dtype=np.int32)
    prv = np.arange(-1, n - 1, dtype=np.int32)
    prv[starts] = -1
    return ids, rank, last, nxt, prv, starts


def bpe_many(pieces: list[bytes], table: MergeTable, outside: np.ndarray | None = None) -> list[list[int]]:
    """Token ids of each byte string, as `Tokenizer._bpe` would give them; mapped through
    `outside` (inside id -> outside id) when given, in one numpy pass rather than per chunk."""
    flat, lens = bpe_flat(pieces, table, outside)
    flat = flat.tolist()
    bounds = [0, *np.cumsum(lens).tolist()]
    return [flat[i:j] for i, j in zip(bounds, bounds[1:])]


def bpe_flat(pieces: list[bytes], table: MergeTable, outside: np.ndarray | None = None):
    """`bpe_many` as one flat array of ids and the number of ids of each piece."""
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    alone = np.flatnonzero(lengths >= _ALONE_FROM).tolist()
    short, short_lengths = pieces, lengths
    if alone:
        short, short_lengths = list(pieces), lengths.copy()
        short_lengths[alone] = 0
        for i in alone:
            short[i] = b""
    flat, bounds = _rounds(short, table, short_lengths)
    lens = np.diff(np.asarray(bounds, dtype=np.int64))
    if alone:
        made = [merge_ids(list(pieces[i]), table.rank_of, table.never, table.base_size, table) for i in alone]
        at = np.repeat([bounds[i] for i in alone], [len(m) for m in made])
        flat = np.insert(flat, at, np.array([t for m in made for t in m], dtype=np.int64))
        lens[alone] = [len(m) for m in made]
    return (flat if outside is None else outside[flat]), lens


def _rounds(pieces: list[bytes], table: MergeTable, lengths: np.ndarray):
    """All chunks side by side in flat arrays; `rank[i]` is the rank of the pair that unit i
    starts (`never` at a chunk's last unit, flagged in `last`, and at joined-away units, whose
    id is -1). A round takes each open chunk's lowest rank, joins it everywhere in that chunk,
    and looks up only the pairs the joins changed (two a join). Units joined away stay where
    they are, skipped through `nxt`/`prv` links, so a round costs four passes over the arrays
    and work per join; the arrays are compacted (finished chunks leave, dead units go) only
    when more than half of them is dead or finished. Ids and ranks are int32."""
    count = len(pieces)
    never, base = table.never, table.base_size
    ids = np.frombuffer(b"".join(pieces), dtype=np.uint8).astype(np.int32)
    chunk = np.flatnonzero(lengths > 0)  # the piece each chunk in the arrays is
    sizes = lengths[chunk]
    out_ids, out_owner = [], []
    ids, rank, last, nxt, prv, starts = _fresh(ids, sizes, table)
    idle = 0  # units dead or in finished chunks
    while len(ids):
        best = np.minimum.reduceat(rank, starts)
        done = best == never
        if idle + int(sizes[done].sum()) > len(ids) // 2 or done.all():
            alive = ids >= 0
            leaving = np.repeat(done, sizes)
            out = leaving & alive
            out_ids.append(ids[out])
            out_owner.append(np.repeat(chunk[done], np.add.reduceat(alive, starts)[done]))
            stay = ~leaving & alive
            sizes = np.add.reduceat(alive, starts)[~done]
            chunk, best = chunk[~done], best[~done]
            ids, rank, last, nxt, prv, starts = _fresh(ids[stay], sizes, table, rank[stay], last[stay])
            idle = 0
            if not len(ids):
                break
            done = np.zeros(len(sizes), dtype=bool)
        best[done] = -1  # no rank is -1: nothing of a finished chunk is chosen
        at = np.flatnonzero(rank == np.repeat(best, sizes))
        right = nxt[at]
        # (a, a) in a run "aaa": take the 1st, 3rd... pair from the left, as a sequential merge does
        linked = np.concatenate(([False], at[1:] == right[:-1]))
        if linked.any():
            index = np.arange(len(at))
            take = (index - np.maximum.accumulate(np.where(linked, 0, index))) % 2 == 0
            at, right = at[take], right[take]
        ids[at] = base + rank[at]
        ids[right] = -1
        rank[right] = never
        last[at] = last[right]  # the joined unit ends its chunk if the right one did
        beyond = nxt[right]
        nxt[at] = beyond
        inner = ~last[at]
        prv[beyond[inner]] = at[inner]
        idle += len(at)
        # the pairs that changed: each joined unit's own, and the one before it in its chunk
        before = prv[at]
        changed = np.concatenate((before[before >= 0], at))
        rank[changed] = never
        pos = changed[~last[changed]]
        rank[pos] = table.rank((ids[pos].astype(np.int64) << 32) | ids[nxt[pos]])
    if not out_ids:
        return np.zeros(0, dtype=np.int64), [0] * (count + 1)
    ids = np.concatenate(out_ids).astype(np.int64)
    owner = np.concatenate(out_owner)
    order = np.argsort(owner, kind="stable")  # each chunk left in one round, in order
    bounds = np.searchsorted(owner[order], np.arange(count + 1)).tolist()
    return ids[order], bounds
