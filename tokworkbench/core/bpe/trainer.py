"""The incremental BPE trainer the UI and the CLI drive: step, undo, run, and the live pair table.

State is the distinct chunks with their frequencies (a `FlatChunks`: one linked array of
positions and a pair -> positions index), and the count of every adjacent pair. A step rewrites
only the pair's occurrences and applies the count changes it reports; undo writes the same cells
back and subtracts the same changes. Selection uses a heap with lazy invalidation: an entry is
live only while it still matches the pair's current (count, tie key). A gain pushes a fresh
entry; a loss pushes nothing (the old entry now ranks the pair too high, which is safe), and a
stale entry that reaches the top is pushed again as the pair stands. Most pairs lose many times
and never reach the top, so this keeps the heap small.

Where numba runs and the tie key is a number, the same algorithm runs compiled over arrays
(`kernelpairs.KernelPairs`, bpe/mergekernel.py): the dicts and the heap below are then not made,
and the per-merge Python bookkeeping (0.4 ms a merge on multi-10M) goes.
"""

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from tokworkbench.core import jit
from tokworkbench.core.bpe.flatchunks import EMPTY, FlatChunks, Grouped, key_pair, pair_keys
from tokworkbench.core.bpe.history import MergeRecord, TrainingHistory, records
from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS, next_order, order_table, string_key
from tokworkbench.core.bpe.window import window_spans
from tokworkbench.core.curve import compression_curve
from tokworkbench.core.errors import TrainingError
from tokworkbench.core.gcpause import collector_paused
from tokworkbench.core.inspection.escape import render_bytes
from tokworkbench.core.inspection.segments import layout_window
from tokworkbench.core.models.rows import PairRow
from tokworkbench.core.models.steps import steps_to_make
from tokworkbench.core.text.chunks import MAX_TOTAL, ChunkCounts, count_chunks, units_total
from tokworkbench.core.text.corpus import require_text
from tokworkbench.core.text.normalize import check_normalizer
from tokworkbench.core.text.pretokenize import PreTokenizer, pre_tokenizer
from tokworkbench.core.transfer import Rebuild, built, in_pieces
from tokworkbench.core.units import Units

Pair = tuple[int, int]
# a packed heap entry: (2**64 - count) << 128 | (tie key + 2**63) << 64 | pair key
_CAP, _OFF, _MASK, _LOW = 1 << 64, 1 << 63, (1 << 64) - 1, 0xFFFFFFFF
HEAP_KEEP = 4096  # pairs a rebuilt heap ranks at least; the rest wait below its floor (see _rebuild_heap)
BATCH = 1024  # merges the compiled loop makes per call at most, in a run

ROW_CACHE = 1 << 16  # pair-table rows `_row` keeps before it starts again


@dataclass(frozen=True)
class TrainConfig:
    units: Units = Units.BYTE
    normalizer: str = "none"
    pre_tokenizer: PreTokenizer = field(default_factory=lambda: pre_tokenizer("none"))
    tie_break: str = "first"
    special_tokens: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "units", Units.named(self.units))
        if self.tie_break not in TIE_BREAKS:
            raise TrainingError(f"unknown tie-break {self.tie_break!r}; choose one of {', '.join(TIE_BREAKS)}")
        check_normalizer(self.normalizer)
        if len(set(self.special_tokens)) != len(self.special_tokens) or "" in self.special_tokens:
            raise TrainingError("special tokens must be distinct, non-empty strings")


@dataclass(frozen=True)
class MergeRow:
    """One row of the merge history as the views show it."""

    record: MergeRecord
    text: str  # the merged token, escaped where its bytes are not UTF-8
    compression: float  # base units per token after this merge


