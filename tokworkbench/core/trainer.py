"""The incremental BPE trainer the UI and the CLI drive: step, undo, run, and the live pair table.

State is the distinct chunks (as id lists) with their frequencies, the count of every adjacent
pair, and for every pair the set of chunks it occurs in. A step rewrites only the chunks that
hold the chosen pair and applies count deltas; undo splits the newest id back in those same
chunks. Selection uses a heap with lazy invalidation: an entry is live only while it still
matches the pair's current (count, tie key), and every change pushes a fresh entry.
"""

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from .chunks import count_chunks, initial_pair_stats
from .errors import TrainingError
from .merging import first_offset, merge_chunks, unmerge_word
from .normalize import check_normalizer
from .pretokenize import PreTokenizer, pre_tokenizer
from .tiebreak import TIE_BREAKS, next_order, order_table, static_key
from .tokenizer import Tokenizer
from .vocab import render_bytes

Pair = tuple[int, int]


@dataclass(frozen=True)
class TrainConfig:
    units: str = "byte"
    normalizer: str = "none"
    pre_tokenizer: PreTokenizer = field(default_factory=lambda: pre_tokenizer("none"))
    tie_break: str = "first"
    special_tokens: tuple[str, ...] = ()

    def __post_init__(self):
        if self.units not in ("byte", "char"):
            raise TrainingError(f"unknown units {self.units!r}; choose byte or char")
        if self.tie_break not in TIE_BREAKS:
            raise TrainingError(f"unknown tie-break {self.tie_break!r}; choose one of {', '.join(TIE_BREAKS)}")
        check_normalizer(self.normalizer)
        if len(set(self.special_tokens)) != len(self.special_tokens) or "" in self.special_tokens:
            raise TrainingError("special tokens must be distinct, non-empty strings")


@dataclass(frozen=True)
class MergeRecord:
    """One training step, as DESIGN.md defines it; `length` is total tokens after the step."""

    step: int
    pair: Pair
    new_id: int
    count: int
    replacements: int
    length: int


@dataclass(frozen=True)
class PairRow:
    """One row of the live pair-frequency table."""

    left: int
    right: int
    count: int
    left_text: str
    right_text: str
    merged_text: str
    merged_bytes: bytes


