"""Pre-tokenize and count chunks on all cores.

The preset patterns always start a new chunk at a single space that sits between two
non-whitespace characters, and at a line break right after a letter or digit, and nothing they
match looks behind such a place; so text cut there pre-tokenizes to exactly the same chunks as
the whole (property tests check this for every preset on arbitrary Unicode). Pieces are counted in worker processes and the counts merged in text order, which also
keeps every chunk's order of first appearance.
"""

import multiprocessing
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import regex

from tokworkbench.core.errors import StoppedShare, WorkerError
from tokworkbench.core.orphans import started_child
from tokworkbench.core.text.pretokenize import PreTokenizer

MIN_PARALLEL = 4_000_000  # characters; below this, starting processes costs more than it saves
PIECE = 1_000_000  # characters pre-tokenized at a time: bounds the memory of the chunk lists
COUNT_PIECE = 250_000  # characters a counting worker splits at a time (a 1M-character piece's
# chunk list was 14 MB per process; the pieces are sliced one at a time, not all up front)


_CANDIDATE = regex.compile(r"[ \r\n]")
_LETTER_OR_NUMBER = regex.compile(r"[\p{L}\p{N}]")


def safe_cut(text: str, start: int, stop: int) -> int:
    """The first position in [start, stop) where a space sits between two non-whitespace
    characters, or a line break follows a letter or digit, or -1. The cut goes before the space
    or break: no preset chunk runs from a letter or digit into a line break, and whatever
    matches from a space or break on only looks ahead. The second rule is what lets text written
    without spaces (Chinese, Japanese) be cut at all."""
    for m in _CANDIDATE.finditer(text, max(start, 1), stop):
        i = m.start()
        if text[i] == " ":
            if i + 1 < len(text) and not text[i - 1].isspace() and not text[i + 1].isspace():
                return i
        elif _LETTER_OR_NUMBER.match(text, i - 1):
            return i
    return -1


