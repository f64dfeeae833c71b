"""sentencepiece 0.2.3's Unigram trainer (`unigram::Trainer`, unigram_model_trainer.cc), step by
step, in its own float32 arithmetic: the model it keeps between steps is its vector of pieces
and scores, in its order, which its sums follow.

- `seed`: spseed.spm_seed, scores log(score / sum).
- `em`: one EM iteration, `RunEStep` (spmlattice.e_step) then `RunMStep`: a piece expected
  fewer than 0.5 times goes; the others score digamma(count) - digamma(sum), the sum float32,
  in order.
- `prune`: `PruneSentencePieces`: a piece no best path uses, or whose own best path is not
  itself, goes; a piece with no second path stays; the others, by their loss (the likelihood
  lost were their count given to their second path), most lost first, until max(desired,
  shrinking factor x size) pieces.
- `unreachable`: `PruneUnreachableSentencePieces`: a piece its own string's other paths
  outscore goes.
- `finalize`: `FinalizeSentencePieces`: every required character (a missing one at the lowest
  score + 0.0001 x its rank), then the best-scored pieces, to the vocabulary's room; by score,
  then by bytes.
`TrainDiscretePruning` alternates: EM x sub-iterations, prune, until the model is at most
`desired` (1.1 x the vocabulary); then unreachable, then finalize (em.py lays the rounds out).
"""

import os
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from tokworkbench.core import jit
from tokworkbench.core.text.parallel import thread_map
from tokworkbench.core.unigram import spmlattice, spmpieces
from tokworkbench.core.unigram.config import SPM_THREADS
from tokworkbench.core.unigram.hashing import BASE, code_points, first_and_inverse
from tokworkbench.core.unigram.spseed import spm_seed
from tokworkbench.core.unigram.state import Model

EXPECTED_MIN = np.float32(0.5)  # kExpectedFrequencyThreshold
UNKNOWN_PENALTY = np.float32(10.0)  # kUnkPenalty
FINAL_PENALTY_STEP = np.float32(0.0001)  # kMinScorePenaltyDelta
GOES, STAYS, WEIGHED = 0, 1, 2  # spmpieces.losses: what pruning does with a piece
MAX_WORKERS = 8  # threads running virtual threads at once


@dataclass(frozen=True)
class Pruning:
    """What `PruneSentencePieces` makes of a model, and what it saw on the way."""

    kept: Model
    gone: np.ndarray  # positions it removes: those that can go at once first, then the least lost
    losses: dict[int, float]  # position -> likelihood lost without it (0 for those that can go at once)
    counts: np.ndarray  # float32, each piece's count on the best paths
    loss: float  # -sum of weight x best path score
    tokens: int  # sum of weight x best path length


