"""The substring hashing both Unigram EM seeds share (em.py's, spseed.py's): code points end to
end, a 64-bit polynomial hash per position (arithmetic wraps at 2^64), and grouping by one sort."""

import numpy as np

_BASE = np.uint64(0x100000001B3)  # odd multiplier of the polynomial hash


def _codes(strings: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Code points + 1 (so no character hashes like an empty one) of all strings end to end,
    each string's length and offset."""
    codes = np.frombuffer("".join(strings).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64) + np.uint64(1)
    lens = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    offs = np.cumsum(lens) - lens
    return codes, lens, offs


def _group(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Like np.unique(values, return_index=True, return_inverse=True), by one sort, but with
    any one index of each value, not the first: the seed only reads its substring there, the
    same at every occurrence (an unstable sort is twice as fast on these hashes)."""
    order = np.argsort(values)
    ordered = values[order]
    starts = _run_starts(ordered)
    uniq = ordered[starts]
    first = order[starts]
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return uniq, first, inverse


def _run_starts(values: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts."""
    out = np.empty(len(values), bool)
    if len(values):
        out[0] = True
        np.not_equal(values[1:], values[:-1], out=out[1:])
    return out