def cut_points(text: str, parts: int) -> list[int]:
    """Where `cut_text` cuts: 0, the cuts, len(text)."""
    bounds, pos = [0], 0
    step = max(1, len(text) // parts)
    for k in range(1, parts):
        at = safe_cut(text, max(pos + 1, k * step), len(text))
        if at == -1:
            break
        bounds.append(at)
        pos = at
    bounds.append(len(text))
    return bounds


def cut_text(text: str, parts: int) -> list[str]:
    """`text` in about `parts` pieces, cut only where the presets always cut."""
    bounds = cut_points(text, parts)
    return [text[i:j] for i, j in zip(bounds, bounds[1:])]


def _count(pre: PreTokenizer, texts: list[str], spans: list[tuple[int, int, int]]) -> Counter:
    """Chunk counts of the (document, start, stop) spans, each sliced only when it is split."""
    counter: Counter = Counter()
    for d, i, j in spans:
        counter.update(pre.counts(texts[d][i:j]))
    return counter


def can_fork() -> bool:
    """Whether worker processes may be forked: only where fork is the platform's own default
    (Linux). macOS's system libraries are not fork-safe and Windows has no fork; there the work
    stays in this process, with the same results."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def can_parallelize(pre: PreTokenizer, chars: int) -> bool:
    return pre.is_preset_pattern and chars >= MIN_PARALLEL and (os.cpu_count() or 1) > 1 and can_fork()


def worker_count(workers: int | None) -> int:
    return workers or min(os.cpu_count() or 1, 8)


def fork_map(func: Callable, shares: list) -> list:
    """[func(share) for share in shares], the first share in this process and each other one in
    a forked child. Children inherit their share instead of receiving it pickled (50 MB of text
    each on a 100 MB corpus); only the results travel back. A child's exception is raised here.
    Every child has ended when this returns or raises (core/orphans.py: and if this process is
    killed, they die with it)."""
    context = multiprocessing.get_context("fork")
    children = []
    parent = os.getpid()
    for share in shares[1:]:
        receive, send = context.Pipe(duplex=False)
        ends = [r for _, r in children] + [receive]
        child = context.Process(target=_run_child, args=(func, share, send, parent, ends), daemon=True)
        child.start()
        send.close()
        children.append((child, receive))
    finished = False
    try:
        results = [func(shares[0])] if shares else []
        for child, receive in children:
            try:
                ok, value = receive.recv()
            except EOFError:
                child.join(timeout=1)
                raise WorkerError(f"a worker process died before it reported ({_death(child.exitcode)})") from None
            if not ok:
                raise value
            results.append(value)
        finished = True
        return results
    finally:
        for child, receive in children:
            receive.close()
            if not finished:  # interrupted or failed: the others' work is wasted, stop them now
                child.terminate()
            child.join(timeout=1)
            if child.is_alive():
                child.kill()
                child.join()


def thread_map(func: Callable, shares: list) -> list:
    """[func(share, stop=stop) for share in shares], the first share in this thread and each other
    one in a thread of its own: for work done in compiled code that lets go of the GIL (nogil
    kernels), where forked workers would each load the compiled code again (about 50 MB a
    process, and a tenth of a second) and send their results back pickled. A thread cannot be
    killed as a fork is: `stop`, a threading.Event, is set once a share fails or this thread is
    interrupted (ctrl+c), and `func` raises StoppedShare when it sees it between two steps, so the
    others end within a step instead of finishing their shares. The first real exception is
    raised here."""
    stop = threading.Event()

    def run(share):
        try:
            return func(share, stop=stop)
        except BaseException:
            stop.set()
            raise

    if len(shares) < 2:
        return [run(share) for share in shares]
    with ThreadPoolExecutor(max_workers=len(shares) - 1) as pool:
        others = [pool.submit(run, share) for share in shares[1:]]
        try:
            results = [run(shares[0])]
            results += [f.result() for f in others]
        except StoppedShare:  # another share failed first: its exception is the one to raise
            for f in others:
                exc = f.exception()
                if exc is not None and not isinstance(exc, StoppedShare):
                    raise exc from None
            raise
        finally:
            stop.set()
            for f in others:
                f.cancel()
    return results


def _death(exitcode: int | None) -> str:
    """How a child ended, in words: a negative exit code is the signal that killed it."""
    if exitcode is None:
        return "it is still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (", perhaps for lack of memory" if exitcode == -9 else "")
    return f"exit code {exitcode}"


def _run_child(func, share, send, parent: int, parent_ends: list) -> None:
    started_child(parent, parent_ends)  # (fork_map waits for every child: safe from any thread)
    try:
        send.send((True, func(share)))
    except BaseException as exc:  # report it to the parent rather than die silently
        send.send((False, exc))
    finally:
        send.close()


def split_evenly(pieces: list, workers: int, size: Callable = len) -> list[list]:
    """Consecutive runs of pieces with about the same number of characters each."""
    total = sum(map(size, pieces))
    groups: list[list] = [[] for _ in range(workers)]
    budget, g, used = total / workers, 0, 0
    for piece in pieces:
        if used >= budget * (g + 1) and g < workers - 1:
            g += 1
        groups[g].append(piece)
        used += size(piece)
    return [group for group in groups if group]


def count_parallel(texts: list[str], pre: PreTokenizer, workers: int | None = None) -> Counter:
    """Chunk counts of `texts` (already normalized), in order of first appearance. Workers are
    handed spans of the texts they inherit, not copies of the pieces."""
    spans: list[tuple[int, int, int]] = []
    for d, t in enumerate(texts):
        bounds = cut_points(t, max(1, len(t) // COUNT_PIECE))
        spans += [(d, i, j) for i, j in zip(bounds, bounds[1:])]
    shares = split_evenly(spans, worker_count(workers), size=lambda span: span[2] - span[1])
    parts = fork_map(partial(_count, pre, texts), shares)
    merged: Counter = parts[0] if parts else Counter()
    for part in parts[1:]:  # in text order, so first appearances keep their order
        get = merged.get
        for chunk, n in part.items():
            merged[chunk] = get(chunk, 0) + n
    return merged


def _encode(tokenizer, pieces: list[str]) -> list[int]:
    out: list[int] = []
    for piece in pieces:
        out += tokenizer.encode_normalized(piece)
    return out


def encode_parallel(tokenizer, text: str, workers: int | None = None) -> list[int]:
    """Ids of normalized `text`, its cut pieces encoded in worker processes."""
    workers = worker_count(workers)
    pieces = cut_text(text, max(workers, len(text) // PIECE))
    out: list[int] = []
    for part in fork_map(partial(_encode, tokenizer), split_evenly(pieces, workers)):
        out += part
    return out
