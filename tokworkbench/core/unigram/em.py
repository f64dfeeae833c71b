"""`--algorithm em`: spm_train's Unigram training (sentencepiece 0.2.3), exactly, laid out as
the learner's rounds; the arithmetic is spmtrain.py's, the words spmcorpus.py's.

Round 0 is the seed after `sub_iterations` EM iterations. Each round then is one turn of
spm_train's loop: prune; then, while the model is larger than `desired` (1.1 x the whole
vocabulary), `sub_iterations` EM iterations; once it is not, no EM but the finalization:
unreachable pieces go, every required character comes back, and the best-scored pieces fill
the room the whole vocabulary leaves after its meta and byte pieces. A round's state keeps the
trainer's model (its pieces in its own order, which its float32 sums follow); the learner
sees them best first (then by bytes), which after the last round are spm_train's ids.

A model replayed onto this corpus (`vocabulary`) is round 0 as it is, with no EM.
"""

from dataclasses import dataclass

import numpy as np

from tokworkbench.core.unigram.spmtrain import SpmTrainer
from tokworkbench.core.unigram.state import Model, RoundAnalysis, RoundState

FINAL_MARGIN = 1.1  # prune to 1.1 x the target, then finalize (desired_vocab_size_)
EM_STAGE, FINAL_STAGE = "em", "final"


@dataclass(frozen=True)
class Target:
    """Where em's pruning stops, as spm_train counts: rounds prune until the model has at
    most `desired` pieces (1.1 x the whole vocabulary, meta and byte pieces included), then
    the last keeps `pieces`, what the whole vocabulary has room for after them. 0, 0: none."""

    pieces: int
    desired: int


@dataclass(frozen=True)
class _Next:
    """What the round after a state makes of it (`EmEngine._next`)."""

    state: RoundState | None  # None until asked for: the next round's EM runs when it is made
    kept: Model
    analysis: RoundAnalysis
    final: bool


class EmEngine:
    """What the learner calls for `--algorithm em`: the seed, a round, and the analysis that says
    what the next round removes."""

    def __init__(self, corpus, config, vocabulary: list[tuple[str, float]] | None = None):
        self.config = config
        self.trainer = SpmTrainer(corpus, config.seed_size, config.max_piece_length, config.split_digits,
                                  config.shrinking_factor, config.num_threads, vocabulary)
        self.required = [ch for ch, _ in corpus.required]
        self._next: tuple | None = None  # (state, target, what its next round does)
        self._best: tuple | None = None  # (state, its best paths: counts, loss, tokens)

    # -- the learner's calls -----------------------------------------------------------------
    def seed(self) -> RoundState:
        model = self.trainer.seed()
        if self.trainer.replayed:
            counts = self.trainer.expected(model)
            return self._state(model, counts, EM_STAGE)
        return self._em(model)

    def round(self, state: RoundState, going: set[str], target: Target) -> RoundState:
        step = self._step(state, target)
        if step.final:
            return step.state
        return self._em(step.kept)

    def analyze(self, state: RoundState, target: Target) -> RoundAnalysis:
        return self._step(state, target).analysis

    def totals(self, state: RoundState) -> tuple[float, int]:
        """The loss and the tokens of a state: its best paths alone, without the pruning pass
        that `analyze` adds (a run's last round needs none)."""
        _, loss, tokens = self._best_paths(state)
        return loss, tokens

    # -- internals -------------------------------------------------------------------------
    def _em(self, model: Model) -> RoundState:
        counts = None
        for _ in range(self.config.sub_iterations):
            model, counts, _ = self.trainer.em(model)
        return self._state(model, counts, EM_STAGE)

    def _state(self, model: Model, counts: np.ndarray, stage: str) -> RoundState:
        """The trainer's model as a round's state: best first, then by UTF-8 bytes."""
        strings = self.trainer.strings
        pieces = [strings[s] for s in model.seeds.tolist()]
        order = sorted(range(len(pieces)), key=lambda i: (-model.scores[i], pieces[i].encode("utf-8")))
        return RoundState([pieces[i] for i in order], counts[order].astype(np.float64).tolist(),
                          model.scores[order].astype(np.float64).tolist(), model.seeds[order], model=model,
                          stage=stage)

    def _best_paths(self, state: RoundState):
        if self._best is None or self._best[0] is not state:
            self._best = (state, self.trainer.best(state.model))
        return self._best[1]

    def _step(self, state: RoundState, target: Target) -> _Next:
        """What the round after `state` does, worked out once per state and target."""
        if self._next is not None and self._next[0] is state and self._next[1] == target:
            return self._next[2]
        model = state.model
        strings = self.trainer.strings
        if state.stage == FINAL_STAGE:
            counts, loss, tokens = self._best_paths(state)
            step = _Next(state, model, RoundAnalysis(loss, {}, [], tokens, dict(zip(state.pieces, state.freqs))),
                         True)
        else:
            pruning = self.trainer.prune(model, target.desired, self._best_paths(state))  # the row's, if taken
            losses = {strings[model.seeds[i]]: loss for i, loss in pruning.losses.items()}
            going = [strings[s] for s in model.seeds[pruning.gone].tolist()]
            use = dict(zip(state.pieces, state.freqs))
            kept = pruning.kept
            final = len(kept.seeds) <= target.desired
            made = None
            if final:
                made = self._final(kept, target, use)
                left = set(made.pieces)
                going += [strings[s] for s in kept.seeds.tolist() if strings[s] not in left]
            step = _Next(made, kept, RoundAnalysis(pruning.loss, losses, going, pruning.tokens, use, final), final)
        self._next = (state, target, step)
        return step

    def _final(self, model: Model, target: Target, use: dict) -> RoundState:
        """The unreachable pieces gone, then `FinalizeSentencePieces` to the room the target
        leaves (every piece there is, without one)."""
        keep = np.ones(len(model.seeds), dtype=bool)
        keep[self.trainer.unreachable(model)] = False
        reachable = Model(model.seeds[keep], model.scores[keep])
        room = target.pieces if target.pieces > 0 else len(reachable.seeds) + len(self.required)
        pieces, scores = self.trainer.finalize(reachable, room, self.required)
        seeds = np.array([self.trainer.index[p] for p in pieces], dtype=np.int64)
        counts = np.array([use.get(p, 0.0) for p in pieces], dtype=np.float64)
        return self._state(Model(seeds, scores), counts, FINAL_STAGE)
