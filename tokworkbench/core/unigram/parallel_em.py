"""The corpus sweeps of Unigram `em` (forward-backward, Viterbi) on every core, with the same
floats whatever the number of cores.

The words are cut into `BLOCKS` blocks, a fixed number that depends on the corpus only: words
sorted by length, cut where the edge counts balance, so one block holds the few long words and
only it sweeps their many positions. Each block's sums are made on its own and the blocks' sums
added in block order, so one worker and four give bit-identical models.

Workers are forked once, after the blocks are cut, and kept for the whole training: they inherit
their blocks (hundreds of MB need no pickling) and are sent only the round's vocabulary and
scores; each sends back its blocks' per-piece sums. Where fork is not the platform's default
(`can_fork`), or on one core, or on a small corpus, or in a daemonic process (which may not
start processes: a session's training runs in one, `childrun`), the blocks are swept in this
process.
"""

import multiprocessing
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from tokworkbench.core.errors import WorkerError
from tokworkbench.core.orphans import forked_from_main_thread, started_child
from tokworkbench.core.text.parallel import can_fork

BLOCKS = 4  # blocks the words are cut into, whatever the number of workers
MIN_EDGES = 300_000  # below this, forking costs more than it saves


@dataclass
class Sweep:
    """One pass over the corpus: per piece of the vocabulary its sum (expected count, or weight
    of the best paths using it), the best paths' token count and the corpus loss (Viterbi)."""

    per_piece: np.ndarray
    tokens: float = 0.0
    loss: float = 0.0


class _Block:
    """One block's lattices, cut down as the vocabulary shrinks (as `EmEngine` does the corpus's).
    They are built by `build` when first swept: in the worker that sweeps the block, so building
    them runs on every core too."""

    def __init__(self, build: Callable, weight: np.ndarray, pieces=None):
        self.build = build
        self.weight = weight
        self.last = None
        self.pieces = pieces  # the pruning pass's part swept with this block (`em.PieceBlock`)

    def _lattices(self, wanted: np.ndarray):
        """The lattices over the `wanted` pieces: cut from the last ones when their pieces
        include these (the vocabulary shrinks round by round), else from the block's full
        lattices, built again (after an undo): only the last cut is kept, not the seed's
        lattices, which hold every seed piece."""
        if self.last is not None and self.last[0][wanted].all():
            if (self.last[0] == wanted).all():
                return self.last[1]
            base = self.last[1]
        else:
            self.last = None  # (freed before the build)
            base = self.build()
        lat = base.restricted(wanted)
        self.last = (wanted, lat)
        return lat

    def run(self, kind: str, ids: np.ndarray, scores: np.ndarray, seeds: int):
        if kind == "pieces":
            return self.pieces.run(ids, scores)
        local = np.full(seeds, -1, dtype=np.int64)
        local[ids] = np.arange(len(ids))
        lat = self._lattices(local >= 0)
        piece = local[lat.pid]
        edge_score = scores[piece]
        if kind not in ("expected", "best"):  # ("pieces" is the pruning pass's, above)
            raise ValueError(f"no sweep called {kind!r}")
        if kind == "expected":
            counts, _ = lat.forward_backward(edge_score, self.weight)
            return Sweep(np.bincount(piece, weights=counts, minlength=len(ids)))
        path, best = lat.viterbi(edge_score)
        w = self.weight[lat.word[path]]
        used = np.bincount(piece[path], weights=w, minlength=len(ids))
        return Sweep(used, float(w.sum()), -float(np.dot(self.weight, best)))


def partition(lens: np.ndarray, edges: np.ndarray, blocks: int = BLOCKS) -> list[np.ndarray]:
    """The words (ascending indices) of each of `blocks` blocks: by length, shortest first,
    balanced by edge count (`edges` per word)."""
    by_length = np.argsort(lens, kind="stable")
    cum = np.cumsum(edges[by_length])
    bounds = np.searchsorted(cum, np.arange(1, blocks) * (cum[-1] if len(cum) else 0) / blocks)
    return [np.sort(part) for part in np.split(by_length, bounds)]


def cut_blocks(lattices, weight: np.ndarray, blocks: int = BLOCKS) -> list[_Block]:
    """A whole corpus's lattices in blocks (`partition`)."""
    parts = partition(lattices.lens, np.bincount(lattices.word, minlength=lattices.count), blocks)
    return [_Block(partial(lattices.words, words), weight[words]) for words in parts]


