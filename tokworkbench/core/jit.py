"""Whether compiled loops (numba) can run here; where not, callers take their numpy path.

The merge loop's floor is the interpreter, not the algorithm (issue 26): numba compiles
numpy-style loops over the flat arrays we already hold, from wheels pip installs without a
compiler on Linux, macOS and Windows. A kernel lives in its own module that imports numba at
its top (`@numba.njit(cache=True, nogil=True)`, so a machine compiles it once and later starts
load it from the cache), and callers import that module only after `available()` says yes:
a start that never trains or encodes much pays nothing for numba. Where numba is missing or
refuses this numpy/Python, or `TOKWORKBENCH_NO_JIT=1`, the numpy path runs; the tests run
both and compare.
"""

from __future__ import annotations

import functools
import importlib.util
import os

OFF_VARIABLE = "TOKWORKBENCH_NO_JIT"


def available() -> bool:
    """Checked at each call, not once: the tests turn the compiled path off and on."""
    if os.environ.get(OFF_VARIABLE, "") not in ("", "0"):
        return False
    return _importable()


@functools.cache
def _importable() -> bool:
    if importlib.util.find_spec("numba") is None:
        return False
    try:
        import numba  # noqa: F401  (a numba that refuses this numpy raises ImportError here)
    except Exception:
        return False
    return True
