"""Forked workers die with the process that forked them.

A worker that outlives its parent (SIGTERM or SIGKILL to `train`, which runs no cleanup)
keeps the caller's stdout and stderr open, so a caller waiting for its output waits forever.
Two things were keeping them alive: a worker held its own copy of the parent's end of its pipe
(so it never saw the pipe close), and nothing told it the parent had gone. Now:

- `started_child(parent_ends)` is the first thing a worker runs: it closes the pipe ends that
  belong to the parent (its own pipe's and earlier workers'), puts SIGTERM back to its default
  (the CLI's handler raises in the parent; a worker has nothing to clean up), and
  on Linux asks the kernel for SIGKILL when the parent goes (`prctl(PR_SET_PDEATHSIG)` through
  ctypes). The kernel sends it when the *thread* that forked the worker ends, so only a worker
  forked from the main thread, or one that never outlives the call that forked it, asks.
- Workers share the parent's process group, so `kill -- -PGID` reaches them all.
"""

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterable

PR_SET_PDEATHSIG = 1


def forked_from_main_thread() -> bool:
    """Whether a worker forked now may ask to die with the forking thread without dying early."""
    return threading.current_thread() is threading.main_thread()


def started_child(parent: int, parent_ends: Iterable = (), pdeathsig: bool = True) -> None:
    """Run first in a forked worker: see the module docstring. `parent` is the forking
    process's pid, read before the fork (a parent gone before prctl took effect is caught)."""
    for end in parent_ends:
        try:
            end.close()
        except OSError:
            pass
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if pdeathsig and die_with_parent() and os.getppid() != parent:
        os._exit(1)  # the parent went before the request took effect


def die_with_parent() -> bool:
    """Ask the kernel to SIGKILL this process when its parent (thread) ends; False where it
    cannot (not Linux, no C library found)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
