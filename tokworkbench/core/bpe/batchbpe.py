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

_ALONE_FROM = 128  # bytes: a chunk this long is encoded on its own


@dataclass(frozen=True)
class MergeTable:
    """Merges as sorted int64 pair keys (a << 32 | b) with their ranks, for searchsorted, plus a
    dense rank table for pairs of small ids: most pairs a text meets are between bytes and early
    tokens, and a table lookup costs a fraction of a binary search."""

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

    def rank(self, keys: np.ndarray) -> np.ndarray:
        if not len(self.keys):
            return np.full(len(keys), 0, dtype=np.int64)
        a, b = keys >> 32, keys & 0xFFFFFFFF
        small = (a < self.side) & (b < self.side)
        if small.all():
            return self.dense[a * self.side + b]
        out = np.empty(len(keys), dtype=np.int64)
        out[small] = self.dense[a[small] * self.side + b[small]]
        large = keys[~small]
        at = np.minimum(np.searchsorted(self.keys, large), len(self.keys) - 1)
        out[~small] = np.where(self.keys[at] == large, self.ranks[at], self.never)
        return out


def bpe_many(pieces: list[bytes], table: MergeTable) -> list[list[int]]:
    """Token ids of each byte string, as `Tokenizer._bpe` would give them."""
    alone = [i for i, p in enumerate(pieces) if len(p) >= _ALONE_FROM]
    if not alone:
        return _rounds(pieces, table)
    out = _rounds([b"" if len(p) >= _ALONE_FROM else p for p in pieces], table)
    for i in alone:
        out[i] = merge_ids(list(pieces[i]), table.rank_of, table.never, table.base_size, table)
    return out


def _rounds(pieces: list[bytes], table: MergeTable) -> list[list[int]]:
    count = len(pieces)
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=count)
    ids = np.frombuffer(b"".join(pieces), dtype=np.uint8).astype(np.int64)
    owner = np.repeat(np.arange(count, dtype=np.int64), lengths)
    never = table.never
    best = np.empty(count, dtype=np.int64)
    out_ids, out_owner = [], []
    while len(ids):
        left = np.flatnonzero(owner[1:] == owner[:-1])
        ranks = table.rank((ids[left] << 32) | ids[left + 1])
        best.fill(never)
        if len(left):
            group = owner[left]
            starts = np.concatenate(([0], np.flatnonzero(group[1:] != group[:-1]) + 1))
            best[group[starts]] = np.minimum.reduceat(ranks, starts)
        finished = best[owner] == never
        if finished.any():
            out_ids.append(ids[finished])
            out_owner.append(owner[finished])
            open_ = ~finished
            ids, owner = ids[open_], owner[open_]
            if not len(ids):
                break
            still = open_[left]  # the pairs of the chunks still open, at their new positions
            left = (np.cumsum(open_) - 1)[left[still]]
            ranks = ranks[still]
        chosen = ranks == best[owner[left]]
        at, rank = left[chosen], ranks[chosen]
        # (a, a) in a run "aaa": take the 1st, 3rd... pair from the left, as a sequential merge does
        linked = np.concatenate(([False], at[1:] == at[:-1] + 1))
        if linked.any():
            index = np.arange(len(at))
            take = (index - np.maximum.accumulate(np.where(linked, 0, index))) % 2 == 0
            at, rank = at[take], rank[take]
        ids[at] = table.base_size + rank
        keep = np.ones(len(ids), dtype=bool)
        keep[at + 1] = False
        ids, owner = ids[keep], owner[keep]
    if not out_ids:
        return [[] for _ in range(count)]
    ids = np.concatenate(out_ids)
    owner = np.concatenate(out_owner)
    order = np.argsort(owner, kind="stable")  # each chunk left in one round, in order
    flat = ids[order].tolist()
    bounds = np.searchsorted(owner[order], np.arange(count + 1)).tolist()
    return [flat[i:j] for i, j in zip(bounds, bounds[1:])]
