"""Byte-pair encoding of many chunks at once, in numpy rounds.

Encoding a large text meets tens of thousands of distinct chunks for the first time, and the
per-chunk Python merge loop cost as much as the regex split itself. Here every unfinished chunk
advances one merge per round: each finds its lowest-ranked pair and merges all its occurrences
left to right without overlap, which is exactly what `Tokenizer._bpe` does one chunk at a time.
A chunk leaves as soon as no pair of it has a rank, so a round costs only the chunks still open.

Rounds run until the chunk with the most rank levels is done, and each costs a pass over what
is still open, so one long chunk (a 1 MB run of letters) would take thousands of rounds over
itself. Long chunks are encoded on their own by `merge_ids`, which is O(n log n).

Rounds start from whole characters where that cannot change the result (`WholeChars`): a
chunk of 27 Chinese characters is 81 bytes, and joining each character's bytes took two rounds
per distinct character, over every open chunk, before any pair of characters could join.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tokworkbench.core import jit
from tokworkbench.core.bpe.encode import merge_ids
from tokworkbench.core.slots import home, open_slots

_ALONE_FROM = 512  # bytes: a chunk this long is encoded on its own (rounds would run on for it)
_WHOLE_FROM = 16  # start from whole characters when at least 1 byte in this many is not ASCII
_WHOLE_BUILD_FROM = 1 << 18  # and build their table (~0.2 s for o200k) for this many such bytes




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
    def slots(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Slots holding each key (-1: empty) and its rank, at most a quarter full; a key sits at
        its hash or the first free slot after it (linear probing)."""
        slot_keys, where, bits = open_slots(self.keys)
        slot_ranks = np.zeros(len(slot_keys), dtype=np.int64)
        slot_ranks[where] = self.ranks
        return slot_keys, slot_ranks, bits

    def _hashed(self, keys: np.ndarray) -> np.ndarray:
        slot_keys, slot_ranks, bits = self.slots
        mask = (1 << bits) - 1
        at = home(keys, bits)
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

    @cached_property
    def whole_chars(self) -> "WholeChars | None":
        """Which characters rounds may start from whole (byte-level merges only)."""
        return WholeChars.of(self) if self.base_size == 256 else None

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
    if jit.available(int(short_lengths.sum())):
        flat, lens = _compiled(short, short_lengths, table)
        bounds = np.concatenate(([0], np.cumsum(lens)))
    else:
        units, unit_lengths = _units(short, short_lengths, table)
        flat, bounds = _rounds(units, unit_lengths, table)
        lens = np.diff(np.asarray(bounds, dtype=np.int64))
    if alone:
        made = [merge_ids(list(pieces[i]), table.rank_of, table.never, table.base_size, table) for i in alone]
        at = np.repeat([bounds[i] for i in alone], [len(m) for m in made])
        flat = np.insert(flat, at, np.array([t for m in made for t in m], dtype=np.int64))
        lens[alone] = [len(m) for m in made]
    return (flat if outside is None else outside[flat]), lens


def _compiled(pieces: list[bytes], lengths: np.ndarray, table: MergeTable) -> tuple[np.ndarray, np.ndarray]:
    """`_rounds`' result from the compiled per-piece loop (`piecekernel.py`)."""
    from tokworkbench.core.bpe import piecekernel

    data = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    slot_keys, slot_ranks, bits = table.slots if len(table.keys) else (np.zeros(0, np.int64), np.zeros(0, np.int64), 4)
    return piecekernel.merge_pieces(data, bounds, table.dense, table.side, slot_keys, slot_ranks, bits,
                                    table.never, table.base_size)


def _units(pieces: list[bytes], lengths: np.ndarray, table: MergeTable) -> tuple[np.ndarray, np.ndarray]:
    """The units rounds start from: the pieces' bytes, with each character `WholeChars` allows
    already joined into its token; and how many units each piece has."""
    joined = b"".join(pieces)
    flat = np.frombuffer(joined, dtype=np.uint8)
    wide = np.count_nonzero(flat >= 0x80)
    whole = None
    if wide * _WHOLE_FROM >= len(flat) and (wide >= _WHOLE_BUILD_FROM or "whole_chars" in vars(table)):
        whole = table.whole_chars  # not for (nearly) ASCII, nor too little to pay for building it
    if whole is None:
        return flat.astype(np.int32), lengths
    return whole.join(joined, flat, lengths)


