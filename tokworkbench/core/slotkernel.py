"""`slots.py`'s tables probed from compiled code: the one lookup both merge kernels make per pair.
Import this module only after `jit.available()`: it imports numba."""

import numba
import numpy as np

from tokworkbench.core.slots import MULT


@numba.njit(cache=True, nogil=True, inline="always")
def probe(slot_keys, key, bits):
    """The slot holding `key` (int64, not negative), or -1."""
    if len(slot_keys) == 0:
        return -1
    mask = (1 << bits) - 1
    at = np.int64((np.uint64(key) * MULT) >> np.uint64(64 - bits))
    while True:
        k = slot_keys[at]
        if k == key:
            return at
        if k == -1:
            return -1
        at = (at + 1) & mask
