"""Whether compiled loops (numba) can run here; where not, callers take their numpy path.

The merge loop's floor is the interpreter, not the algorithm (issue 26): numba compiles
numpy-style loops over the flat arrays we already hold, from wheels pip installs without a
compiler on Linux, macOS and Windows. A kernel lives in its own module that imports numba at
its top (`@numba.njit(cache=True, nogil=True)`, so a machine compiles it once and later starts
load it from the cache), and callers import that module only after `available()` says yes:
a start that never trains or encodes much pays nothing for numba. Where numba is missing or
refuses this numpy/Python, or `TOKWORKBENCH_NO_JIT=1`, the numpy path runs; the tests run
both and compare.

Loading numba and a kernel's cached code costs 0.5-1.5 s a process, more than the numpy path
takes over the sample texts: the workbench's first screen on them took 3.2 s, 1.7 s of it
counting a corpus of 114 KB through compiled code. So a caller says how much work a call has
(characters, bytes, units), and until the process has asked for WORTH_FROM of it in all, or
has numba loaded anyway, the numpy path runs. The paths give the same results; which one runs
is a matter of speed only. A decision above another (whether to count a corpus compiled,
then splitting each piece) counts the same work twice, so a corpus's counting reaches the bar
at about half a million characters. `TOKWORKBENCH_JIT_FROM=N` moves the bar (the tests set 0, so
that small inputs exercise the compiled code).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

OFF_VARIABLE = "TOKWORKBENCH_NO_JIT"
FROM_VARIABLE = "TOKWORKBENCH_JIT_FROM"
WORTH_FROM = 1_000_000  # characters (or bytes, units) of work before loading numba pays


class _Asked:
    """The work this process has asked compiled code for so far: a fact about the process, as
    whether numba is loaded in it is."""

    total = 0


def available(work: int | None = None) -> bool:
    """Whether to take the compiled path for a call with `work` to do (None: whatever it is).
    Checked at each call, not once: the tests turn the compiled path off and on."""
    if os.environ.get(OFF_VARIABLE, "") not in ("", "0"):
        return False
    if work is not None and "numba" not in sys.modules:
        _Asked.total += work
        if _Asked.total < worth_from():
            return False
    return _importable()


def worth_from() -> int:
    """The bar: work a process asks for before a fixed cost of about a second (or a few tenths)
    pays. fastsplit's class tables are paid for by the same bar."""
    try:
        return int(os.environ.get(FROM_VARIABLE, WORTH_FROM))
    except ValueError:
        return WORTH_FROM


@functools.cache
def _importable() -> bool:
    if importlib.util.find_spec("numba") is None:
        return False
    try:
        import numba  # noqa: F401  (a numba that refuses this numpy raises ImportError here)
    except Exception:
        return False
    return True