def _rounds(ids: np.ndarray, lengths: np.ndarray, table: MergeTable):
    """All chunks side by side in flat arrays; `rank[i]` is the rank of the pair that unit i
    starts (`never` at a chunk's last unit, flagged in `last`, and at joined-away units, whose
    id is -1). A round takes each open chunk's lowest rank, joins it everywhere in that chunk,
    and looks up only the pairs the joins changed (two a join). Units joined away stay where
    they are, skipped through `nxt`/`prv` links, so a round costs four passes over the arrays
    and work per join; the arrays are compacted (finished chunks leave, dead units go) only
    when more than half of them is dead or finished. Ids and ranks are int32."""
    count = len(lengths)
    never, base = table.never, table.base_size
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
    # each chunk left in one round, its ids side by side and in order: placed, not sorted
    bounds = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=count), out=bounds[1:])
    block = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
    sizes = np.diff(np.append(block, len(owner)))
    place = bounds[owner] + np.arange(len(owner)) - np.repeat(block, sizes)
    out = np.empty_like(ids)
    out[place] = ids
    return out, bounds.tolist()


class WholeChars:
    """Multi-byte UTF-8 characters that BPE may take as one unit from the start.

    Our rule joins the lowest-ranked pair first, and a pair that a join makes always ranks
    above that join (a merge comes after its parts). Take a character c whose bytes BPE alone
    makes into one token t. A join of a part of c with a unit outside it would make a token that
    begins with a proper suffix of c's bytes, or ends with a proper prefix of them. If no such
    token can stand there, the joins inside c happen among c's bytes alone, and every pair
    across c's edges waits until t is made: its rank is above t's, and t's is at or above the
    rank being joined while c is unfinished. So starting with t in c's place leaves every other
    join, and its order, as it was.

    The tokens that begin or end inside a character and reach beyond it are few (a space and a
    lead byte, `b' \\xe4'`; a character and the next one's lead byte) and are collected once
    per table: for each partial end, the bytes such a token has next to it. A character keeps
    its bytes where the byte next to it in its piece is one of those for one of its proper
    prefixes (before it) or suffixes (after it): `' 中'` keeps 中's bytes, `'中文'` does not.
    """

    def __init__(self, before: dict[bytes, set], after: dict[bytes, set]):
        # no reference to the table, which holds this: a cycle would keep both (and their
        # arrays) until a full collection
        self.before = before  # proper prefix of a character -> last bytes of tokens ending with it
        self.after = after  # proper suffix of a character -> first bytes of tokens beginning with it
        self.unit = np.full(0x110000, -1, dtype=np.int32)  # per code point: its token, or -1: its bytes
        self.head = np.zeros(0x110000, dtype=np.int32)  # its row in `masks` for the byte before it
        self.tail = np.zeros(0x110000, dtype=np.int32)  # and for the byte after it
        self._rows: dict[frozenset, int] = {frozenset(): 0}
        self.masks = np.zeros((1, 256), dtype=bool)  # row 0: no byte is a risk

    @staticmethod
    def of(table: MergeTable) -> "WholeChars":
        """The partial ends, and every character that is a token of the table: one that is
        not cannot be one unit, whatever BPE does with its bytes."""
        tokens = [t for t in _tokens(table) if len(t) > 1]
        before: dict[bytes, set] = {}
        after: dict[bytes, set] = {}
        if not tokens:
            return WholeChars(before, after)
        flat = np.frombuffer(b"".join(tokens), dtype=np.uint8)
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        row_start = np.cumsum(lengths) - lengths
        offset = np.arange(len(flat)) - np.repeat(row_start, lengths)
        lead = (flat & 0xC0) != 0x80
        inner = np.add.reduceat(lead & (offset > 0), row_start) > 0  # a character starts inside
        last = np.maximum.reduceat(np.where(lead, offset, -1), row_start)  # the last one's offset
        ends_inside = (last >= 0) & (lengths - last < _UTF8_LENGTH[flat[row_start + np.maximum(last, 0)]])
        begins_inside = ~lead[row_start]
        for i in np.flatnonzero(inner & (ends_inside | begins_inside)).tolist():
            t = tokens[i]
            if ends_inside[i]:
                at = int(last[i])
                before.setdefault(t[at:], set()).add(t[at - 1])
            if begins_inside[i]:
                first = next(k for k in range(1, len(t)) if t[k] & 0xC0 != 0x80)
                after.setdefault(t[:first], set()).add(t[first])
        whole = WholeChars(before, after)
        one = ~inner & ~begins_inside & (lengths == _UTF8_LENGTH[flat[row_start]])  # one character's bytes
        chars = []
        for i in np.flatnonzero(one).tolist():
            try:
                chars.append(ord(tokens[i].decode("utf-8")))
            except (UnicodeDecodeError, TypeError):
                pass  # bytes no text holds (an overlong form, a surrogate)
        if chars:
            whole.learn(table, chars)
        return whole

    def _row(self, risky: set) -> int:
        row = self._rows.get(frozenset(risky))
        if row is None:
            row = self._rows[frozenset(risky)] = len(self.masks)
            mask = np.zeros((1, 256), dtype=bool)
            mask[0, list(risky)] = True
            self.masks = np.concatenate((self.masks, mask))
        return row

    def learn(self, table: MergeTable, points: list[int]) -> None:
        """What BPE makes of each of these characters alone (all in one batch), and which
        bytes next to each make it keep its bytes."""
        datas = [chr(cp).encode("utf-8") for cp in points]
        lengths = np.fromiter(map(len, datas), dtype=np.int64, count=len(datas))
        made, bounds = _rounds(np.frombuffer(b"".join(datas), dtype=np.uint8).astype(np.int32), lengths, table)
        bounds = np.asarray(bounds)
        single = np.diff(bounds) == 1
        self.unit[points] = np.where(single, made[np.minimum(bounds[:-1], len(made) - 1)], -1)
        before, after, row = self.before, self.after, self._row
        for cp, data in zip(points, datas):
            cuts = range(1, len(data))
            heads = [before[data[:j]] for j in cuts if data[:j] in before]
            tails = [after[data[j:]] for j in cuts if data[j:] in after]
            if heads:
                self.head[cp] = row(set().union(*heads))
            if tails:
                self.tail[cp] = row(set().union(*tails))

    def join(self, joined: bytes, flat: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`_units` for pieces whose bytes, end to end, are `joined` (`flat` as an array)."""
        piece_start = np.cumsum(lengths) - lengths
        piece_end = piece_start + lengths
        try:
            joined.decode("utf-8")
        except UnicodeDecodeError:
            return flat.astype(np.int32), lengths
        open_ = lengths > 0
        if ((flat[piece_start[open_]] & 0xC0) == 0x80).any():
            return flat.astype(np.int32), lengths  # a piece starts inside a character: not text
        n = len(flat)
        starts = np.flatnonzero((flat & 0xC0) != 0x80)
        size = np.diff(np.append(starts, n))
        multi = size > 1
        s, k = starts[multi], size[multi]
        b = [flat[np.minimum(s + j, n - 1)].astype(np.int32) & 0x3F for j in range(1, 4)]
        lead = flat[s].astype(np.int32)
        cp = np.where(k == 2, (lead & 0x1F) << 6 | b[0],
             np.where(k == 3, (lead & 0x0F) << 12 | b[0] << 6 | b[1],
                      (lead & 0x07) << 18 | b[0] << 12 | b[1] << 6 | b[2]))
        unit = self.unit[cp]
        # the bytes next to each character in its piece (none at a piece's edge)
        edge = np.zeros(n + 1, dtype=bool)
        edge[piece_start] = True
        prev = np.where(edge[s], 256, flat[np.maximum(s - 1, 0)])
        edge[:] = False
        edge[piece_end] = True
        end = s + k
        nxt = np.where(edge[end], 256, flat[np.minimum(end, n - 1)])
        masks = np.concatenate((self.masks, np.zeros((len(self.masks), 1), dtype=bool)), axis=1)
        take = (unit >= 0) & ~masks[self.head[cp], prev] & ~masks[self.tail[cp], nxt]
        if not take.any():
            return flat.astype(np.int32), lengths
        ids = flat.astype(np.int32)
        s, k = s[take], k[take]
        ids[s] = unit[take]
        keep = np.ones(n, dtype=bool)
        gone = np.repeat(s + 1, k - 1) + (np.arange(int((k - 1).sum())) - np.repeat(np.cumsum(k - 1) - (k - 1), k - 1))
        keep[gone] = False
        kept = np.concatenate(([0], np.cumsum(keep)))
        return ids[keep], kept[piece_end] - kept[piece_start]


_UTF8_LENGTH = np.array([1] * 0xC0 + [2] * 0x20 + [3] * 0x10 + [4] * 0x10, dtype=np.int64)  # by lead byte


def _tokens(table: MergeTable) -> list[bytes]:
    """Each inside id's bytes, rebuilt from the table's pairs (a rank no pair has: b"")."""
    order = np.argsort(table.ranks, kind="stable")
    keys = table.keys[order]
    pairs = zip((keys >> 32).tolist(), (keys & 0xFFFFFFFF).tolist())
    tokens = [bytes([b]) for b in range(256)]
    if len(order) == table.never:  # every rank has its pair, in order
        append = tokens.append
        try:
            for a, b in pairs:
                append(tokens[a] + tokens[b])
            return tokens
        except IndexError:  # a part made by a later rank (Llama 3 has 90): build in passes below
            del tokens[256:]
            pairs = zip((keys >> 32).tolist(), (keys & 0xFFFFFFFF).tolist())
    made: list[bytes | None] = tokens + [None] * table.never
    pending = list(zip(table.ranks[order].tolist(), pairs))
    while pending:  # each pass builds the tokens whose parts are built
        still = []
        for r, (a, b) in pending:
            left, right = made[a], made[b]
            if left is None or right is None:
                still.append((r, (a, b)))
            else:
                made[256 + r] = left + right
        if len(still) == len(pending):
            raise ValueError("the merges make a token out of itself")
        pending = still
    return [b"" if t is None else t for t in made]
