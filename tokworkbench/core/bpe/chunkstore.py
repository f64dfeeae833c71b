"""Chunk -> token ids, looked up for a whole text at once from code points and chunk offsets.

With a dict, every chunk of a text costs a str (cut out of the text) and a hash lookup: about
half of a warm encode with tiktoken's vocabularies, more than tiktoken's whole encode of the
same text. Here the chunks are never made: each chunk's hash is computed from the text's code
points in numpy, found in an open-addressing table, and then *checked* character by character
against the code points stored with the entry, so a hash collision can only make a chunk look
new (it is then encoded and stored again under the same hash, one slot further), never give
another chunk's ids. The ids of all chunks are gathered from one flat array.
"""

import numpy as np

_MULT = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_BASE = np.uint64(0x100000001B3)  # the polynomial's base (odd, so no power of it is 0)


class ChunkStore:
    """Stored chunks: their code points (`chars`, flat), their ids (`ids`, flat), and where
    each entry's part of both starts and how long it is. `slots` maps a chunk hash to entries."""

    def __init__(self):
        self.count = 0
        self.chars = np.zeros(1 << 16, dtype=np.uint32)
        self.chars_used = 0
        self.ids = np.zeros(1 << 16, dtype=np.int64)
        self.ids_used = 0
        self.char_start = np.zeros(1 << 12, dtype=np.int64)
        self.char_len = np.zeros(1 << 12, dtype=np.int64)
        self.id_start = np.zeros(1 << 12, dtype=np.int64)
        self.id_len = np.zeros(1 << 12, dtype=np.int64)
        self.bits = 13
        self.slot_hash = np.zeros(1 << self.bits, dtype=np.uint64)
        self.slot_entry = np.full(1 << self.bits, -1, dtype=np.int64)
        self.powers = _powers(64)

    def __len__(self) -> int:
        return self.count

    # -- looking up -------------------------------------------------------------------------
    def find(self, cps: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The entry of each chunk (`cps[starts[i]:starts[i+1]]`), or -1 where it is not stored."""
        n, k = len(cps), len(starts)
        lens = np.diff(np.append(starts, n))
        offset = np.arange(n, dtype=np.int64) - np.repeat(starts, lens)  # place inside its chunk
        hashes = self._hashes(cps, starts, lens, offset)
        entry = self._probe(hashes)
        found = entry >= 0
        # candidates: check length, then every character
        e = entry[found]
        found[found] = self.char_len[e] == lens[found]
        if found.all():
            where = np.repeat(self.char_start[entry], lens) + offset
            same = self.chars[where] == cps
            if not same.all():
                chunk_of = np.repeat(np.arange(k), lens)
                found[np.unique(chunk_of[~same])] = False
        elif found.any():
            chosen = np.flatnonzero(found)
            chars = np.repeat(found, lens)
            where = np.repeat(self.char_start[entry[chosen]], lens[chosen]) + offset[chars]
            same = self.chars[where] == cps[chars]
            if not same.all():
                chunk_of = np.repeat(chosen, lens[chosen])
                found[np.unique(chunk_of[~same])] = False
        entry[~found] = -1
        return entry

    def ids_of(self, entries: np.ndarray) -> list[int]:
        """The ids of these entries, one after another."""
        lens = self.id_len[entries]
        first = self.id_start[entries]
        if (lens == 1).all():
            return self.ids[first].tolist()
        at = np.repeat(first - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
        return self.ids[at].tolist()

    # -- storing ----------------------------------------------------------------------------
    def add(self, cps: np.ndarray, starts: np.ndarray, ends: np.ndarray, ids: list[list[int]]) -> np.ndarray:
        """Store chunks `cps[starts[i]:ends[i]]` (distinct, none stored yet) with their ids;
        returns their entries."""
        k = len(starts)
        lens = ends - starts
        first = self.count
        self._reserve_entries(first + k)
        # characters
        total = int(lens.sum())
        offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        src = np.repeat(starts, lens) + offset
        self.chars = _grown(self.chars, self.chars_used + total)
        self.chars[self.chars_used : self.chars_used + total] = cps[src]
        self.char_start[first : first + k] = self.chars_used + np.cumsum(lens) - lens
        self.char_len[first : first + k] = lens
        self.chars_used += total
        # ids
        id_lens = np.fromiter(map(len, ids), dtype=np.int64, count=k)
        flat = np.fromiter((t for chunk in ids for t in chunk), dtype=np.int64, count=int(id_lens.sum()))
        self.ids = _grown(self.ids, self.ids_used + len(flat))
        self.ids[self.ids_used : self.ids_used + len(flat)] = flat
        self.id_start[first : first + k] = self.ids_used + np.cumsum(id_lens) - id_lens
        self.id_len[first : first + k] = id_lens
        self.ids_used += len(flat)
        self.count += k
        # slots
        hashes = self._hashes(self.chars[: self.chars_used], self.char_start[first : first + k] - 0, lens,
                              None, src_offset=offset)
        entries = np.arange(first, first + k, dtype=np.int64)
        if 2 * self.count > len(self.slot_entry):
            self._rehash()
        else:
            self._insert(hashes, entries)
        return entries

    # -- inside -----------------------------------------------------------------------------
    def _hashes(self, cps, starts, lens, offset, src_offset=None) -> np.ndarray:
        """A polynomial hash of each chunk's code points (sum of c * BASE**i), mixed with its
        length. `offset` is each character's place inside its chunk (for `cps` laid out as the
        chunks, back to back); for chunks scattered in a store, `src_offset` over their chars."""
        longest = int(lens.max()) if len(lens) else 0
        if longest > len(self.powers):
            self.powers = _powers(max(longest, 2 * len(self.powers)))
        if src_offset is None:
            terms = cps.astype(np.uint64) * self.powers[offset]
            sums = np.add.reduceat(terms, starts) if len(starts) else np.zeros(0, dtype=np.uint64)
            sums[lens == 0] = 0
        else:
            at = np.repeat(starts, lens) + src_offset
            terms = cps[at].astype(np.uint64) * self.powers[src_offset]
            bounds = np.cumsum(lens) - lens
            sums = np.add.reduceat(terms, bounds) if len(terms) else np.zeros(len(lens), dtype=np.uint64)
        h = sums ^ (lens.astype(np.uint64) * _MIX)
        h ^= h >> np.uint64(31)
        h *= _MULT
        h ^= h >> np.uint64(29)
        return h

    def _slot_of(self, hashes: np.ndarray) -> np.ndarray:
        return (hashes * _MULT >> np.uint64(64 - self.bits)).astype(np.int64)

    def _probe(self, hashes: np.ndarray) -> np.ndarray:
        """The entry under each hash (the first, when a collision stored two), or -1."""
        mask = (1 << self.bits) - 1
        at = self._slot_of(hashes)
        entry = self.slot_entry[at]
        out = np.where((entry >= 0) & (self.slot_hash[at] == hashes), entry, -1)
        todo = np.flatnonzero((entry >= 0) & (self.slot_hash[at] != hashes))
        at = at[todo]
        while len(todo):
            at = (at + 1) & mask
            entry = self.slot_entry[at]
            hit = (entry >= 0) & (self.slot_hash[at] == hashes[todo])
            out[todo[hit]] = entry[hit]
            more = ~hit & (entry >= 0)
            todo, at = todo[more], at[more]
        return out

    def _insert(self, hashes: np.ndarray, entries: np.ndarray) -> None:
        mask = (1 << self.bits) - 1
        at = self._slot_of(hashes)
        todo = np.arange(len(hashes))
        while len(todo):
            free = self.slot_entry[at] < 0
            _, first = np.unique(at[free], return_index=True)
            take = np.flatnonzero(free)[first]
            self.slot_entry[at[take]] = entries[todo[take]]
            self.slot_hash[at[take]] = hashes[todo[take]]
            left = np.ones(len(todo), dtype=bool)
            left[take] = False
            todo, at = todo[left], (at[left] + 1) & mask

    def _rehash(self) -> None:
        while 2 * self.count > (1 << self.bits):
            self.bits += 1
        self.slot_hash = np.zeros(1 << self.bits, dtype=np.uint64)
        self.slot_entry = np.full(1 << self.bits, -1, dtype=np.int64)
        k = self.count
        lens = self.char_len[:k]
        offset = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        hashes = self._hashes(self.chars[: self.chars_used], self.char_start[:k], lens, None, src_offset=offset)
        self._insert(hashes, np.arange(k, dtype=np.int64))

    def _reserve_entries(self, size: int) -> None:
        for name in ("char_start", "char_len", "id_start", "id_len"):
            setattr(self, name, _grown(getattr(self, name), size))


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    if size <= len(array):
        return array
    bigger = np.zeros(max(size, 2 * len(array)), dtype=array.dtype)
    bigger[: len(array)] = array
    return bigger


def _powers(n: int) -> np.ndarray:
    out = np.full(n, _BASE, dtype=np.uint64)
    out[0] = 1
    return np.cumprod(out, dtype=np.uint64)
