"""`RankGuard.unsafe` compiled (numba): which pieces hold an odd token, one pass over their bytes.

In numpy the guard builds prefix hashes, powers and inverses as long as the pieces (8 bytes
a byte) and searches each window length in turn: 0.12 s of a first Llama 3 encode of 10 MB.
Here each position's windows are hashed as they grow, only where an odd token of that length
starts with the same two bytes. The window hash is the numpy path's (the sum of byte * P**j),
so the sorted hashes the guard holds serve both.
Import this module only after `jit.available()`: it imports numba.
"""

import numba
import numpy as np

_P = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, nogil=True)
def unsafe(data, bounds, lengths, heads, wanted, wanted_at):
    """The pieces `data[bounds[i]:bounds[i + 1]]` holding a window of some length `lengths[k]`
    whose first two bytes `heads[k]` marks and whose hash is in
    `wanted[wanted_at[k]:wanted_at[k + 1]]` (sorted), ascending."""
    out = np.empty(len(bounds) - 1, dtype=np.int64)
    count = 0
    longest = lengths.max() if len(lengths) else 0
    for p in range(len(bounds) - 1):
        a, b = bounds[p], bounds[p + 1]
        hit = False
        for s in range(a, b - 1):
            gram = np.int64(data[s]) << 8 | np.int64(data[s + 1])
            h = np.uint64(0)
            power = np.uint64(1)
            done = 0  # bytes hashed so far from s
            for k in range(len(lengths)):
                size = lengths[k]
                if s + size > b or size > longest:
                    break
                if not heads[k, gram]:
                    continue
                while done < size:
                    h += np.uint64(data[s + done]) * power
                    power *= _P
                    done += 1
                lo, hi = wanted_at[k], wanted_at[k + 1]
                at = lo + np.searchsorted(wanted[lo:hi], h)
                if at < hi and wanted[at] == h:
                    hit = True
                    break
            if hit:
                break
        if hit:
            out[count] = p
            count += 1
    return out[:count].copy()