class Trainer:
    def __init__(self, texts: Iterable[str], config: TrainConfig = TrainConfig(), keep_layout: bool = False,
                 progress=None, counted: ChunkCounts | None = None):
        """`keep_layout` remembers each document's chunk sequence so views can draw tokens;
        `progress(chars)` is called as that pass goes. `counted` reuses another trainer's
        `chunk_table` (same normalizer and pre-tokenizer) instead of counting `texts` again:
        units and tie-break change only what is built on the counts."""
        self.config = config
        table = counted or count_chunks(texts, config.normalizer, config.pre_tokenizer, keep_layout, progress)
        self.chunk_table = table
        self.layouts = table.layouts or []
        self.documents, self.chars, self.bytes = table.documents, table.chars, table.bytes
        self.chunk_strings = table.chunks
        self._chunk_lookup: dict[str, int] | None = None
        if config.units.is_bytes:
            self.base: tuple[str, ...] | None = None
            self.vocab: list = config.units.base_tokens(None)
            units, lengths = utf8_units(table.chunks)
        else:
            lengths = np.fromiter(map(len, table.chunks), dtype=np.int64, count=len(table.chunks))
            points = np.frombuffer("".join(table.chunks).encode("utf-32-le"), dtype=np.uint32)
            alphabet = np.unique(points)  # code point order, as DESIGN.md fixes the base ids
            self.base = tuple(map(chr, alphabet.tolist()))
            self.vocab = list(self.base)
            units = np.searchsorted(alphabet, points)
        self.base_size = len(self.vocab)
        self._length_counts = [0, self.base_size]  # every base token is one unit long
        self.merges: list[Pair] = []
        self.history = TrainingHistory()
        self._applied: list[np.ndarray] = []  # each step's positions: its whole undo record
        total = units_total(table.counts, lengths)
        if total is None:
            raise TrainingError(f"the chunk counts add up to more than {MAX_TOTAL:,} {config.units.plural} "
                                "(count × length over the chunks), more than training's 64-bit counts hold")
        self.initial_tokens = total
        self.total_tokens = self.initial_tokens
        self._use_first = config.tie_break == "first"
        self._rows: dict[tuple, PairRow] = {}  # `_row`'s, by the pair's tokens and count
        self._flat = FlatChunks(units, lengths, table.counts)
        # for rules that compare ids, a sort key per id (kept as long as the vocabulary)
        self._order: list[int] | None = order_table(config.tie_break, config.units, self.base_size)
        self._static = None if self._use_first or self._order is not None else string_key(config.tie_break, self.vocab)
        self._replay: list[Pair] = []
        # The compiled merge loop (bpe/mergekernel.py) holds the pair state as arrays where numba
        # runs and the tie key is a number; otherwise the numpy/Python path below holds it.
        self._kernel = None
        if self._static is None and jit.available(self._flat.size):
            from tokworkbench.core.bpe.kernelpairs import KernelPairs

            sign = next_order(config.tie_break, 1)
            self._kernel = KernelPairs(self._flat, self._order, self._use_first, sign, HEAP_KEEP, self.base_size)
            self._order = None  # the kernel keeps its own
            return
        pairs = self._flat.initial_pairs()
        # pairs are keyed by `pair_keys(a, b)` inside; the public API speaks (a, b)
        self._counts: dict[int, int] = dict(zip(pairs.keys, pairs.counts))
        # for `first`: a pair's leftmost position (positions order as (chunk, offset) do)
        self._first: dict[int, int] = dict(zip(pairs.keys, pairs.leftmost)) if self._use_first else {}
        self._heap: list = []
        self._rebuilt = 0  # the heap's size when it was last rebuilt
        self._floor = 0  # pairs counted below this may have no heap entry
        self._rebuild_heap()

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
        return None if idx is None else self._flat.tokens(idx)

    def chunk_tokens(self, index: int) -> list[int]:
        """Current tokens of distinct chunk `index`."""
        return self._flat.tokens(index)

    def chunk_tokens_between(self, index: int, lo: int, hi: int) -> tuple[int, list[int]]:
        """Current tokens of distinct chunk `index` that overlap its units [lo, hi) (bytes or
        chars, as the units are), and the unit offset where the first starts: a window over a
        long chunk in time for the window."""
        return self._flat.tokens_between(index, lo, hi)

    def chunk_cells(self, chunks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct chunks' current tokens at once: see FlatChunks.live_cells."""
        return self._flat.live_cells(chunks)

    def token(self, tid: int):
        """The vocabulary entry of an id (a trainer's ids are its ranks): bytes, or str."""
        return self.vocab[tid]

    def token_text(self, tid: int) -> str:
        tok = self.vocab[tid]
        return render_bytes(tok) if isinstance(tok, bytes) else tok

    def token_bytes(self, tid: int) -> bytes:
        return Units.to_bytes(self.vocab[tid])

    def top_pairs(self, k: int) -> list[PairRow]:
        """The k best pairs in selection order; the first is the one `step` merges next."""
        if self._kernel is not None:
            keys, counts = self._kernel.top(k)
            return [self._row(key_pair(p), n) for p, n in zip(keys, counts)]
        rows: list[PairRow] = []
        keep = []
        seen = set()
        while len(rows) < k:
            pair = self._best(lower=False)  # the popped pairs are still counted: a lower floor would bring them back
            if pair is None:
                if not self._floor:
                    break
                for entry in keep:  # fewer than k pairs above the floor: rank them all, start again
                    heapq.heappush(self._heap, entry)
                self._rebuild_heap(everything=True)
                rows, keep, seen = [], [], set()
                continue
            entry = heapq.heappop(self._heap)
            n, _, p = self._open(entry)
            if p in seen:
                continue
            seen.add(p)
            keep.append(entry)
            rows.append(self._row(pair, n))
        for entry in keep:
            heapq.heappush(self._heap, entry)
        return rows

    # -- the learner protocol (models/protocol.py), in BPE's own words above --------------
    kind = "bpe"

    def step_text(self, pair: Pair) -> str:
        return self.token_text(pair[0]) + self.token_text(pair[1])

    def next_rows(self, k: int, query: str = "") -> tuple[list[PairRow], int]:
        """The k best pairs (those whose merged token matches `query`, if given), and how many
        pairs there are (or match) in all."""
        if query:
            return self.find_pairs(query, k)
        return self.top_pairs(k), self.pair_total()

    def pair_total(self) -> int:
        """How many distinct pairs the chunks hold now."""
        return len(self._kernel) if self._kernel is not None else len(self._counts)

    def pair_counts(self) -> dict[int, int]:
        """Every pair's count, keyed by `pair_keys(a, b)`."""
        return self._kernel.counts() if self._kernel is not None else dict(self._counts)

    def pair_tables(self) -> tuple[dict, dict]:
        """The pair -> positions index (a superset of where each pair stands) and, for the
        `first` rule, each pair's leftmost position, as dicts on either path: for checking
        them against a recount."""
        if self._kernel is not None:
            return self._kernel.index(), self._kernel.firsts() if self._use_first else {}
        return ({p: np.asarray(at).tolist() for p, at in self._flat.index.items()}, dict(self._first))

    def find_pairs(self, query: str, k: int) -> tuple[list[PairRow], int]:
        """Search the whole pair table, not just its top: a pair matches when its merged token
        contains `query` as text, or as bytes written in hex ("e6 97", "\\xe6\\x97", "0xe6").
        Returns the best k matches in selection order, and how many pairs match."""
        needles = query_needles(query)
        vocab, to_bytes = self.vocab, Units.to_bytes
        found = []
        if self._kernel is not None:
            keys, counts = self._kernel.pairs()
            items = zip(keys.tolist(), counts.tolist())
        else:
            items = self._counts.items()
        for p, n in items:
            merged = to_bytes(vocab[p >> 32]) + to_bytes(vocab[p & 0xFFFFFFFF])
            if any(needle in merged for needle in needles):
                found.append((p, n))
        best = heapq.nsmallest(k, found, key=lambda pn: (-pn[1], self._key(pn[0])))
        return [self._row(key_pair(p), n) for p, n in best], len(found)

    def history_rows(self, k: int) -> list["MergeRow"]:
        """The newest k merges, oldest first, with the text each made."""
        return [MergeRow(r, self.token_text(r.new_id), self.initial_tokens / r.length if r.length else 0.0)
                for r in self.history[-k:]]

    def history_page(self, start: int, stop: int | None) -> tuple[list["MergeRow"], int]:
        """Rows start:stop of the whole history (row i is step i + 1), and how many there are."""
        return [MergeRow(r, self.token_text(r.new_id), self.initial_tokens / r.length if r.length else 0.0)
                for r in self.history[start:stop]], len(self.history)

    def compression_curve(self, points: int) -> list[float]:
        """Base units per token after each step, thinned to at most `points` evenly spaced steps
        (the last one always kept)."""
        return compression_curve(self.history, self.initial_tokens, lambda r: r.length, points)

    def token_lengths(self) -> list[int]:
        """How many vocabulary tokens have each length in base units (index = length). Kept up
        by step and undo: every snapshot asks, and counting the vocabulary each time cost as much
        as a merge."""
        counts = self._length_counts
        end = len(counts)
        while end > 2 and not counts[end - 1]:
            end -= 1
        return counts[:end]

    def model_key(self) -> tuple:
        return tuple(self.merges)

    def window(self, doc: int, start: int, end: int) -> tuple[int, str, list, int]:
        return layout_window(self, doc, start, end, window_spans)

    def corpus_summary(self) -> dict:
        """What the model file records about the corpus it was trained on."""
        return {"documents": self.documents, "chars": self.chars, "bytes": self.bytes,
                "tokens_before": self.initial_tokens}

    def model(self, with_history: bool = True) -> Tokenizer:
        """A frozen snapshot for encoding, decoding and saving. Views that only encode can leave
        the training history out (it is what makes a snapshot slow to pickle late in a run)."""
        return Tokenizer.with_tokens(
            self.vocab,  # a list copy instead of a rebuild from the merges
            units=self.config.units,
            normalizer=self.config.normalizer,
            pre_tokenizer=self.config.pre_tokenizer,
            tie_break=self.config.tie_break,
            base=self.base,
            merges=tuple(self.merges),
            special_tokens=self.config.special_tokens,
            history=tuple(self.history) if with_history else (),
        )

    # -- training --------------------------------------------------------------------------
    def steps_for_vocab(self, vocab_size: int) -> int:
        """Merges still needed to reach `vocab_size` (specials included); explains nonsense sizes."""
        floor = self.base_size + len(self.config.special_tokens)
        if vocab_size < floor:
            what = self.config.units.describe_base(self.base_size)
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
    def replay_total(self) -> int:
        """How many merges the replay holds (the first steps of the history are theirs)."""
        return len(self._replay)

    @property
    def replaying(self) -> int:
        """Replayed merges still to come."""
        return max(0, len(self._replay) - len(self.merges))

    def next_step(self) -> Pair | None:
        """The pair `step` will merge: the next replayed merge, else the best by count."""
        if self.replaying:
            return self._replay[len(self.merges)]
        if self._kernel is not None:
            p = self._kernel.best()
            return None if p < 0 else key_pair(p)
        return self._best()

    def step(self) -> MergeRecord | None:
        """Merge the best pair (or the next replayed one); None when no pair is left."""
        if self._kernel is not None:
            made = self._kernel_steps(1)
            return made[0] if made else None
        best = self.next_step()
        if best is None:
            return None
        a, b = best
        z = len(self.vocab)
        key = pair_keys(a, b)
        count = self._counts.pop(key, 0)
        self._first.pop(key, None)
        self.vocab.append(self.vocab[a] + self.vocab[b])
        self._count_length(len(self.vocab[z]), 1)
        if self._order is not None:
            self._order.append(next_order(self.config.tie_break, z))
        applied = self._flat.merge(a, b, z)
        self.merges.append(best)
        self._applied.append(applied.positions)
        self.total_tokens -= applied.replacements
        self._gain(applied.added)
        self._lose(applied.removed)
        self._trim_heap()
        record = MergeRecord(len(self.history) + 1, best, z, count, applied.replacements, self.total_tokens)
        self.history.append(record)
        return record

    def undo(self) -> MergeRecord | None:
        """Restore exactly the state before the last step; None if there is nothing to undo."""
        if not self.history:
            return None
        record = self.history.pop()
        if self._kernel is not None:
            a, b = self.merges.pop()
            self._kernel.undo(a, b, record.count, len(self.vocab[a]))
            self._count_length(len(self.vocab.pop()), -1)
            self.total_tokens += record.replacements
            return record
        positions = self._applied.pop()
        a, b = self.merges.pop()
        key = pair_keys(a, b)
        added, removed = self._flat.unmerge(a, b, record.new_id, positions, len(self.vocab[a]))
        for p in added:  # every pair holding the new id goes with it
            del self._counts[p]
            self._first.pop(p, None)
        self._gain(removed)
        if record.count:
            self._counts[key] = record.count
            if self._use_first:
                self._first[key] = int(positions[0])  # a run's leftmost pair is merged
            self._push(key, record.count)
        self._count_length(len(self.vocab.pop()), -1)
        if self._order is not None:
            self._order.pop()
        self.total_tokens += record.replacements
        self._trim_heap()
        return record

    def run(self, vocab_size: int | None = None, merges: int | None = None) -> Iterator[MergeRecord]:
        """Steps until the vocabulary (or merge count) target; stop by not asking for the next."""
        todo = steps_to_make(self, vocab_size, merges, "merges")
        if self._kernel is not None:
            yield from self._kernel_run(todo)
            return
        for _ in range(todo):
            record = self.step()
            if record is None:
                return
            yield record

    # -- moving training to another process -------------------------------------------------
    # What construction fixes for good. Everything else a trainer holds is training state and
    # travels whole, so a field added later cannot be silently left behind.
    _FIXED = frozenset({"config", "chunk_table", "layouts", "documents", "chars", "bytes", "chunk_strings", "_chunk_lookup",
                        "base", "base_size", "initial_tokens", "_use_first", "_static", "_rows"})

    def training_state(self) -> dict:
        """Everything a step or an undo changes (the corpus tables stay put), to carry the work
        of a trainer forked into another process back into this one. The per-step records
        travel as a few arrays (the history as its rows, made into records where they are read,
        bpe/history.py): as objects they took seconds to load, with the GIL held. The
        parts whose rebuilding is slow come first and rebuild as they are unpickled, so a
        receiver taking the parts one by one rebuilds while the sender pickles the rest
        (core/transfer.py)."""
        state = {"_flat": self._flat.moving_state()}
        state.update((name, value) for name, value in vars(self).items()
                     if name not in self._FIXED and name not in ("_flat", "_kernel"))
        if self._kernel is not None:  # arrays only: they land in shared memory and are used there
            state["_kernel"] = self._kernel.moving_state()
            return state
        state["_applied"] = Rebuild(_split, *_join(self._applied))
        for name in ("_counts", "_first", "_heap"):  # the long ones: unpickled a piece at a time
            state[name] = in_pieces(state[name])
        return state

    def state_nbytes(self) -> int:
        """About how many bytes of arrays `training_state()` holds now (it grows as training
        goes on): what a transfer reserves shared memory for."""
        if self._kernel is not None:
            return self._flat.nbytes + self._kernel.nbytes + 56 * len(self.history)
        return self._flat.nbytes + sum(a.nbytes for a in self._applied) + 56 * len(self.history)

    def own_arrays(self) -> None:
        """Copy the arrays a step writes in place into memory of this process's own: after a
        transfer they are views of shared memory (core/transfer.py), which a forked child
        must not write to while its parent holds them."""
        self._flat.own_arrays()
        if self._kernel is not None:
            self._kernel.own_arrays()

    def load_step_code(self) -> None:
        """Only the child has stepped in a run that began with the first `r`: loading the
        compiled merge from numba's cache cost 20 ms of the first step after a cancel."""
        if self._kernel is not None:
            self._kernel.load_step_code()

    def restore_state(self, state: dict) -> None:
        state = {name: built(value) for name, value in state.items()}
        self._flat.take_state(state.pop("_flat"))
        if self._kernel is not None:
            self._kernel.take_state(state.pop("_kernel"))
        vars(self).update(state)
        if self._static is not None:  # it reads the vocabulary list, which was just replaced
            self._static = string_key(self.config.tie_break, self.vocab)

    # -- internals -------------------------------------------------------------------------
    def _kernel_steps(self, k: int) -> list[MergeRecord]:
        """Up to k merges in the compiled loop (replayed pairs first), recorded as `step` does."""
        start = len(self.merges)
        forced = [pair_keys(a, b) for a, b in self._replay[start : start + k]]
        rows = self._kernel.run(k, forced)  # (a, b, new id, count, replacements)
        if not len(rows):
            return []
        steps = np.arange(len(self.history) + 1, len(self.history) + 1 + len(rows))
        lengths = self.total_tokens - np.cumsum(rows[:, 4])
        made = records(np.column_stack((steps, rows, lengths)))
        vocab, merges, history, length = self.vocab, self.merges, self.history, self._count_length
        for record in made:
            a, b = record.pair
            token = vocab[a] + vocab[b]
            vocab.append(token)
            length(len(token), 1)
            merges.append(record.pair)
            history.append(record)
        self.total_tokens = int(lengths[-1])
        return made

    def _kernel_run(self, todo: int) -> Iterator[MergeRecord]:
        """`run` in batches that double up to BATCH while the caller keeps asking. Merges made
        ahead of a caller who stops asking are undone, so a run still stops where its caller
        stopped."""
        batch = 1
        ahead: list[MergeRecord] = []
        try:
            while todo > 0:
                asked = min(batch, todo)
                ahead = self._kernel_steps(asked)
                todo -= len(ahead)
                short = len(ahead) < asked
                ahead.reverse()
                while ahead:
                    yield ahead.pop()
                if short:
                    return
                batch = min(2 * batch, BATCH)
        finally:
            for _ in ahead:
                self.undo()

    def _gain(self, grouped: Grouped):
        """Pairs that gained occurrences (those a step created, or those an undo restores)."""
        counts, first, push = self._counts, self._first, self._push
        order = self._order
        if order is not None:  # the common case, with the heap entry inlined (see _entry)
            heap, heappush, floor = self._heap, heapq.heappush, self._floor
            for p, n in zip(grouped.keys, grouped.counts):
                n += counts.get(p, 0)
                counts[p] = n
                if n >= floor:
                    heappush(heap, ((_CAP - n) << 128) | (((order[p >> 32] << 32) + order[p & _LOW] + _OFF) << 64) | p)
            return
        for p, n, left in zip(grouped.keys, grouped.counts, grouped.leftmost):
            n += counts.get(p, 0)
            counts[p] = n
            if self._use_first:
                first[p] = min(left, first.get(p, left))
            push(p, n)

    def _lose(self, grouped: Grouped):
        """Pairs that lost occurrences; a `first` key moves only if its position was lost.
        No heap push: the pair's old entry ranks it no lower than it now stands."""
        counts, first, flat = self._counts, self._first, self._flat
        keys = grouped.keys
        still = None
        if self._use_first and keys:
            still = flat.standing(keys, [first[p] for p in keys]).tolist()
        for i, (p, n) in enumerate(zip(keys, grouped.counts)):
            n = counts[p] - n
            if not n:
                del counts[p]
                flat.forget(p)
                first.pop(p, None)
                continue
            counts[p] = n
            if still is not None and not still[i]:
                first[p] = flat.leftmost(p)

    def _count_length(self, n: int, change: int) -> None:
        counts = self._length_counts
        if n >= len(counts):
            counts.extend([0] * (n + 1 - len(counts)))
        counts[n] += change

    def _push(self, p: int, n: int):
        if n >= self._floor:
            heapq.heappush(self._heap, self._entry(p, n))

    def _entry(self, p: int, n: int):
        """A heap entry, smallest first: by count (highest first), tie key, pair. Where the key
        is a number (every rule but lexmin/lexmax over strings) the three are packed into one
        int: it compares faster than a tuple and takes a third of the memory (the heap held
        450k entries, 60 MB, at 32k merges on multi-10M)."""
        if self._static is None:
            return ((_CAP - n) << 128) | ((self._key(p) + _OFF) << 64) | p
        return (-n, self._key(p), p)

    def _open(self, entry) -> tuple[int, object, int]:
        """(count, key, pair) of a heap entry."""
        if self._static is None:
            return _CAP - (entry >> 128), ((entry >> 64) & _MASK) - _OFF, entry & _MASK
        return -entry[0], entry[1], entry[2]

    def _trim_heap(self):
        """Rebuild once stale entries could make up most of the heap. Twice the size the last
        rebuild left is part of the bound: where nearly every pair occurs once, the floor is 1
        and a rebuilt heap holds every pair, so a bound of 8 × HEAP_KEEP alone rebuilt all of
        them at every step (180 s where HF takes 1). When it rebuilds changes no merge."""
        if len(self._heap) > max(min(3 * len(self._counts) + 4096, 8 * HEAP_KEEP), 2 * self._rebuilt):
            self._rebuild_heap()

    def _key(self, p: int):
        """Smaller wins among equal counts. Id rules fold both ids' sort keys into one integer
        (the right one is within +-2**31, so the order is lexicographic)."""
        if self._kernel is not None:
            return self._kernel.tie_key(p)
        order = self._order
        if order is not None:
            return (order[p >> 32] << 32) + order[p & 0xFFFFFFFF]
        return self._first[p] if self._use_first else self._static(key_pair(p))

    def _best(self, lower: bool = True) -> Pair | None:
        """The best pair, or None; `lower=False`: None also when only pairs below the floor are left."""
        heap, counts, entry = self._heap, self._counts, self._entry
        while True:
            while heap:
                top = heap[0]
                pair = top & _MASK if type(top) is int else top[2]
                n = counts.get(pair)
                if n is None:
                    heapq.heappop(heap)
                    continue
                now = entry(pair, n)
                if now == top:  # live: the entry still ranks the pair as it stands
                    return key_pair(pair)
                if n < self._floor:
                    heapq.heappop(heap)  # it lost its place: pairs below the floor need none
                else:
                    heapq.heapreplace(heap, now)  # ranked too high since it lost
            if not self._floor or not counts or not lower:
                return None
            self._rebuild_heap()  # every pair left is below the floor: rank them under a lower one
            heap = self._heap

    def _rebuild_heap(self, everything: bool = False):
        """Rank only the pairs counted at least the HEAP_KEEP-th highest count (ties included).
        A pair below that floor cannot be the best while the heap holds one above it, and gets
        its entry when a gain lifts it to the floor; when the heap runs dry the floor goes down.
        Most pairs a merge creates occur a few times and are never merged: the heap held over
        100k entries for them (6 MB at 8k merges on en-10M), and each cost a push.
        `everything`: rank every pair (floor 0)."""
        counts = self._counts
        floor = 0
        if len(counts) > HEAP_KEEP and not everything:
            values = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
            floor = int(np.partition(values, len(values) - HEAP_KEEP)[len(values) - HEAP_KEEP])
        self._floor = floor
        entry = self._entry
        self._heap = [entry(p, n) for p, n in counts.items() if n >= floor]
        heapq.heapify(self._heap)
        self._rebuilt = len(self._heap)

    def _row(self, pair, count) -> PairRow:
        """A table row, kept: a merge changes few of the 400 rows a snapshot shows, and making
        one (its texts escaped) took 18 us, 7 ms of each snapshot. The key holds the tokens
        themselves, since an undo and another merge give an id another token."""
        a, b = pair
        vocab = self.vocab
        key = (vocab[a], vocab[b], a, b, count)
        row = self._rows.get(key)
        if row is not None:
            return row
        merged = self.token_bytes(a) + self.token_bytes(b)
        if self.config.units.is_bytes:
            merged_text = render_bytes(merged)
        else:
            merged_text = vocab[a] + vocab[b]
        row = PairRow(a, b, count, self.token_text(a), self.token_text(b), merged_text, merged)
        if len(self._rows) >= ROW_CACHE:
            self._rows.clear()
        self._rows[key] = row
        return row


def train(texts: Iterable[str], config: TrainConfig, vocab_size: int | None = None, merges: int | None = None,
          on_step: Callable[[int, int], None] | None = None,
          count: Callable[[], ChunkCounts] | None = None) -> Trainer:
    """Train in one go: the one batch loop the CLI, the benchmarks and the API share.
    `on_step(done, todo)` follows the merges (a progress bar). `count()`, if given, counts the
    corpus instead of `texts` (the CLI counts files a block at a time: `count_files`)."""
    with collector_paused():
        trainer = Trainer(texts, config, counted=count() if count is not None else None)
        require_text(trainer.chars)
        todo = trainer.steps_for_vocab(vocab_size) if vocab_size is not None else merges
        for record in trainer.run(vocab_size=vocab_size, merges=merges):
            if on_step is not None:
                on_step(len(trainer.merges), todo)
    return trainer


def _join(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per-step position arrays as two arrays (sizes, data): thousands of small arrays pickle slowly."""
    sizes = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
    return sizes, np.concatenate(arrays) if arrays else EMPTY


def _split(sizes: np.ndarray, data: np.ndarray) -> list[np.ndarray]:
    bounds = np.concatenate(([0], np.cumsum(sizes))).tolist()
    return [data[i:j] for i, j in zip(bounds, bounds[1:])]


def utf8_units(chunks: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The chunks' UTF-8 bytes end to end, and each chunk's length in bytes. One encode of the
    joined text: a chunk's byte length is where its first character's lead byte sits, so no
    chunk is encoded on its own (that was a bytes object per distinct chunk, all at once)."""
    joined = "".join(chunks)
    units = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
    chars = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
    if joined.isascii():
        return units, chars
    del joined
    lead = np.flatnonzero((units & 0xC0) != 0x80)  # one per character
    bounds = np.concatenate(([0], np.cumsum(chars)))
    return units, np.diff(np.append(lead, len(units))[bounds])


def query_needles(query: str) -> list[bytes]:
    """What a pair-table search looks for in a merged token's bytes: the query's own UTF-8
    bytes, and, when the query reads as hex bytes, those bytes too."""
    needles = [query.encode("utf-8", errors="surrogatepass")]
    digits = query.lower().replace("\\x", " ").replace("0x", " ").replace(" ", "")
    if len(digits) >= 2 and len(digits) % 2 == 0 and all(c in "0123456789abcdef" for c in digits):
        needles.append(bytes.fromhex(digits))
    return needles
