"""The Unigram learner the workbench and the CLI drive: one step is one pruning round.

API (the contract with the app; see models/protocol.py for the `Learner` half):

    UnigramConfig(normalizer="none", pre_tokenizer=metaspace, algorithm="course"|"em",
                  seed_size=300, prune_fraction=0.1, shrinking_factor=0.75,
                  sub_iterations=2, max_piece_length=16, split_digits=False,
                  user_defined_symbols=(), control_symbols=(), required_chars="",
                  character_coverage=1.0, byte_fallback=False)   the last six: em only
                                             (byte_fallback: spm_train's <unk> <s> </s>, the
                                             symbols, then <0x00>..<0xFF>, before the pieces)
    learner = UnigramLearner(texts, config, keep_layout=False, progress=None, counted=None)
    learner.kind                             its kind's name in the registry (core/registry/kinds.py)
    learner.step() -> RoundRow | None        one round (course: prune; em: prune, then EM)
    learner.undo() -> RoundRow | None        back to the previous round exactly
    learner.next_rows(k, query) -> (list[PieceRow], total)   removal order: the pieces the
                                             next round removes first (removed_next=True), then
                                             the other pieces by loss increase, ascending, then
                                             the single characters
    learner.history_rows(k) -> list[RoundRow] the newest k rounds, oldest first (round 0: seed)
    learner.history_page(start, stop) -> (list[RoundRow], total)   rows start:stop of them all
    learner.lattice(word) -> Lattice          the current vocabulary over one word, with the
                                             training Viterbi (course: start cost 1)
    learner.window(doc, start, end)           token spans for the corpus pane (model encoding)
    learner.model() -> UnigramModel           model.lattice(word), or unigram.lattice(model, word)
    learner.vocab_size                       the whole vocabulary, as spm_train's vocab_size and
                                             every kind count it: <unk> and the other meta,
                                             symbol and byte pieces, then the trained pieces
                                             (what the target and --vocab-size compare with)

Every round's vocabulary (pieces with frequencies and scores) is kept, so undo is a pop.
"""

import functools
from collections.abc import Iterable, Iterator
from dataclasses import replace

from tokworkbench.core.curve import compression_curve
from tokworkbench.core.errors import TrainingError
from tokworkbench.core.inspection.segments import layout_window
from tokworkbench.core.models.roles import NO_ROLES
from tokworkbench.core.models.steps import steps_to_make
from tokworkbench.core.text.chunks import ChunkCounts, count_chunks, text_sizes
from tokworkbench.core.text.corpus import require_text
from tokworkbench.core.unigram import course
from tokworkbench.core.unigram.config import SP_META, SP_ROLES, UnigramConfig, meta_pieces
from tokworkbench.core.unigram.em import FINAL_MARGIN, FINAL_STAGE, Target
from tokworkbench.core.unigram.model import UnigramModel, build_lattice
from tokworkbench.core.unigram.rows import Lattice, PieceRow, RoundRow
from tokworkbench.core.unigram.spconventions import SpConventions
from tokworkbench.core.unigram.spmcorpus import SpmReader, from_chunks
from tokworkbench.core.unigram.state import RoundAnalysis, RoundState
from tokworkbench.core.unigram.viterbi import UNK_PENALTY, Vocab