class SpmTrainer:
    """The trainer over one corpus. Its strings are the seed's pieces (a replayed model's, with
    each character of the corpus it lacks at its lowest score - 10), then the required
    characters the corpus lacks, which only the finalization adds: a piece's index among them
    names it in every `Model`."""

    def __init__(self, corpus, seed_size: int, max_len: int, split_digits: bool = False,
                 shrinking_factor: float = 0.75, threads: int = SPM_THREADS,
                 vocabulary: list[tuple[str, float]] | None = None):
        self.shrinking = np.float32(shrinking_factor)
        self.threads = threads
        self.replayed = vocabulary is not None
        # each string's lattice is swept a few dozen times in a training: plain Python takes about
        # a microsecond a step, so all but a toy corpus pays for loading numba (the seed's strings
        # count about as many characters as the words)
        self._kernels = _kernels(100 * sum(map(len, corpus.words)))
        if vocabulary is None:
            seed, self.seed_scores = spm_seed(corpus, seed_size, max_len, split_digits, self._kernels.group_hashes)
        else:
            given = dict(vocabulary)
            low = np.float32(min(given.values(), default=0.0)) - UNKNOWN_PENALTY
            seed = list(given) + sorted({ch for ch, n in corpus.required if n > 0} - set(given))
            self.seed_scores = np.array([given.get(p, low) for p in seed], dtype=np.float32)
            max_len = max(map(len, seed), default=1)
        seeded = set(seed)
        self.strings = seed + [ch for ch, _ in corpus.required if ch not in seeded]
        self.index = {p: i for i, p in enumerate(self.strings)}
        # compiled, the virtual threads run a few at a time on threads of ours (their kernels let go
        # of the GIL); numba's own threads would not survive the app's forked training child
        self._workers = min(os.cpu_count() or 1, MAX_WORKERS) if self._kernels.compiled else 1
        # two independent walks; compiled, each lets go of the GIL, so they share the cores
        self.words, self.pieces = thread_map(lambda strings, stop: edges(strings, self.strings, max_len, self._kernels),
                                             [corpus.words, self.strings])
        self.weights = np.ascontiguousarray(corpus.counts, dtype=np.int64)

    def seed(self) -> Model:
        return Model(np.arange(len(self.seed_scores), dtype=np.int64), self.seed_scores.copy())

    def expected(self, model: Model) -> np.ndarray:
        """The E-step's expected counts alone (a replayed model's table), by position."""
        return self._e_step(model)[0]

    def _position(self, model: Model) -> tuple[np.ndarray, np.float32]:
        cur = np.full(len(self.strings), -1, dtype=np.int64)
        cur[model.seeds] = np.arange(len(model.seeds))
        return cur, np.float32(model.scores.min() - UNKNOWN_PENALTY)

    def em(self, model: Model) -> tuple[Model, np.ndarray, float]:
        """One EM iteration: the new model, the expected counts of its pieces, the objective."""
        expected, objective = self._e_step(model)
        keep = expected >= EXPECTED_MIN
        counts = expected[keep]
        total = np.cumsum(counts, dtype=np.float32)[-1] if len(counts) else np.float32(0.0)
        logsum = np.float32(digamma(np.array([total], dtype=np.float64))[0])
        scores = (digamma(counts.astype(np.float64)) - np.float64(logsum)).astype(np.float32)
        return Model(model.seeds[keep], scores), counts, float(objective)

    def _e_step(self, model: Model) -> tuple[np.ndarray, np.float32]:
        cur, unk = self._position(model)
        lengths, off, start, size, seed = self.words
        if self._workers == 1:
            return self._kernels.e_step(lengths, self.weights, off, start, size, seed, cur, model.scores, unk,
                                        self.threads, len(model.seeds))
        total = int(self.weights.sum())
        expected, objective = np.zeros(len(model.seeds), np.float32), np.float32(0.0)
        for mine, obj in self._by_thread(lambda t, mine: self._kernels.e_thread(
                t, self.threads, lengths, self.weights, off, start, size, seed, cur, model.scores, unk, total, mine),
                len(model.seeds)):
            expected += mine  # float32, one thread's after the other's, as its merge adds them
            objective = np.float32(objective + obj)
        return expected, objective

    def best(self, model: Model) -> tuple[np.ndarray, float, int]:
        """Each piece's count on the best paths, the loss and the tokens."""
        cur, unk = self._position(model)
        lengths, off, start, size, seed = self.words
        if self._workers == 1:
            counts, loss, tokens = self._kernels.best_paths(lengths, self.weights, off, start, size, seed, cur,
                                                            model.scores, unk, self.threads, len(model.seeds))
            return counts, float(loss), int(tokens)
        counts, loss, tokens = np.zeros(len(model.seeds), np.float32), 0.0, 0
        for mine, (part, made) in self._by_thread(lambda t, mine: self._kernels.best_thread(
                t, self.threads, lengths, self.weights, off, start, size, seed, cur, model.scores, unk, mine),
                len(model.seeds)):
            counts += mine
            loss += part
            tokens += made
        return counts, float(loss), int(tokens)

    def _by_thread(self, run, size: int):
        """(array, result) of each virtual thread in order, `run(t, array)` filling its array:
        `self._workers` of them at a time on threads of their own."""
        used = min(self.threads, len(self.weights))
        for first in range(0, used, self._workers):
            share = list(range(first, min(used, first + self._workers)))
            arrays = [np.zeros(size, np.float32) for _ in share]
            results = thread_map(lambda t, stop: run(t, arrays[t - first]), share)
            yield from zip(arrays, results)

    def prune(self, model: Model, desired: int, best: tuple[np.ndarray, float, int]) -> Pruning:
        """`best`: the model's best paths, `self.best(model)` (the caller keeps them for its row)."""
        cur, unk = self._position(model)
        lengths, off, start, size, seed = self.pieces
        keep, alt_off, alt_ids = self._kernels.alternatives(model.seeds, lengths, off, start, size, seed, cur,
                                                            model.scores, unk)
        counts, loss, tokens = best
        total = np.float32(np.cumsum(counts.astype(np.float64))[-1])  # std::accumulate(..., 0.0)
        kinds, loss_of = self._kernels.losses(counts, keep, alt_off, alt_ids, total)
        stay = np.flatnonzero(kinds == STAYS)
        candidates = np.flatnonzero(kinds == WEIGHED)
        candidates = candidates[np.lexsort((candidates, -loss_of[candidates]))]  # most lost first, then by position
        room = max(0, max(desired, int(self.shrinking * np.float32(len(model.seeds)))) - len(stay))
        kept = np.concatenate([stay, candidates[:room]])
        removable = np.flatnonzero(kinds == GOES)
        removable = removable[np.lexsort((removable, model.scores[removable]))]
        gone = np.concatenate([removable, candidates[room:][::-1]])
        losses = {int(i): float(loss_of[i]) for i in np.concatenate([removable, candidates]).tolist()}
        return Pruning(Model(model.seeds[kept], model.scores[kept]), gone, losses, counts, loss, tokens)

    def unreachable(self, model: Model) -> np.ndarray:
        """Positions of the pieces `PruneUnreachableSentencePieces` removes."""
        cur, unk = self._position(model)
        lengths, off, start, size, seed = self.pieces
        return np.flatnonzero(self._kernels.unreachable(model.seeds, lengths, off, start, size, seed, cur,
                                                        model.scores, unk))

    def finalize(self, model: Model, room: int, required: list[str]) -> tuple[list[str], np.ndarray]:
        """The final pieces (strings) and scores, best first, at most `room` of them."""
        score = {self.strings[s]: sc for s, sc in zip(model.seeds.tolist(), model.scores)}
        low = model.scores.min()
        final: dict[str, np.float32] = {}
        penalty = np.float32(0.0)
        for ch in required:
            if ch in score:
                final[ch] = score[ch]
            else:
                final[ch] = np.float32(low + penalty)
                penalty = np.float32(penalty + FINAL_PENALTY_STEP)
        for piece in sorted(score, key=lambda p: (-score[p], p.encode("utf-8"))):
            if piece in final:
                continue
            if len(final) >= room:
                break
            final[piece] = score[piece]
        ordered = sorted(final, key=lambda p: (-final[p], p.encode("utf-8")))
        return ordered, np.array([final[p] for p in ordered], dtype=np.float32)


