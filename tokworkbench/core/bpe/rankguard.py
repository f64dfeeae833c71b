"""Which chunks of a model that keeps tiktoken's rank rule may take the merges' batch path.

A ranks file such as Llama 3's is encoded by tiktoken's rule (`join="ranks"`), because some of its
tokens are not what the merges make of their own bytes: the 588 reached only as a whole chunk, the
90 reached through a part ranked after them, and the tokens built from those. That rule runs in
Python one chunk at a time, five times tiktoken's time. But every token a rule forms is a
substring of the chunk, so a chunk holding none of those *odd* tokens only ever forms tokens the
merges make of their own bytes, where the two rules agree (as they do for every chunk of cl100k,
whose ranks have no odd token). Such chunks go to the numpy batch path with a plain model's; the
few others keep the rank rule. tests/test_rank_guard.py holds the result to tiktoken's ids.
"""

from functools import cached_property

import numpy as np

from tokworkbench.core import jit

_P = np.uint64(0x9E3779B97F4A7C15)  # odd, so invertible mod 2**64
_P_INV = np.uint64(pow(int(_P), -1, 1 << 64))
_SLICE_BYTES = 1 << 20


class RankGuard:
    """Finds the pieces that hold an odd token with polynomial hashes of every window of
    each odd token's length, all pieces at once in numpy. Equal bytes hash equal, so no odd
    piece is missed; a collision only sends a piece to the rank rule, which is always exact."""

    def __init__(self, odd: list[bytes]):
        odd = sorted({t for t in odd if t})
        self.odd = len(odd)
        by_length: dict[int, list[bytes]] = {}
        for token in odd:
            if len(token) > 1:  # a single byte is a base token, never odd
                by_length.setdefault(len(token), []).append(token)
        self._hashes = {n: np.unique(np.array([_hash(t) for t in ts], dtype=np.uint64)) for n, ts in by_length.items()}
        self._heads = {}  # each length: which first two bytes an odd token of that length starts with
        for n, ts in by_length.items():
            heads = np.zeros(1 << 16, dtype=bool)
            heads[[t[0] << 8 | t[1] for t in ts]] = True
            self._heads[n] = heads

    def unsafe(self, pieces: list[bytes]) -> list[int]:
        """The indexes, ascending, of the pieces that hold an odd token."""
        if not self._hashes:
            return []
        sizes = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        if jit.available(int(sizes.sum())):
            from tokworkbench.core.bpe import guardkernel

            data = np.frombuffer(b"".join(pieces), dtype=np.uint8)
            return guardkernel.unsafe(data, np.concatenate(([0], np.cumsum(sizes))), *self._flat).tolist()
        found, first, size = [], 0, 0
        for i, piece in enumerate(pieces):  # about a megabyte at a time: the arrays are 8 bytes a byte
            size += len(piece)
            if size >= _SLICE_BYTES or i == len(pieces) - 1:
                found += [first + j for j in self._unsafe(pieces[first : i + 1])]
                first, size = i + 1, 0
        return found

    def _unsafe(self, pieces: list[bytes]) -> list[int]:
        data = np.frombuffer(b"".join(pieces), dtype=np.uint8)
        ends = np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)))
        n = len(data)
        with np.errstate(over="ignore"):
            powers = np.cumprod(np.full(n, _P, dtype=np.uint64))  # P**(i+1)
            prefix = np.concatenate(([np.uint64(0)], np.cumsum(data.astype(np.uint64) * powers)))
            inverse = np.cumprod(np.full(n, _P_INV, dtype=np.uint64))  # P**-(i+1)
        piece_of = np.searchsorted(ends, np.arange(n), side="right")
        grams = data[:-1].astype(np.int64) << 8 | data[1:]  # the two bytes at each position
        hits = []
        for length, wanted in self._hashes.items():
            if length > n:
                continue
            starts = np.flatnonzero(self._heads[length][grams[: n - length + 1]])
            starts = starts[piece_of[starts] == piece_of[starts + length - 1]]
            with np.errstate(over="ignore"):
                window = (prefix[starts + length] - prefix[starts]) * inverse[starts]
            at = np.minimum(np.searchsorted(wanted, window), len(wanted) - 1)
            hits.append(piece_of[starts[wanted[at] == window]])
        return np.unique(np.concatenate(hits)).tolist() if hits else []


    @cached_property
    def _flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The guard as the compiled path reads it: lengths ascending, their heads as rows, and
        their sorted hashes back to back with where each length's begin."""
        lengths = sorted(self._hashes)
        heads = np.stack([self._heads[n] for n in lengths])
        wanted = np.concatenate([self._hashes[n] for n in lengths])
        wanted_at = np.concatenate(([0], np.cumsum([len(self._hashes[n]) for n in lengths]))).astype(np.int64)
        return np.array(lengths, dtype=np.int64), heads, wanted, wanted_at


def _hash(token: bytes) -> int:
    """The hash `unsafe` gives a window holding `token` (the same sum, from position 0)."""
    h, power = 0, int(_P)
    for byte in token:
        h = (h + byte * power) % (1 << 64)
        power = power * int(_P) % (1 << 64)
    return h * int(_P_INV) % (1 << 64)


def odd_tokens(tokens: list[bytes], merged: np.ndarray, lengths: np.ndarray) -> list[bytes]:
    """The tokens whose bytes the merges do not make into themselves: `merged`/`lengths` are
    the merges' ids of each token's bytes (inside ids = positions in `tokens`), flat."""
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    first = merged[np.minimum(starts, max(len(merged) - 1, 0))] if len(merged) else np.full(len(tokens), -1)
    own = (lengths == 1) & (first == np.arange(len(tokens)))
    return [tokens[i] for i in np.flatnonzero(~own).tolist()]