class Trainer:
    def __init__(self, texts: Iterable[str], config: TrainConfig = TrainConfig(), keep_layout: bool = False,
                 progress=None):
        """`keep_layout` remembers each document's chunk sequence so views can draw tokens;
        `progress(chars)` is called as that pass goes."""
        self.config = config
        table = count_chunks(texts, config.normalizer, config.pre_tokenizer, keep_layout, progress)
        self.layouts = table.layouts or []
        self.documents, self.chars, self.bytes = table.documents, table.chars, table.bytes
        self.chunk_strings = table.chunks
        self._chunk_lookup: dict[str, int] | None = None
        self._weights = table.counts.tolist()
        if config.units == "byte":
            self.base: tuple[str, ...] | None = None
            self.vocab: list = [bytes([i]) for i in range(256)]
            self._words = [list(c.encode("utf-8")) for c in table.chunks]
        else:
            alphabet = sorted(set().union(*table.chunks)) if table.chunks else []
            self.base = tuple(alphabet)
            index = {c: i for i, c in enumerate(alphabet)}
            self.vocab = list(alphabet)
            self._words = [[index[ch] for ch in c] for c in table.chunks]
        self.base_size = len(self.vocab)
        self._lengths = [1] * self.base_size  # token length in base units, for `first`
        self.merges: list[Pair] = []
        self.history: list[MergeRecord] = []
        self._touched: list[list[int]] = []  # chunk ids each step rewrote, for undo
        self.initial_tokens = int(np.dot(table.counts, [len(w) for w in self._words])) if self._words else 0
        self.total_tokens = self.initial_tokens
        self._use_first = config.tie_break == "first"
        stats = initial_pair_stats(self._words, table.counts, self._use_first)
        self._counts, self._where, self._first = stats.counts, stats.where, stats.first
        self._static = None if self._use_first else static_key(config.tie_break, config.units, self.vocab)
        # for rules that compare ids, a sort key per id (kept as long as the vocabulary)
        self._order: list[int] | None = order_table(config.tie_break, config.units, self.base_size)
        self._heap: list = []
        self._rebuild_heap()
        self._replay: list[Pair] = []

    # -- reading ---------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Ids in use including the special tokens that will follow the merges."""
        return len(self.vocab) + len(self.config.special_tokens)

    @property
    def compression(self) -> float:
        """Base units per token now (1.0 before any merge)."""
        return self.initial_tokens / self.total_tokens if self.total_tokens else 1.0

    def chunk_ids(self, chunk: str) -> list[int] | None:
        """Current tokens of a chunk seen in training (None if the corpus never had it)."""
        if self._chunk_lookup is None:
            self._chunk_lookup = {c: i for i, c in enumerate(self.chunk_strings)}
        idx = self._chunk_lookup.get(chunk)
        return None if idx is None else list(self._words[idx])

    def chunk_tokens(self, index: int) -> list[int]:
        """Current tokens of distinct chunk `index` (the trainer's own list: do not modify)."""
        return self._words[index]

    def token_text(self, tid: int) -> str:
        tok = self.vocab[tid]
        return render_bytes(tok) if isinstance(tok, bytes) else tok

    def token_bytes(self, tid: int) -> bytes:
        tok = self.vocab[tid]
        return tok if isinstance(tok, bytes) else tok.encode("utf-8")

    def top_pairs(self, k: int) -> list[PairRow]:
        """The k best pairs in selection order; the first is the one `step` merges next."""
        rows: list[PairRow] = []
        keep = []
        seen = set()
        while self._heap and len(rows) < k:
            entry = heapq.heappop(self._heap)
            pair = entry[2]
            if pair in seen or not self._live(entry):
                continue
            seen.add(pair)
            keep.append(entry)
            rows.append(self._row(pair, -entry[0]))
        for entry in keep:
            heapq.heappush(self._heap, entry)
        return rows

    def corpus_summary(self) -> dict:
        """What the model file records about the corpus it was trained on."""
        return {"documents": self.documents, "chars": self.chars, "bytes": self.bytes,
                "tokens_before": self.initial_tokens}

    def tokenizer(self) -> Tokenizer:
        """A frozen snapshot for encoding, decoding and saving."""
        tok = Tokenizer(
            units=self.config.units,
            normalizer=self.config.normalizer,
            pre_tokenizer=self.config.pre_tokenizer,
            tie_break=self.config.tie_break,
            base=self.base,
            merges=tuple(self.merges),
            special_tokens=self.config.special_tokens,
            history=tuple(self.history),
        )
        tok.prime_vocab(self.vocab)  # a list copy instead of a rebuild from the merges
        return tok

    # -- training --------------------------------------------------------------------------
    def merges_for_vocab(self, vocab_size: int) -> int:
        """Merges still needed to reach `vocab_size` (specials included); explains nonsense sizes."""
        floor = self.base_size + len(self.config.special_tokens)
        if vocab_size < floor:
            what = "256 bytes" if self.config.units == "byte" else f"{self.base_size} distinct characters"
            raise TrainingError(
                f"vocabulary size {vocab_size} is below the base vocabulary ({what}"
                f" + {len(self.config.special_tokens)} special tokens = {floor})"
            )
        return max(0, vocab_size - self.vocab_size)

    def replay(self, merges: list[Pair]) -> None:
        """Make the next steps merge these pairs (another tokenizer's merges, in rank order, in
        base+rank ids) whatever their count here; training goes on normally after them."""
        if self.merges:
            raise TrainingError("replay starts from the base vocabulary: reset first")
        for r, (a, b) in enumerate(merges):
            if not (0 <= a < self.base_size + r and 0 <= b < self.base_size + r):
                raise TrainingError(f"merge {r} ({a}, {b}) names an id that does not exist yet")
        self._replay = list(merges)

    @property
    def replaying(self) -> int:
        """Replayed merges still to come."""
        return max(0, len(self._replay) - len(self.merges))

    def next_pair(self) -> Pair | None:
        """The pair `step` will merge: the next replayed merge, else the best by count."""
        if self.replaying:
            return self._replay[len(self.merges)]
        return self._best()

    def step(self) -> MergeRecord | None:
        """Merge the best pair (or the next replayed one); None when no pair is left."""
        best = self.next_pair()
        if best is None:
            return None
        a, b = best
        z = len(self.vocab)
        count = self._counts.pop(best, 0)
        chunks = sorted(self._where.pop(best, ()))  # a superset: chunks that lost the pair are skipped
        self._first.pop(best, None)
        self.vocab.append(self.vocab[a] + self.vocab[b])
        self._lengths.append(self._lengths[a] + self._lengths[b])
        if self._order is not None:
            self._order.append(next_order(self.config.tie_break, z))
        delta: dict[Pair, int] = {}
        added_at: dict[Pair, int] = {}
        replacements, chunks = merge_chunks(self._words, self._weights, chunks, a, b, z, delta, self._where)
        self.merges.append(best)
        self._touched.append(chunks)
        self.total_tokens -= replacements
        self._settle(delta, added_at, set(chunks))
        record = MergeRecord(len(self.history) + 1, best, z, count, replacements, self.total_tokens)
        self.history.append(record)
        return record

    def undo(self) -> MergeRecord | None:
        """Restore exactly the state before the last step; None if there is nothing to undo."""
        if not self.history:
            return None
        record = self.history.pop()
        chunks = self._touched.pop()
        a, b = self.merges.pop()
        z = record.new_id
        delta: dict[Pair, int] = {}
        added_at: dict[Pair, int] = {}
        for c in chunks:
            old, local = unmerge_word(self._words[c], a, b, z)
            self._words[c] = old
            self._apply_local(c, old, local, self._weights[c], delta, added_at)
        self.vocab.pop()
        self._lengths.pop()
        if self._order is not None:
            self._order.pop()
        self.total_tokens += record.replacements
        self._settle(delta, added_at, set(chunks))
        return record

    def run(self, vocab_size: int | None = None, merges: int | None = None) -> Iterator[MergeRecord]:
        """Steps until the vocabulary (or merge count) target; stop by not asking for the next."""
        if (vocab_size is None) == (merges is None):
            raise TrainingError("give exactly one of a vocabulary size or a number of merges")
        if merges is not None and merges < 0:
            raise TrainingError(f"number of merges must be positive, not {merges}")
        todo = self.merges_for_vocab(vocab_size) if vocab_size is not None else merges
        for _ in range(todo):
            record = self.step()
            if record is None:
                return
            yield record

    # -- moving training to another process -------------------------------------------------
    _MUTABLE = ("vocab", "_lengths", "merges", "history", "_touched", "total_tokens", "_words", "_counts",
                "_where", "_first", "_heap", "_order", "_replay")

    def training_state(self) -> dict:
        """Everything a step or an undo changes (the corpus tables stay put), to carry the work
        of a trainer forked into another process back into this one."""
        return {name: getattr(self, name) for name in self._MUTABLE}

    def restore_state(self, state: dict) -> None:
        for name in self._MUTABLE:
            setattr(self, name, state[name])
        if self._static is not None:  # it reads the vocabulary list, which was just replaced
            self._static = static_key(self.config.tie_break, self.config.units, self.vocab)

    # -- internals -------------------------------------------------------------------------
    def _apply_local(self, c, ids, local, w, delta, added_at):
        gone = None
        for p, d in local.items():
            if d == 0:
                continue
            delta[p] = delta.get(p, 0) + d * w
            if d > 0:
                self._where.setdefault(p, set()).add(c)
                if c < added_at.get(p, c + 1):
                    added_at[p] = c
            else:
                if gone is None:
                    gone = set(zip(ids, ids[1:]))
                if p not in gone:
                    self._where[p].discard(c)

    def _settle(self, delta, added_at, chunks):
        """Fold the step's deltas into the counts, the first-occurrence keys and the heap."""
        counts, heap, push = self._counts, self._heap, heapq.heappush
        order = self._order
        for p, d in delta.items():
            n = counts.get(p, 0) + d
            if n == 0:  # gone (or, d == 0, a pair made and unmade within this step)
                counts.pop(p, None)
                self._where.pop(p, None)
                self._first.pop(p, None)
                continue
            if d == 0:
                continue
            counts[p] = n
            if order is not None:
                push(heap, (-n, (order[p[0]], order[p[1]]), p))
                continue
            if self._use_first:
                self._first[p] = self._first_key(p, added_at.get(p), chunks)
            push(heap, (-n, self._key(p), p))
        if len(self._heap) > 4 * len(self._counts) + 4096:
            self._rebuild_heap()

    def _first_key(self, p, added_chunk, chunks):
        """(chunk, offset) of p's leftmost occurrence, recomputed only where it can have moved."""
        old = self._first.get(p)
        if old is None or old[0] in chunks:
            return self._leftmost(p)
        if added_chunk is not None and added_chunk < old[0]:
            return (added_chunk, first_offset(self._words[added_chunk], p, self._lengths))
        return old

    def _leftmost(self, p):
        """The index may hold chunks that lost p (a superset): drop those until the smallest holds it."""
        chunks = self._where[p]
        while True:
            c = min(chunks)
            offset = first_offset(self._words[c], p, self._lengths)
            if offset >= 0:
                return (c, offset)
            chunks.discard(c)

    def _key(self, p):
        if self._order is not None:
            return (self._order[p[0]], self._order[p[1]])
        return self._first[p] if self._use_first else self._static(p)

    def _live(self, entry) -> bool:
        pair = entry[2]
        return self._counts.get(pair) == -entry[0] and self._key(pair) == entry[1]

    def _best(self) -> Pair | None:
        while self._heap:
            entry = self._heap[0]
            if self._live(entry):
                return entry[2]
            heapq.heappop(self._heap)
        return None

    def _rebuild_heap(self):
        self._heap = [(-n, self._key(p), p) for p, n in self._counts.items()]
        heapq.heapify(self._heap)

    def _row(self, pair, count) -> PairRow:
        a, b = pair
        merged = self.token_bytes(a) + self.token_bytes(b)
        if self.config.units == "byte":
            merged_text = render_bytes(merged)
        else:
            merged_text = self.vocab[a] + self.vocab[b]
        return PairRow(a, b, count, self.token_text(a), self.token_text(b), merged_text, merged)


def train(texts: Iterable[str], config: TrainConfig, vocab_size: int | None = None, merges: int | None = None) -> Trainer:
    trainer = Trainer(texts, config)
    for _ in trainer.run(vocab_size=vocab_size, merges=merges):
        pass
    return trainer
