"""A learner that does not learn: a loaded tokenizer, inspected on a corpus (`tokworkbench -m`).

The session, the snapshot and the views work with any `Learner` (models/protocol.py); this one
wraps a frozen `Model` so the same screen shows a real tokenizer (cl100k, o200k, an HF file) on
the user's text. It makes no steps. Its history is the model's merges in rank order, made on
demand: cl100k has 100,000 and the history table asks only for the newest few hundred.

Nothing is encoded up front. A window of a document is encoded from a place a little before it
to a place a little after it where the preset patterns always cut (text/parallel.py's
`safe_cut`), so the ids are those of the whole document and the first screen of cl100k on the
sample texts needs a few hundred characters encoded, not the corpus. Token totals and per-token
counts over the whole corpus come from `measure`, which the app runs in a worker.
"""

import threading
from collections.abc import Iterator, Sequence

import numpy as np

from tokworkbench.core.bpe.tiebreak import TIE_BREAKS
from tokworkbench.core.bpe.trainer import MergeRecord, MergeRow
from tokworkbench.core.errors import TrainingError
from tokworkbench.core.inspection.segments import TokenSpan, chunk_spans
from tokworkbench.core.inspection.vocab import count_tokens
from tokworkbench.core.models.protocol import CharLengths, MergeRanked, Model, OwnDisplay, Scored
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.parallel import safe_cut
from tokworkbench.core.unigram.rows import PieceRow

REACH = (256, 4096)  # characters looked at beyond a window's edge for a safe cut, short first


class MergeHistory(Sequence):
    """A model's merges as training records, each built when asked for. Only the pair and the
    id are known: count, replacements and length are 0 (a loaded model has no training run)."""

    def __init__(self, model: Model):
        self._model = model
        ranked = isinstance(model, MergeRanked)
        self._merges = model.merges if ranked else ()
        self._base = model.base_size if ranked else 0

    def __len__(self) -> int:
        return len(self._merges)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        k = range(len(self))[index]  # negative indexes, and IndexError past the end
        a, b = self._merges[k]
        left, right, new = self._model.to_outside([a, b, self._base + k])
        return MergeRecord(k + 1, (left, right), new, 0, 0, 0)


