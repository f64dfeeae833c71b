"""Chunk -> token ids, looked up for a whole text at once from code points and chunk offsets.

With a dict, every chunk of a text costs a str (cut out of the text) and a hash lookup: about
half of a warm encode with tiktoken's vocabularies, more than tiktoken's whole encode of the
same text. Here the chunks are never made: each chunk's hash is computed from the text's code
points in numpy, found in an open-addressing table, and then *checked* character by character
against the code points stored with the entry, so a hash collision can only make a chunk look
new (it is then encoded and stored again under the same hash, one slot further), never give
another chunk's ids. The ids of all chunks are gathered from one flat array.

Where numba runs, a text's lookups go through `chunkkernel.py` instead (one loop a chunk, not
a dozen passes over arrays as long as the text); the two give the same entries and hashes.
"""

import numpy as np

from tokworkbench.core import jit

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
        self.hash = np.zeros(1 << 12, dtype=np.uint64)  # each entry's hash, for growing the slots
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

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (allocated, not only used)."""
        return sum(a.nbytes for a in (self.chars, self.ids, self.hash, self.char_start, self.char_len,
                                      self.id_start, self.id_len, self.slot_hash, self.slot_entry, self.powers))

    # -- looking up -------------------------------------------------------------------------
    def find(self, cps: np.ndarray, starts: np.ndarray, lens: np.ndarray | None = None, offset=None):
        """The entry of each chunk `cps[starts[i]:starts[i] + lens[i]]` (by default the chunks
        tile `cps`, and `offset`, each character's place in its chunk, may be given), or -1
        where it is not stored; and each chunk's hash."""
        chars, bounds, lens, offset = _laid_out(cps, starts, lens, offset)
        hashes = self._hashes(chars, bounds, lens, offset)
        if not self.count:  # a new store (a first encode): nothing to look for
            return np.full(len(lens), -1, dtype=np.int64), hashes
        entry = self._probe(hashes)
        found = entry >= 0
        found[found] = self.char_len[entry[found]] == lens[found]
        if found.all():
            same = self.chars[np.repeat(self.char_start[entry], lens) + offset] == chars
            bad = None if same.all() else np.repeat(np.arange(len(lens)), lens)[~same]
        else:
            chosen = np.flatnonzero(found)
            inside = np.repeat(found, lens)
            same = self.chars[np.repeat(self.char_start[entry[chosen]], lens[chosen]) + offset[inside]] == chars[inside]
            bad = None if same.all() else np.repeat(chosen, lens[chosen])[~same]
        if bad is not None:
            found[bad] = False
        entry[~found] = -1
        return entry, hashes

    def find_tiling(self, cps: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For chunks starting at `starts` that tile `cps`: each one's entry, its hash, and the
        stand-ins (ascending): one chunk for each set of characters not stored. A chunk not
        stored has the entry -1 - j, j its stand-in's place among them. What a first encode
        needs: encode the stand-ins, store them, then `ids_of(entries, made)`."""
        if jit.available(len(cps)):
            from tokworkbench.core.bpe import chunkkernel

            return chunkkernel.find_tiling(cps, starts.astype(np.int64, copy=False), self.slot_hash,
                                           self.slot_entry, self.bits, self.chars, self.char_start, self.char_len)
        places = tiling_offsets(len(cps), starts)
        entries, hashes = self.find(cps, starts, offset=places)
        missing = np.flatnonzero(entries < 0)
        if not len(missing):
            return entries, hashes, np.zeros(0, dtype=np.int64)
        lens = np.diff(np.append(starts, len(cps)))
        first, which = group_equal(hashes[missing])
        first_of = missing[first][which]
        same = _same_chunks(cps, starts, lens, missing, first_of, places)
        odd = np.flatnonzero(~same)  # a hash shared with other characters: grouped by the characters
        if len(odd):
            firsts: dict[bytes, int] = {}
            for j, i in zip(odd.tolist(), missing[odd].tolist()):
                first_of[j] = firsts.setdefault(cps[starts[i] : starts[i] + lens[i]].tobytes(), i)
        stand_in = np.unique(first_of)
        entries[missing] = -1 - np.searchsorted(stand_in, first_of)
        return entries, hashes, stand_in

    def ids_of(self, entries: np.ndarray, made: np.ndarray | None = None) -> list[int]:
        """The ids of these entries, one after another; an entry -1 - j is `made[j]`."""
        if jit.available(len(entries)):
            from tokworkbench.core.bpe import chunkkernel

            none = np.zeros(0, dtype=np.int64)
            return chunkkernel.gather(entries, none if made is None else made, self.id_start, self.id_len,
                                      self.ids).tolist()
        if made is not None:
            entries = np.where(entries < 0, made[np.maximum(-1 - entries, 0)], entries)
        lens = self.id_len[entries]
        first = self.id_start[entries]
        if (lens == 1).all():
            return self.ids[first].tolist()
        at = np.repeat(first - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
        return self.ids[at].tolist()

    # -- storing ----------------------------------------------------------------------------
    def add(self, cps: np.ndarray, starts: np.ndarray, lens: np.ndarray, hashes: np.ndarray,
            ids: np.ndarray, id_lens: np.ndarray) -> np.ndarray:
        """Store chunks `cps[starts[i]:starts[i] + lens[i]]` (distinct, none stored yet) with
        their hashes and ids (`ids` flat, `id_lens` per chunk); returns their entries."""
        k = len(starts)
        first = self.count
        for name in ("hash", "char_start", "char_len", "id_start", "id_len"):
            setattr(self, name, _grown(getattr(self, name), first + k))
        chars, bounds, lens, _ = _laid_out(cps, starts, lens)
        self.chars = _grown(self.chars, self.chars_used + len(chars))
        self.chars[self.chars_used : self.chars_used + len(chars)] = chars
        self.hash[first : first + k] = hashes
        self.char_start[first : first + k] = self.chars_used + bounds
        self.char_len[first : first + k] = lens
        self.chars_used += len(chars)
        self.ids = _grown(self.ids, self.ids_used + len(ids))
        self.ids[self.ids_used : self.ids_used + len(ids)] = ids
        self.id_start[first : first + k] = self.ids_used + np.cumsum(id_lens) - id_lens
        self.id_len[first : first + k] = id_lens
        self.ids_used += len(ids)
        self.count += k
        entries = np.arange(first, first + k, dtype=np.int64)
        if 2 * self.count > len(self.slot_entry):
            self._rehash()
        else:
            self._insert(hashes, entries)
        return entries

    # -- inside -----------------------------------------------------------------------------
    def _hashes(self, chars: np.ndarray, bounds: np.ndarray, lens: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """A polynomial hash of each chunk's code points (the sum of c * BASE**i), mixed with
        its length; `chars` holds the chunks back to back, from `bounds`."""
        longest = int(lens.max()) if len(lens) else 0
        if longest > len(self.powers):
            self.powers = _powers(max(longest, 2 * len(self.powers)))
        terms = self.powers[offset]
        np.multiply(terms, chars, out=terms)  # in place: these arrays are as long as the text
        sums = np.add.reduceat(terms, bounds) if len(bounds) else np.zeros(0, dtype=np.uint64)
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
        self._insert(self.hash[: self.count], np.arange(self.count, dtype=np.int64))


def group_equal(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One index per distinct value of `hashes` (ascending), and for each value the place of
    its own in that list. A hash table in numpy instead of `np.unique`, whose sort took a
    sixth of a first encode: each round, the values still looking write their index into
    their slot (one write wins), then read it back; a value that finds its own hash there
    joins that index, the others try the next slot."""
    k = len(hashes)
    bits = max(4, (2 * k).bit_length())
    mask = (1 << bits) - 1
    owner = np.full(1 << bits, -1, dtype=np.int64)
    slot = (hashes * _MULT >> np.uint64(64 - bits)).astype(np.int64)
    group = np.empty(k, dtype=np.int64)
    todo = np.arange(k, dtype=np.int64)
    while len(todo):
        at = slot[todo]
        empty = owner[at] < 0
        owner[at[empty]] = todo[empty]
        held = owner[at]
        same = hashes[held] == hashes[todo]
        group[todo[same]] = held[same]
        todo = todo[~same]
        slot[todo] = (slot[todo] + 1) & mask
    first = np.flatnonzero(group == np.arange(k))
    place = np.empty(k, dtype=np.int64)  # each first's place in `first`, for its group to read
    place[first] = np.arange(len(first))
    return first, place[group]


def _same_chunks(cps: np.ndarray, starts: np.ndarray, lens: np.ndarray, these: np.ndarray,
                 those: np.ndarray, places: np.ndarray) -> np.ndarray:
    """Whether chunk `these[i]` holds the same characters as chunk `those[i]` (`these`
    ascending; all of the text's chunks on a first encode, where `places`, each character's
    place in its chunk, saves finding where they are)."""
    same = lens[these] == lens[those]
    if len(these) == len(starts) and same.all():
        differ = cps[np.repeat(starts[those].astype(np.int32), lens) + places] != cps
        n = lens
    else:
        n = np.where(same, lens[these], 0)
        bounds = np.cumsum(n) - n
        offset = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(bounds, n)
        differ = cps[np.repeat(starts[these], n) + offset] != cps[np.repeat(starts[those], n) + offset]
    if differ.any():
        same[np.repeat(np.arange(len(these)), n)[differ]] = False
    return same


def tiling_offsets(n: int, starts: np.ndarray) -> np.ndarray:
    """Each character's place inside its chunk, for chunks starting at `starts` that tile
    `n` characters (int32: these arrays are as long as the text, and half the bytes is half
    the time)."""
    marks = np.zeros(n, dtype=np.int32)
    marks[starts[1:]] = np.diff(starts).astype(np.int32)
    return np.arange(n, dtype=np.int32) - np.cumsum(marks, dtype=np.int32)


def _laid_out(cps: np.ndarray, starts: np.ndarray, lens: np.ndarray | None, offset=None):
    """The chunks' characters back to back, where each starts there, their lengths, and each
    character's place inside its chunk. With no `lens` the chunks tile `cps` already."""
    if lens is None:
        lens = np.diff(np.append(starts, len(cps)))
        return cps, starts, lens, tiling_offsets(len(cps), starts) if offset is None else offset
    bounds = np.cumsum(lens) - lens
    offset = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(bounds, lens)
    return cps[np.repeat(starts, lens) + offset], bounds, lens, offset


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
