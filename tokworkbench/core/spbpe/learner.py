"""The SentencePiece-BPE learner the workbench and the CLI drive: one step is one merge of
spm_train's BPE loop (spbpe/training.py) over its sentences (spbpe/sentences.py).

    SpBpeConfig(character_coverage=0.9995, byte_fallback=False, max_piece_length=16,
                rule="nmt_nfkc", split_digits=False, user_defined_symbols=(),
                control_symbols=(), required_chars="")
    learner = SpBpeLearner(texts, config)       each line of each text is a sentence
    learner.step() / undo() / run(vocab_size)   undo is exact (the loop's log played back)
    learner.model() -> SpBpeModel               spm_train's model: <unk> <s> </s>, the 256 byte
                                                pieces with byte_fallback, the merges (score
                                                -index), then the characters, most frequent first
                                                (control, then user-defined symbols right after
                                                </s>, as spm_train's InitMetaPieces puts them)

Ids are the current model's: a merge's id never changes (3 + its index, 259 + with byte
fallback), a character's moves up by one with each merge, as spm_train numbers them after the
merges. A history record's pair holds the ids of the model right after its merge.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from tokworkbench.core.curve import compression_curve
from tokworkbench.core.errors import CorpusError, SettingError, TrainingError
from tokworkbench.core.inspection.segments import chunk_spans
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.models.rows import PairRow
from tokworkbench.core.models.steps import steps_to_make
from tokworkbench.core.spbpe.model import BYTE, CONTROL, KIND, NORMAL, UNKNOWN, USER_DEFINED, SpBpeModel
from tokworkbench.core.spbpe.sentences import load_sentences
from tokworkbench.core.spbpe.training import NONE, SpMergeLoop
from tokworkbench.core.text.bytepieces import BYTE_PIECES
from tokworkbench.core.text.spcoverage import check_coverage
from tokworkbench.core.text.spoptions import check_required_chars, check_symbols
from tokworkbench.core.text.sprules import RULES, sp_rule
from tokworkbench.core.units import Units

META_PIECES = (("<unk>", UNKNOWN), ("<s>", CONTROL), ("</s>", CONTROL))  # spm_train's ids 0, 1, 2
_BYTE_PIECES = frozenset(BYTE_PIECES)
ROLES = Roles.of({"unk": "<unk>", "bos": "<s>", "eos": "</s>"})


@dataclass(frozen=True)
class SpBpeConfig:
    character_coverage: float = 0.9995
    byte_fallback: bool = False
    max_piece_length: int = 16
    rule: str = "nmt_nfkc"  # spm_train's --normalization_rule_name
    split_digits: bool = False
    user_defined_symbols: tuple[str, ...] = ()
    control_symbols: tuple[str, ...] = ()
    required_chars: str = ""

    units = Units.CHAR

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return tuple(p for p, _ in META_PIECES) + self.control_symbols

    def __post_init__(self):
        check_coverage(self.character_coverage)
        if not (isinstance(self.max_piece_length, int) and 1 <= self.max_piece_length <= 512):
            raise SettingError("max_piece_length", self.max_piece_length, "must be between 1 and 512")
        if self.rule not in RULES:
            raise TrainingError(f"unknown SentencePiece normalization rule {self.rule!r}; choose {' or '.join(RULES)}")
        if not isinstance(self.split_digits, bool):
            raise SettingError("split_digits", self.split_digits, "must be true or false")
        reserved = tuple(p for p, _ in META_PIECES)
        check_symbols("control_symbols", self.control_symbols, reserved)
        check_symbols("user_defined_symbols", self.user_defined_symbols, reserved, self.control_symbols)
        if self.byte_fallback:
            for field, symbols in (("control_symbols", self.control_symbols),
                                   ("user_defined_symbols", self.user_defined_symbols)):
                clash = next((s for s in symbols if s in _BYTE_PIECES), None)
                if clash is not None:
                    raise SettingError(field, clash, "is one of the byte pieces --byte-fallback adds")
        check_required_chars(self.required_chars)


@dataclass(frozen=True)
class SpMergeRecord:
    """One merge; `pair` and `new_id` are ids of the model right after it, `length` the
    tokens over the corpus then."""

    step: int
    pair: tuple[int, int]
    new_id: int
    count: int
    replacements: int
    length: int


@dataclass(frozen=True)
class SpMergeRow:
    record: SpMergeRecord
    text: str
    compression: float


class SpBpeLearner:
    kind = KIND
    chunk_table = None  # counts no other kind can reuse: it trains on sentences

    def __init__(self, texts: Iterable[str], config: SpBpeConfig = SpBpeConfig(), keep_layout: bool = False,
                 progress=None, counted=None):
        texts = list(texts)
        if counted is not None and not texts:
            raise CorpusError("SentencePiece BPE trains on sentences (the lines of the text); a count file holds "
                              "chunks: give the text itself")
        self.config = config
        self._texts = texts if keep_layout else []  # what the corpus pane draws, as the model sees it
        self._shown: dict[int, tuple[list[str], str]] = {}  # doc -> its lines normalized, and them joined
        # user-defined symbols pass the normalizer as they are, as SentencePiece's prefix matcher keeps them
        self.normalizer = replace(sp_rule(config.rule), user=config.user_defined_symbols)
        self.metas = [p for p, _ in META_PIECES] + list(config.control_symbols) + list(config.user_defined_symbols)
        self.meta_types = [t for _, t in META_PIECES] + [CONTROL] * len(config.control_symbols) \
            + [USER_DEFINED] * len(config.user_defined_symbols)
        self.byte_start = len(self.metas)
        if config.byte_fallback:
            self.metas += list(BYTE_PIECES)
            self.meta_types += [BYTE] * 256
        corpus = load_sentences(texts, self.normalizer, self.metas, config.character_coverage, config.required_chars)
        self.documents = len(texts)
        self.chars = sum(len(t) for t in texts)
        self.bytes = sum(len(t.encode("utf-8")) for t in texts)
        self.sentences = corpus.sentences
        self.required = [c for c, _ in corpus.required]
        self._char_index = {c: i for i, c in enumerate(self.required)}
        self._loop = SpMergeLoop(corpus.words, corpus.counts, config.max_piece_length, config.split_digits)
        self.initial_tokens = self._loop.tokens
        self.base_size = len(self.metas) + len(self.required)
        self.history: list[SpMergeRecord] = []
        self._index_cache: tuple | None = None  # (merges, last symbol, symbol -> merge index)

    # -- ids ---------------------------------------------------------------------------------
    @property
    def merges(self) -> int:
        return len(self._loop.pieces)

    def _id(self, sid: int, merges: int | None = None) -> int:
        """The id of a made symbol in the model with `merges` merges (default: now)."""
        loop = self._loop
        merges = self.merges if merges is None else merges
        if loop.left[sid] == NONE:
            index = self._char_index.get(loop.text[sid])
            return 0 if index is None else len(self.metas) + merges + index  # ▅: the unknown piece
        return len(self.metas) + self._piece_index[sid]

    @property
    def _piece_index(self) -> dict[int, int]:
        pieces = self._loop.pieces
        cached = self._index_cache
        if cached is None or cached[0] != len(pieces) or (pieces and cached[1] != pieces[-1]):
            cached = self._index_cache = (len(pieces), pieces[-1] if pieces else None,
                                          {sid: i for i, sid in enumerate(pieces)})
        return cached[2]

    def token(self, tid: int) -> str:
        metas, merges = len(self.metas), self.merges
        if not 0 <= tid < self.vocab_size:
            raise TrainingError(f"id {tid} is not in this vocabulary of {self.vocab_size:,}")
        if tid < metas:
            return self.metas[tid]
        if tid < metas + merges:
            return self._loop.text[self._loop.pieces[tid - metas]]
        return self.required[tid - metas - merges]

    def token_text(self, tid: int) -> str:
        return self.token(tid)

    def token_bytes(self, tid: int) -> bytes:
        """A byte piece is its byte; any other piece its text's UTF-8."""
        if self.byte_start <= tid < len(self.metas):
            return bytes([tid - self.byte_start])
        return self.token(tid).encode("utf-8")

    # -- reading -----------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self.base_size + self.merges

    @property
    def total_tokens(self) -> int:
        return self._loop.tokens

    @property
    def compression(self) -> float:
        return self.initial_tokens / self.total_tokens if self.total_tokens else 1.0

    def next_step(self) -> tuple[int, int] | None:
        chosen = self._loop.chosen
        return None if chosen is None else (self._id(chosen.left), self._id(chosen.right))

    def step_text(self, next_step) -> str:
        chosen = self._loop.chosen
        return "" if chosen is None else self._loop.text[chosen.sid]

    def steps_for_vocab(self, vocab_size: int) -> int:
        if not isinstance(vocab_size, int) or vocab_size < self.base_size:
            raise TrainingError(f"vocabulary size {vocab_size} is below what every model here holds: "
                                f"{len(self.metas)} meta pieces and {len(self.required)} characters "
                                f"({self.base_size}); lower --character-coverage or raise the size")
        return max(0, vocab_size - self.vocab_size)

    def next_rows(self, k: int, query: str = "") -> tuple[list[PairRow], int]:
        loop = self._loop
        freq, text = loop.freq, loop.text
        order = sorted((s for s in loop.active if text[s] not in loop.dup and (not query or query in text[s])),
                       key=lambda s: (-freq[s], len(text[s]), text[s].encode("utf-8"), s))
        rows = [PairRow(self._id(loop.left[s]), self._id(loop.right[s]), freq[s], text[loop.left[s]],
                          text[loop.right[s]], text[s], text[s].encode("utf-8")) for s in order[:k]]
        return rows, len(order)

    def history_rows(self, k: int) -> list[SpMergeRow]:
        rows, _ = self.history_page(-k, None) if k > 0 else ([], 0)
        return rows

    def history_page(self, start: int, stop: int | None) -> tuple[list[SpMergeRow], int]:
        records = self.history[start:stop]
        text = self._loop.text
        pieces = self._loop.pieces
        rows = [SpMergeRow(r, text[pieces[r.step - 1]], self.initial_tokens / r.length if r.length else 1.0)
                for r in records]
        return rows, len(self.history)

    def compression_curve(self, points: int) -> list[float]:
        return compression_curve(self.history, self.initial_tokens, lambda r: r.length, points)

    def token_lengths(self) -> list[int]:
        lengths = [len(self._loop.text[s]) for s in self._loop.pieces] + [1] * len(self.required)
        counts = [0] * (max(lengths, default=1) + 1)
        for n in lengths:
            counts[n] += 1
        return counts

    def model(self, with_history: bool = True) -> SpBpeModel:
        """spm_train's model of the merges so far (`TrainerInterface::Serialize`)."""
        merged = [self._loop.text[s] for s in self._loop.pieces]
        pieces = self.metas + merged + self.required
        types = self.meta_types + [NORMAL] * (len(merged) + len(self.required))
        scores = [0.0] * len(self.metas) + [-float(i) for i in range(len(merged) + len(self.required))]
        return SpBpeModel(tuple(pieces), tuple(scores), tuple(types), self.normalizer, True,
                          self.config.byte_fallback, ROLES)

    def model_key(self) -> tuple:
        return (self.merges, tuple(self._loop.pieces[-1:]))

    def window(self, doc: int, start: int, end: int) -> tuple[int, str, list, int]:
        """Document `doc` as the model sees it (each line normalized: ▁ for spaces, the dummy
        ▁ in front) from `start`, with the current model's tokens over the lines in view."""
        if not self._texts:
            return 0, "", [], 0
        doc = min(doc, len(self._texts) - 1)
        model = self.model(with_history=False)
        if doc not in self._shown:
            lines = [model.display_text(line) for line in self._texts[doc].split("\n")]
            self._shown[doc] = (lines, "\n".join(lines))
        lines, full = self._shown[doc]
        size = end - start
        start = max(0, min(start, max(0, len(full) - 1)))
        end = min(len(full), start + size)
        pieces, pos = [], 0
        for line in lines:
            if pos <= end and pos + len(line) >= start:
                at = pos
                for chunk, ids in model.display_chunks(line):
                    if at + len(chunk) > start and at < end:
                        pieces.append((at - start, chunk, ids))
                    at += len(chunk)
            pos += len(line) + 1
        spans = [s for s in chunk_spans(pieces, model.token, char_lengths=model.char_lengths)
                 if s.end > 0 and s.start < end - start]
        return start, full[start:end], spans, len(full)

    def corpus_summary(self) -> dict:
        return {"documents": self.documents, "chars": self.chars, "bytes": self.bytes,
                "tokens_before": self.initial_tokens}

    # -- training ----------------------------------------------------------------------------
    def step(self) -> SpMergeRecord | None:
        done = self._loop.merge()
        if done is None:
            return None
        chosen, replaced = done
        merges = self.merges
        record = SpMergeRecord(merges, (self._id(chosen.left, merges), self._id(chosen.right, merges)),
                               len(self.metas) + merges - 1, chosen.count, replaced, self._loop.tokens)
        self.history.append(record)
        return record

    def undo(self) -> SpMergeRecord | None:
        if not self.history or self._loop.unmerge() is None:
            return None
        return self.history.pop()

    def run(self, vocab_size: int | None = None, merges: int | None = None) -> Iterator[SpMergeRecord]:
        for _ in range(steps_to_make(self, vocab_size, merges, "merges")):
            record = self.step()
            if record is None:
                return
            yield record

    # -- moving training to another process ---------------------------------------------------
    def training_state(self) -> dict:
        return {"_loop": self._loop, "history": self.history}

    def restore_state(self, state: dict) -> None:
        vars(self).update(state)
        self._index_cache = None