class FrozenLearner:
    """The `Learner` protocol over a model that is looked at, not trained."""

    def __init__(self, model: Model, texts: Sequence[str], source: str = ""):
        self.frozen = model
        self.source = source  # what was opened: a preset name or a path
        self.kind = model.kind
        self.texts = list(texts)
        self.history = MergeHistory(model)
        self.base_size = model.base_size if isinstance(model, (MergeRanked, Scored)) else model.vocab_size
        unit_bytes = model.units.is_bytes
        self.initial_tokens = sum(len(t.encode("utf-8")) if unit_bytes else len(t) for t in self.texts)
        self.total_tokens = 0  # unknown until `measure` has encoded the corpus
        self.counts: np.ndarray | None = None  # tokens of each outside id over the corpus, once measured
        self._normalized: dict[int, str] = {}
        self._lengths: list[int] | None = None
        self._lock = threading.Lock()
        self._window: tuple = ((), None)  # the last window asked for, and what it was: screens ask again

    # -- what a frozen model cannot do -----------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self.frozen.vocab_size

    @property
    def compression(self) -> float:
        """Base units per token over the corpus; 0.0 until measured."""
        return self.initial_tokens / self.total_tokens if self.total_tokens else 0.0

    def next_step(self) -> None:
        return None

    def step_text(self, next_step) -> str:
        return ""

    def step(self) -> None:
        return None

    def undo(self) -> None:
        return None

    def run(self, vocab_size: int | None = None, merges: int | None = None) -> Iterator:
        return iter(())

    def steps_for_vocab(self, vocab_size: int) -> int:
        raise TrainingError(f"{self.source or 'this tokenizer'} is a loaded tokenizer: it is inspected, not "
                            "trained (start the workbench without -m to train one)")

    def next_rows(self, k: int, query: str = "") -> tuple[list, int]:
        """BPE: nothing is next. Unigram: its pieces, likeliest first, as the piece table shows
        them (no frequencies or loss increases: there is no training corpus behind them)."""
        if not isinstance(self.frozen, Scored):
            return [], 0
        pieces = self.frozen.pieces
        order = sorted(self.frozen.matched_ids(), key=lambda i: -pieces[i][1])  # specials: see the vocabulary
        if query:
            order = [i for i in order if query in pieces[i][0]]
        rows = [PieceRow(pieces[i][0], i, pieces[i][1], 0.0, None, False) for i in order[:k]]
        return rows, len(order)

    def training_state(self) -> dict:
        return {}

    def restore_state(self, state: dict) -> None:
        pass

    # -- what it shows ---------------------------------------------------------------------
    def history_rows(self, k: int) -> list:
        """The last k merges in rank order, as the history table shows them (no counts); for
        Unigram, the rounds its file records."""
        if isinstance(self.frozen, Scored):
            return list(self.frozen.history[-k:]) if k else []
        return self.history_page(max(0, len(self.history) - k), None)[0]

    def history_page(self, start: int, stop: int | None) -> tuple[list, int]:
        """Rows start:stop of the merges in rank order (or of the Unigram file's rounds), each
        made when asked for, and how many there are."""
        if isinstance(self.frozen, Scored):
            rounds = self.frozen.history
            return list(rounds[start:stop]), len(rounds)
        text = self.frozen.rank_text if isinstance(self.frozen, MergeRanked) else None
        base = self.base_size
        rows = []
        first = range(len(self.history))[start:stop]
        for i in first:
            record = self.history[i]
            rows.append(MergeRow(record, text(base + i) if text else self.frozen.token_text(record.new_id), 0.0))
        return rows, len(self.history)

    def compression_curve(self, points: int) -> list[float]:
        return []

    def token_lengths(self) -> list[int]:
        """Vocabulary tokens of each length in base units (specials left out, as training does)."""
        if self._lengths is None:
            tokens = self.frozen.ranked_tokens if isinstance(self.frozen, MergeRanked) else None
            if tokens is None:
                special = set(self.frozen.special_ids.values())
                tokens = [self.frozen.token(i) for i in range(self.vocab_size) if i not in special]
            lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
            self._lengths = np.bincount(lengths, minlength=2).tolist() if len(lengths) else [0, 0]
        return self._lengths

    def model(self, with_history: bool = True) -> Model:
        return self.frozen

    def model_key(self):
        return ("frozen", self.source, self.vocab_size)

    def token_bytes(self, tid: int) -> bytes:
        return self.frozen.token_bytes(tid)

    def corpus_summary(self) -> dict:
        return {"documents": len(self.texts), "chars": sum(map(len, self.texts)),
                "bytes": sum(len(t.encode("utf-8")) for t in self.texts), "tokens_before": self.initial_tokens}

    def document(self, doc: int) -> str:
        """Document `doc` normalized as the model normalizes (once per document)."""
        text = self._normalized.get(doc)
        if text is None:
            own = isinstance(self.frozen, OwnDisplay)  # its own normalizer, metaspace's ▁ shown
            text = self.frozen.display_text(self.texts[doc]) if own else normalize(self.texts[doc], self.frozen.normalizer)
            self._normalized[doc] = text
        return text

    def window(self, doc: int, start: int, end: int) -> tuple[int, str, list[TokenSpan], int]:
        if not self.texts:
            return 0, "", [], 0
        key, shown = self._window
        if key == (doc, start, end):
            return shown
        shown = self._encode_window(doc, start, end)
        self._window = ((doc, start, end), shown)
        return shown

    def _encode_window(self, doc: int, start: int, end: int) -> tuple[int, str, list[TokenSpan], int]:
        doc = min(doc, len(self.texts) - 1)
        full = self.document(doc)
        size = end - start
        start = max(0, min(start, max(0, len(full) - 1)))
        end = min(len(full), start + size)
        lo, hi = self.encoded_range(full, start, end)
        pieces, pos = [], lo
        chunks = self.frozen.display_chunks if isinstance(self.frozen, OwnDisplay) else self.frozen.encode_chunks  # not normalized twice
        for chunk, ids in chunks(full[lo:hi]):
            pieces.append((pos - start, chunk, ids))
            pos += len(chunk)
        lengths = self.frozen.char_lengths if isinstance(self.frozen, CharLengths) else None  # a fused <unk> covers its characters
        spans = [s for s in chunk_spans(pieces, self.frozen.token, char_lengths=lengths)
                 if s.end > 0 and s.start < end - start]
        return start, full[start:end], spans, len(full)

    def encoded_range(self, text: str, start: int, end: int) -> tuple[int, int]:
        """Where to encode so that [start, end) gets the ids the whole text gives it: from a safe
        cut at or before `start` to one at or after `end`. Only the presets have safe cuts; any
        other split (none, a custom regex) encodes the whole document."""
        if not self.frozen.pre_tokenizer.is_preset_pattern:
            return 0, len(text)
        lo = 0
        for reach in REACH:
            at = _last_cut(text, max(0, start - reach), start + 1)
            if at >= 0:
                lo = at
                break
        hi = len(text)
        for reach in REACH:
            at = safe_cut(text, end, min(len(text), end + reach))
            if at >= 0:
                hi = at
                break
        return lo, hi

    def measure(self) -> np.ndarray:
        """Encode the whole corpus: the total tokens (for compression), and how often each
        outside id occurs. Slow on a large corpus: the app runs it in a worker."""
        counts = count_tokens(self.frozen, self.texts)
        total = int(counts.sum())
        with self._lock:
            self.counts, self.total_tokens = counts, total
        return counts


def inspect_settings(model: Model) -> Settings:
    """The settings a session shows for a loaded model: its own units, normalizer and split;
    the target is its vocabulary (there is nothing to train towards)."""
    pre = model.pre_tokenizer
    tie = model.tie_break if isinstance(model, MergeRanked) else "first"
    return Settings(units=model.units, normalizer=model.normalizer, **Settings.split_of(pre),
                    tie_break=tie if tie in TIE_BREAKS else "first", target=model.vocab_size,
                    special_tokens=tuple(model.special_tokens))


def _last_cut(text: str, start: int, stop: int) -> int:
    """The last safe cut in [start, stop), or -1."""
    found = -1
    at = safe_cut(text, start, stop)
    while at >= 0:
        found = at
        at = safe_cut(text, at + 1, stop)
    return found
