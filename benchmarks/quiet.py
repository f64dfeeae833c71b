"""The one rule every benchmark here starts a round by: wait until the machine is quiet.

On these 2 cores a busy machine handicaps the multi-threaded peers more than our forked workers
(it once made ours look 1.6x faster than it was), so a round starts at a 1-minute load of at most
`limit`, or is marked as not quiet after `patience` seconds, and gets no ratio.
"""

import os
import time


def wait_for_quiet(limit: float = 0.5, patience: float = 600.0) -> float:
    """The 1-minute load once it is at most `limit`, or after `patience` seconds, whichever first."""
    deadline = time.monotonic() + patience
    while os.getloadavg()[0] > limit and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]
