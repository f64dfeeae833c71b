"""Byte-pair encoding of many chunks at once, in numpy rounds.

Encoding a large text meets tens of thousands of distinct chunks for the first time, and the
per-chunk Python merge loop cost as much as the regex split itself. Here every unfinished chunk
advances one merge per round: each finds its lowest-ranked pair and merges all its occurrences
left to right without overlap, which is exactly what `Tokenizer._bpe` does one chunk at a time.
A chunk leaves as soon as no pair of it has a rank, so a round costs only the chunks still open.
"""

from dataclasses import dataclass

import numpy as np


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

    @staticmethod
    def of(merges, base_size: int, side: int = 1024) -> "MergeTable":
        pairs = np.array(merges, dtype=np.int64).reshape(-1, 2)
        keys = (pairs[:, 0] << 32) | pairs[:, 1]
        order = np.argsort(keys, kind="stable")
        dense = np.full(side * side, len(pairs), dtype=np.int32)
        small = (pairs[:, 0] < side) & (pairs[:, 1] < side)
        dense[pairs[small, 0] * side + pairs[small, 1]] = np.flatnonzero(small)
        return MergeTable(keys[order], order.astype(np.int64), base_size, dense, side)

    @property
    def never(self) -> int:
        return len(self.keys)

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