class BlockSweeps:
    """The corpus's blocks and the workers that sweep them. `blocks`: (words, build) pairs, the
    block's word indices and what builds its lattices; `edges`: the corpus's edge count;
    `pieces`: the pruning pass's parts, one a block."""

    def __init__(self, blocks: list[tuple[np.ndarray, Callable]], weight: np.ndarray, seeds: int, edges: int,
                 workers: int | None = None, pieces: list | None = None):
        pieces = pieces or [None] * len(blocks)
        self.blocks = [_Block(build, weight[words], part) for (words, build), part in zip(blocks, pieces)]
        self.seeds = seeds
        self.edges = edges
        self.workers = workers
        self._pool: _Pool | None = None

    def _worker_count(self) -> int:
        if multiprocessing.current_process().daemon:  # (a session's training process) may not have children
            return 1
        if self.workers is not None:
            return max(1, min(self.workers, len(self.blocks)))
        if self.edges < MIN_EDGES or not can_fork():
            return 1
        return max(1, min(os.cpu_count() or 1, len(self.blocks)))

    def run(self, kind: str, ids: np.ndarray, scores: np.ndarray) -> Sweep:
        """Every block's sweep, their sums added in block order."""
        parts = self._parts(kind, ids, scores)
        total = Sweep(parts[0].per_piece.astype(np.float64), parts[0].tokens, parts[0].loss)  # (a copy)
        for part in parts[1:]:
            total.per_piece += part.per_piece
            total.tokens += part.tokens
            total.loss += part.loss
        return total

    def pieces(self, ids: np.ndarray, scores: np.ndarray) -> list:
        """The pruning pass's parts' results (`em.PieceBlock.run`), in block order."""
        return self._parts("pieces", ids, scores)

    def _parts(self, kind: str, ids: np.ndarray, scores: np.ndarray) -> list:
        n = self._worker_count()
        if n > 1 and (self._pool is None or self._pool.pid != os.getpid()):
            self._pool = _Pool(self.blocks, n, self.seeds)  # (a forked copy of this object makes its own)
        args = (kind, np.asarray(ids), np.asarray(scores, dtype=np.float64), self.seeds)
        if n == 1:
            parts = [b.run(*args) for b in self.blocks]
        else:
            try:
                parts = self._pool.run(args)
            except BaseException:  # interrupted or failed midway: a reply may still be on its way
                self.close()
                raise
        return parts

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _shares(blocks: int, workers: int) -> list[range]:
    """Consecutive blocks per worker, the first share this process's."""
    cuts = [blocks * k // workers for k in range(workers + 1)]
    return [range(a, b) for a, b in zip(cuts, cuts[1:])]


class _Pool:
    """Forked workers, each sweeping its share of the blocks on request; this process sweeps the
    first share meanwhile."""

    def __init__(self, blocks: list[_Block], workers: int, seeds: int):
        self.pid = os.getpid()
        self.blocks = blocks
        self.shares = _shares(len(blocks), workers)
        context = multiprocessing.get_context("fork")
        self.children = []
        # a pool outlives the call that made it: only one made on the main thread may ask the
        # kernel to kill its workers with the forking thread (core/orphans.py); the others end
        # when their pipe closes, which they no longer hold open themselves
        pdeathsig = forked_from_main_thread()
        for share in self.shares[1:]:
            mine, theirs = context.Pipe()
            ends = [c for _, c in self.children] + [mine]
            child = context.Process(target=_serve, args=([blocks[b] for b in share], theirs, self.pid, ends, pdeathsig),
                                    daemon=True)
            child.start()
            theirs.close()
            self.children.append((child, mine))
        self._finalizer = weakref.finalize(self, _stop, self.pid, list(self.children))

    def run(self, args: tuple) -> list[Sweep]:
        for child, conn in self.children:
            try:
                conn.send(args)
            except OSError:  # a broken pipe: the worker is gone
                raise _died(child) from None
        parts = [self.blocks[b].run(*args) for b in self.shares[0]]
        for child, conn in self.children:
            try:
                ok, value = conn.recv()
            except (EOFError, OSError):
                raise _died(child) from None
            if not ok:
                raise value
            parts += value
        return parts

    def close(self) -> None:
        self._finalizer()


def _died(child) -> WorkerError:
    child.join(timeout=1)
    code = child.exitcode
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    return WorkerError(f"an em worker process died before it reported ({how})")


def _serve(blocks: list[_Block], conn, parent: int, parent_ends: list, pdeathsig: bool) -> None:
    started_child(parent, parent_ends, pdeathsig)
    while True:
        try:
            args = conn.recv()
        except EOFError:
            return
        if args is None:
            return
        try:
            conn.send((True, [b.run(*args) for b in blocks]))
        except BaseException as exc:  # report it to the parent rather than die silently
            conn.send((False, exc))


def _stop(pid: int, children: list) -> None:
    if os.getpid() != pid:  # a forked copy of this process: the workers are not its own
        return
    for child, conn in children:
        try:
            conn.send(None)
        except (OSError, ValueError):
            pass
        conn.close()
        child.join(timeout=1)
        if child.is_alive():
            child.terminate()