def digamma(x: np.ndarray) -> np.ndarray:
    """SentencePiece's `Digamma` on each value, its operations in its order (double)."""
    x = np.asarray(x, dtype=np.float64).copy()
    result = np.zeros_like(x)
    small = x < 7
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 7
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return result + (np.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
                     - (127.0 / 30720.0) * xx4 * xx4)


def edges(strings: list[str], pieces: list[str], max_len: int, kernels=None):
    """Every occurrence of a piece in the strings, by string, start and length: (string lengths,
    offsets into the edges by string, starts, lengths, piece indices). Substrings are matched by
    a 64-bit polynomial hash of their code points (hashing.py), prefix by prefix: compiled, a
    string at a time (`spmwalk.walk`), else a length at a time over all of them in numpy."""
    codes, lens, offs = code_points(strings)
    p_codes, p_lens, p_offs = code_points(pieces)
    p_hash = np.zeros(len(pieces), dtype=np.uint64)
    prefixes = []
    alive = np.arange(len(pieces))
    for length in range(1, int(p_lens.max(initial=0)) + 1):
        alive = alive[p_lens[alive] >= length]
        p_hash[alive] = p_hash[alive] * BASE + p_codes[p_offs[alive] + length - 1]
        prefixes.append(p_hash[alive])
    prefix = np.unique(np.concatenate(prefixes)) if prefixes else np.zeros(0, np.uint64)
    if kernels is not None and kernels.compiled:
        off, start, size, which = kernels.walk(codes, lens, offs, max_len, BASE, prefix, p_hash)
        return lens.astype(np.int64), off, start, size, which
    order = np.argsort(p_hash)
    table = p_hash[order]
    ends = np.repeat(offs + lens, lens)
    pos = np.arange(len(codes), dtype=np.int64)
    h = np.zeros(len(codes), dtype=np.uint64)
    at, size, which = [], [], []
    for length in range(1, max_len + 1):
        ok = pos + length <= ends[pos]
        pos, h = pos[ok], h[ok]
        if not len(pos) or not len(prefix):
            break
        h = h * BASE + codes[pos + length - 1]
        k = np.minimum(np.searchsorted(prefix, h), len(prefix) - 1)
        going = prefix[k] == h
        pos, h = pos[going], h[going]
        j = np.minimum(np.searchsorted(table, h), len(table) - 1)
        hit = table[j] == h
        at.append(pos[hit])
        size.append(np.full(int(hit.sum()), length, dtype=np.int64))
        which.append(order[j[hit]])
    at = np.concatenate(at) if at else np.zeros(0, np.int64)
    size = np.concatenate(size) if size else np.zeros(0, np.int64)
    which = np.concatenate(which) if which else np.zeros(0, np.int64)
    string = np.repeat(np.arange(len(strings)), lens)[at]
    start = at - offs[string]
    order = np.lexsort((size, at))  # by position in the text (so by string, then start), then length
    off = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(np.bincount(string, minlength=len(strings)), out=off[1:])
    return (lens.astype(np.int64), off, np.ascontiguousarray(start[order], dtype=np.int64),
            np.ascontiguousarray(size[order], dtype=np.int64), np.ascontiguousarray(which[order], dtype=np.int64))


# the kernels as plain Python, where numba is missing or the work would not pay for loading it
PLAIN = SimpleNamespace(compiled=False, e_step=spmlattice.e_step, best_paths=spmlattice.best_paths,
                        e_thread=spmlattice.e_thread, best_thread=spmlattice.best_thread,
                        alternatives=spmpieces.alternatives, unreachable=spmpieces.unreachable,
                        losses=spmpieces.losses, group_hashes=first_and_inverse)


def _kernels(work: int):
    """spmkernel (compiled) where numba runs and the work pays for loading it, else `PLAIN`."""
    if jit.available(work):
        from tokworkbench.core.unigram import spmkernel
        return spmkernel
    return PLAIN