class UnigramLearner:
    kind = "unigram"

    def __init__(self, texts: Iterable[str], config: UnigramConfig = UnigramConfig(), keep_layout: bool = False,
                 progress=None, counted: ChunkCounts | None = None,
                 vocabulary: list[tuple[str, float]] | None = None, metas: list[str] | None = None):
        """`vocabulary` replays another model on this corpus: round 0 is its pieces and scores
        (plus any character it lacks), and the rounds after it prune by `em`; `metas`, the
        pieces ahead of them (the replayed model's own, so that its ids stay), else the config's."""
        if vocabulary is not None and config.algorithm != "em":
            config = replace(config, algorithm="em")
        self.config = config
        self.metas = list(metas) if metas is not None else meta_pieces(config)
        reader = SpmReader(config.normalizer, self.metas) if config.algorithm == "em" else None
        if reader is not None and counted is None and not keep_layout:
            # em trains on the lines alone: the session's chunks are counted only if asked for
            # (a kind switch, a replay), not on every command-line run (a sixth of one)
            self._texts = list(texts)
            # first: a lone surrogate is named here, as counting the chunks names it
            self.documents, self.chars, self.bytes = text_sizes(self._texts, config.normalizer)
            require_text(self.chars)
            for text in self._texts:
                reader.add(text)
            self.layouts = []
        else:
            if reader is not None and counted is None:  # em: spm_train's sentences, in the pass that counts the chunks
                texts = reader.feeding(texts)
            elif reader is not None:  # the chunks were counted before; the lines come from the texts, if any
                for text in texts:
                    reader.add(text)
            table = counted or count_chunks(texts, config.normalizer, config.pre_tokenizer, keep_layout, progress)
            self.chunk_table = table
            self.layouts = table.layouts or []
            self.documents, self.chars, self.bytes = table.documents, table.chars, table.bytes
            self.initial_tokens = sum(len(w) * f for w, f in zip(self.words, self.freqs))
            require_text(self.initial_tokens)  # both algorithms need a character to build on
        self.target: int | None = None  # em never prunes below it (set by steps_for_vocab)
        if config.algorithm == "course":
            course.check_chunk_lengths(self.words)
            pieces, freqs = course.seed_course(self.words, self.freqs, config.seed_size, config.max_piece_length)
            state = RoundState(pieces, [float(f) for f in freqs], course.scores(freqs))
            self._engine = None
            self._chars = sum(1 for p in state.pieces if len(p) == 1)
        else:
            from tokworkbench.core.unigram.em import EmEngine
            corpus = (reader.finish(config.character_coverage, config.required_chars) if reader.texts
                      else from_chunks(self.words, self.freqs, config.character_coverage, config.required_chars))
            # the tokens em counts are over what spm_train trains on: its characters are the start
            self.initial_tokens = int(sum(len(w) * n for w, n in zip(corpus.words, corpus.counts.tolist())))
            self._engine = EmEngine(corpus, config, vocabulary)
            state = self._engine.seed()
            self._chars = len(self._engine.required)
        self._seed_edges: course.SeedLattices | None = None
        self.base_size = len(self.metas) + self._chars  # the smallest vocabulary: no character goes
        self._states: list[RoundState] = [state]
        self._analyses: list[RoundAnalysis | None] = [None]
        self.history: list[RoundRow] = []
        self._encoder_key: tuple | None = None  # which state `_encoder_model` was made from
        self._encoder_model: UnigramModel | None = None
        loss, tokens = self._totals()
        self._seed_row = RoundRow(0, self._whole(state), loss, (), tokens)

    # -- the session's chunks ------------------------------------------------------------------
    @functools.cached_property
    def chunk_table(self) -> ChunkCounts:
        """Counted on first use where em read its lines alone (the constructor sets it otherwise)."""
        config = self.config
        return count_chunks(self._texts, config.normalizer, config.pre_tokenizer)

    @functools.cached_property
    def chunk_strings(self) -> list[str]:
        return self.chunk_table.chunks

    @functools.cached_property
    def words(self) -> list[str]:
        return list(self.chunk_table.chunks)

    @functools.cached_property
    def freqs(self) -> list[int]:
        return [int(f) for f in self.chunk_table.counts.tolist()]

    # -- reading ---------------------------------------------------------------------------
    @property
    def state(self) -> RoundState:
        return self._states[-1]

    @property
    def vocab_size(self) -> int:
        return self._whole(self.state)

    def _whole(self, state: RoundState) -> int:
        """The vocabulary a model of `state` has: the pieces ahead of the trained ones, and those."""
        return len(self.metas) + len(state.pieces)

    @property
    def total_tokens(self) -> int:
        return self._totals()[1]

    @property
    def compression(self) -> float:
        return self.initial_tokens / self.total_tokens if self.total_tokens else 1.0

    @property
    def loss(self) -> float:
        return self._totals()[0]

    @property
    def start_cost(self) -> float:
        return course.COURSE_START_COST if self.config.algorithm == "course" else 0.0

    def token(self, tid: int) -> str:
        metas = len(self.metas)
        return self.metas[tid] if tid < metas else self.state.pieces[tid - metas]

    def _piece_ids(self) -> dict[str, int]:
        """Each current piece's id in the model: piece k is id len(metas) + k."""
        return {p: i + len(self.metas) for i, p in enumerate(self.state.pieces)}

    def token_text(self, tid: int) -> str:
        return self.token(tid)

    def token_bytes(self, tid: int) -> bytes:
        return self.token(tid).encode("utf-8")

    def _totals(self) -> tuple[float, int]:
        """Loss and tokens. For em, the best paths alone when no analysis is at hand: the
        removal order an analysis adds is asked for only by the next round (or the table)."""
        found = self._analyses[-1]
        if found is None and self._engine is not None:
            return self._engine.totals(self.state)
        found = self._analysis()
        return found.loss, found.tokens

    def _analysis(self) -> RoundAnalysis:
        found = self._analyses[-1]
        if found is None:
            found = self._analyses[-1] = self._analyze(self.state)
        return found

    def _analyze(self, state: RoundState) -> RoundAnalysis:
        if self._engine is not None:
            return self._engine.analyze(state, self._target())
        cost = {p: -s for p, s in zip(state.pieces, state.scores)}
        if self._seed_edges is None:
            self._seed_edges = course.seed_lattices(self.words, cost)
        found = course.analyze(self.words, self.freqs, state.pieces, cost, self.config.prune_fraction,
                               self._seed_edges)
        tokens = sum(len(path) * f for path, f in zip(found.paths, self.freqs))
        return RoundAnalysis(found.loss, found.increases, found.to_remove, tokens, dict(zip(state.pieces, state.freqs)))

    def _target(self) -> Target:
        """What em prunes toward, counted as spm_train counts: rounds until 1.1 x the whole
        vocabulary, then the trained pieces the whole vocabulary has room for."""
        if self.target is None:
            return Target(0, 0)
        return Target(self.target - len(self.metas), int(self.target * FINAL_MARGIN))

    # -- the learner protocol --------------------------------------------------------------
    def next_step(self) -> tuple[str, ...] | None:
        """The pieces the next round removes, or None when no round is left: none can go (em:
        the model is final; its finalization is a round, which may remove none)."""
        found = self._analysis()
        return tuple(found.to_remove) if found.to_remove or found.finishes else None

    def step_text(self, next_step) -> str:
        return " ".join(next_step)

    def steps_for_vocab(self, vocab_size: int) -> int:
        """Rounds still needed to bring the vocabulary to `vocab_size` or below (course rounds
        may go below: each removes its share whatever the target); em's, to its finalization,
        which spm_train's loop always ends with."""
        chars, metas = self._chars, len(self.metas)
        if vocab_size < self.base_size:
            ahead = f"{metas} pieces ahead of the trained ones" if metas > 1 else "<unk>"
            raise TrainingError(f"vocabulary size {vocab_size} is below the distinct characters ({chars}) and "
                                f"{ahead}; Unigram keeps every character (em: those --character-coverage keeps)")
        if self._engine is not None and vocab_size != self.target:
            self._analyses[-1] = None  # em's pruning keeps at least the target: ask again
        self.target = vocab_size
        goal = self._target()
        n, rounds = self._whole(self.state) - metas, 0
        if self._engine is not None:
            if self.state.stage == FINAL_STAGE:
                return 0
            while n > goal.desired:  # EM's M-step may drop more, never fewer
                n = max(goal.desired, chars, min(n - 1, int(n * self.config.shrinking_factor)))
                rounds += 1
            return max(rounds, 1)  # the round that reaches the goal also finalizes
        while n > goal.pieces:
            n -= min(max(1, int(n * self.config.prune_fraction)), n - chars)
            rounds += 1
            if n <= chars:
                break
        return rounds

    def next_rows(self, k: int, query: str = "") -> tuple[list[PieceRow], int]:
        state, found = self.state, self._analysis()
        ids = self._piece_ids()
        score = dict(zip(state.pieces, state.scores))
        going = {p: r for r, p in enumerate(found.to_remove)}
        order = sorted(range(len(state.pieces)), key=lambda i: _rank(state.pieces[i], going, found.increases))
        picked = [state.pieces[i] for i in order if not query or query in state.pieces[i]]
        rows = [PieceRow(p, ids[p], score[p], found.use.get(p, 0.0), found.increases.get(p), p in going)
                for p in picked[:k]]
        return rows, len(picked)

    def history_rows(self, k: int) -> list[RoundRow]:
        rows = [self._seed_row] + self.history
        return rows[-k:] if k > 0 else []

    def history_page(self, start: int, stop: int | None) -> tuple[list[RoundRow], int]:
        """Rows start:stop of the rounds table (row i is round i, 0 the seed), and how many."""
        rows = [self._seed_row] + self.history
        return rows[start:stop], len(rows)

    def compression_curve(self, points: int) -> list[float]:
        return compression_curve(self.history, self.initial_tokens, lambda r: r.tokens, points)

    def token_lengths(self) -> list[int]:
        counts = [0, 0]
        for p in self.state.pieces:
            if len(p) >= len(counts):
                counts.extend([0] * (len(p) + 1 - len(counts)))
            counts[len(p)] += 1
        return counts

    def model(self, with_history: bool = True) -> UnigramModel:
        state = self.state
        pieces = tuple((m, 0.0) for m in self.metas) + tuple(zip(state.pieces, state.scores))
        users = len(self.config.user_defined_symbols)
        special = len(self.metas) - users - 256 * self.config.byte_fallback  # <unk> <s> </s>, the controls
        history = tuple(self.history_rows(len(self.history) + 1)) if with_history else ()
        # EM is SentencePiece's training: its model keeps SentencePiece's dummy prefix and float32
        # sentence Viterbi, so a written .model gives the same ids (issue 25 item 7)
        sentencepiece = self.config.algorithm == "em" and bool(self.config.pre_tokenizer.rewrites)
        return UnigramModel(pieces, self.config.normalizer, self.config.pre_tokenizer, history,
                            self.config.algorithm, self.start_cost, specials=tuple(range(special)),
                            user_defined=tuple(range(special, special + users)), float32=sentencepiece,
                            sp_conventions=SpConventions(collapse=False) if sentencepiece else None,
                            byte_pieces=tuple(range(special + users, len(self.metas))),
                            roles=SP_ROLES if self.metas[: len(SP_META)] == list(SP_META) else NO_ROLES)

    def model_key(self) -> tuple:
        return (len(self._states), tuple(self.state.pieces))

    def lattice(self, word: str) -> Lattice:
        """The current vocabulary over `word` with the training Viterbi (course: start cost 1)."""
        state = self.state
        cost = {p: -s for p, s in zip(state.pieces, state.scores)}
        ids = self._piece_ids()
        low = min(state.scores, default=0.0)
        return build_lattice(word, Vocab(cost), ids, self.start_cost, -(min(low, 0.0) - UNK_PENALTY))

    def window(self, doc: int, start: int, end: int) -> tuple[int, str, list, int]:
        return layout_window(self, doc, start, end)

    def chunk_tokens(self, index: int) -> list[int]:
        """Current ids of distinct chunk `index`, as the model encodes it."""
        return self._encoder().encode_word(self.chunk_strings[index])

    def chunk_tokens_between(self, index: int, lo: int, hi: int) -> tuple[int, list[int]]:
        """The tokens of a long chunk that overlap its chars [lo, hi), and where the first starts."""
        model = self._encoder()
        word = self.chunk_strings[index]
        spans = [(a, b) for a, b in model.segment(word) if b > lo and a < hi]
        if not spans:
            return lo, []
        return spans[0][0], model.encode_word(word[spans[0][0] : spans[-1][1]])

    def _encoder(self) -> UnigramModel:
        key = len(self._states), id(self.state)
        if self._encoder_key != key:
            self._encoder_model = self.model(with_history=False)
            self._encoder_key = key
        return self._encoder_model

    def corpus_summary(self) -> dict:
        return {"documents": self.documents, "chars": self.chars, "bytes": self.bytes,
                "tokens_before": self.initial_tokens}

    # -- training --------------------------------------------------------------------------
    def step(self) -> RoundRow | None:
        removed = self.next_step()
        if removed is None:
            return None
        state = self.state
        going = set(removed)
        if self._engine is not None:
            new = self._engine.round(state, going, self._target())
            kept = set(new.pieces)
            removed = tuple(p for p in state.pieces if p not in kept)  # EM's M-step may drop more
        else:
            keep = [i for i, p in enumerate(state.pieces) if p not in going]
            freqs = [state.freqs[i] for i in keep]
            new = RoundState([state.pieces[i] for i in keep], freqs, course.scores(freqs))
        self._states.append(new)
        self._analyses.append(None)
        loss, tokens = self._totals()
        row = RoundRow(len(self.history) + 1, self._whole(new), loss, tuple(removed), tokens)
        self.history.append(row)
        return row

    def undo(self) -> RoundRow | None:
        if not self.history:
            return None
        self._states.pop()
        self._analyses.pop()
        return self.history.pop()

    def run(self, vocab_size: int | None = None, merges: int | None = None) -> Iterator[RoundRow]:
        """Rounds until the vocabulary is at most `vocab_size`, or `merges` rounds."""
        for _ in range(steps_to_make(self, vocab_size, merges, "rounds")):
            if vocab_size is not None and self.steps_for_vocab(vocab_size) == 0:
                return
            row = self.step()
            if row is None:
                return
            yield row

    # -- moving training to another process -------------------------------------------------
    _FIXED = frozenset({"config", "_texts", "chunk_table", "layouts", "documents", "chars", "bytes", "chunk_strings",
                        "words", "freqs", "initial_tokens", "base_size", "_chars", "_engine", "_seed_row",
                        "_seed_edges"})

    def training_state(self) -> dict:
        return {k: v for k, v in vars(self).items() if k not in self._FIXED and not k.startswith("_encoder")}

    def restore_state(self, state: dict) -> None:
        vars(self).update(state)
        self._encoder_key = None  # the encoder was made from the state before


def _rank(piece: str, going: dict[str, int], increases: dict[str, float]) -> tuple:
    if piece in going:
        return (0, going[piece], 0.0)
    inc = increases.get(piece)
    return (2, 0, 0.0) if inc is None else (1, 0, inc)
