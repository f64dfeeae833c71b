"""spm_train's BPE merge loop (`bpe::Trainer::Train`, bpe_model_trainer.cc), exactly, with undo.

A *symbol* is a character or a pair of symbols (its left and right), so "aaa" made as aa+a and
as a+aa are two symbols with one text, as in SentencePiece. One step:

- every 100 pieces (and again after a skipped duplicate while the count stays a multiple of
  100) the *active* pairs are refreshed: the max(1,000, 5 % of all symbols known) most frequent
  pairs (`UpdateActiveSymbols`); pairs made since then join the active ones as they appear;
- the best active pair wins: the highest count, then the shorter text, then the smaller UTF-8
  bytes; one whose text is already a piece is dropped unmerged and the next looked for;
- its occurrences merge, leftmost first in each word (an overlapping one is skipped), and the
  pairs its neighbours form with it are made when they are valid pieces (spscript.py's one
  script; ▁ only first; at most `max_piece_length` characters; never ▅; with `split_digits`
  never a digit, which spm_train's IsValidSentencePiece then allows only alone).
Counts here are kept exact as merges go, where SentencePiece recounts a pair once its
neighbourhood changed: the same numbers. A pair SentencePiece makes anew while resetting a
neighbour (a dropped duplicate's parts, still side by side) is made here too, so the number of
symbols known, and with it the active share, is the same.

Where this may differ from spm_train: which of several pairs of equal count at the edge of
the active share get in (C++'s partial_sort leaves it to the hash map's order), and which of
two symbols of one text and one count wins (its pointer order); both leave the merges alone on
the corpora we compared (botchan at 1,000 and 4,000).

Undo: each step logs what it changed, and undoing plays the log backwards.
"""

import heapq
from dataclasses import dataclass

from tokworkbench.core.spbpe.sentences import UNK_CHAR
from tokworkbench.core.text.spoptions import is_digit
from tokworkbench.core.text.spscript import ANY, INHERITED, META, script_class

UPDATE_EVERY = 100  # kUpdateActiveSymbolsInteval
MIN_ACTIVE = 1000  # kMinActiveSymbolsSize
ACTIVE_SHARE = 0.05  # kTopFrequentRatio
NONE = -1


@dataclass(frozen=True)
class Chosen:
    """A pair the loop chose: its symbol, its parts, its count at that moment."""

    sid: int
    left: int
    right: int
    count: int


class SpMergeLoop:
    def __init__(self, words: list[str], counts: list[int], max_piece_length: int = 16, split_digits: bool = False):
        self.max_len = max_piece_length
        self.split_digits = split_digits
        self.digits: set[int] = set()  # the digit characters' symbols, which never pair with split_digits
        self.counts = counts
        self.text: list[str] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.lead: list[int] = []  # script of the first character with one (ANY: none)
        self.tail: list[int] = []  # script a character after it must keep to (ANY: any)
        self.meta: list[bool] = []  # holds ▁ (so it may not be a right part)
        self.unk: list[bool] = []
        self.freq: list[int] = []
        self.pos: list[set | None] = []
        self.chars: dict[str, int] = {}
        self.pairs: dict[tuple[int, int], int] = {}  # symbols_cache_'s pairs
        self.seqs: list[list[int]] = []
        for word in words:
            self.seqs.append([self._char(c) for c in word])
        self.tokens = sum(len(s) * n for s, n in zip(self.seqs, counts))
        self.active: set[int] = set()
        self.heap: list[tuple] = []
        self.pieces: list[int] = []  # symbols made, in order
        self.dup: set[str] = set()
        self.chosen: Chosen | None = None
        self.log: list[list[tuple]] = []  # one list of changes per step
        self._ops: list[tuple] = []
        for w, seq in enumerate(self.seqs):
            for i in range(1, len(seq)):
                self._add_pair(w, i - 1, i)
        self._prepare()

    # -- symbols -----------------------------------------------------------------------------
    def _new(self, text: str, left: int, right: int, lead: int, tail: int, meta: bool, unk: bool) -> int:
        sid = len(self.text)
        self.text.append(text)
        self.left.append(left)
        self.right.append(right)
        self.lead.append(lead)
        self.tail.append(tail)
        self.meta.append(meta)
        self.unk.append(unk)
        self.freq.append(0)
        self.pos.append(set() if left >= 0 else None)
        return sid

    def _char(self, c: str) -> int:
        sid = self.chars.get(c)
        if sid is None:
            cls = script_class(c)
            script = ANY if cls in (META, INHERITED) else cls
            sid = self.chars[c] = self._new(c, NONE, NONE, script, script, c == "\u2581", c == UNK_CHAR)
            if is_digit(c):
                self.digits.add(sid)
        return sid

    def _pair(self, a: int, b: int) -> int | None:
        """`GetPairSymbol`: the pair's symbol, made (and logged) if it is a valid piece."""
        if self.unk[a] or self.unk[b] or (self.split_digits and (a in self.digits or b in self.digits)):
            return None
        sid = self.pairs.get((a, b))
        if sid is not None:
            return sid
        if self.meta[b] or len(self.text[a]) + len(self.text[b]) > self.max_len:
            return None
        ta, lb = self.tail[a], self.lead[b]
        if ta != ANY and lb != ANY and ta != lb:
            return None
        sid = self._new(self.text[a] + self.text[b], a, b, self.lead[a] if self.lead[a] != ANY else lb,
                        self.tail[b] if self.tail[b] != ANY else ta, self.meta[a], False)
        self.pairs[(a, b)] = sid
        self._ops.append(("new", sid))
        return sid

    # -- counting ----------------------------------------------------------------------------
    def _set_freq(self, sid: int, value: int) -> None:
        self.freq[sid] = value
        if sid in self.active:
            self._push(sid)

    def _push(self, sid: int) -> None:
        heapq.heappush(self.heap, (-self.freq[sid], len(self.text[sid]), self.text[sid].encode("utf-8"), sid))

    def _add_pair(self, w: int, i: int, j: int) -> None:
        """`AddNewPair`: positions i, j of word w now hold a pair; it becomes active."""
        if i < 0 or j < 0:
            return
        seq = self.seqs[w]
        sid = self._pair(seq[i], seq[j])
        if sid is None:
            return
        if sid not in self.active:
            self.active.add(sid)
            self._ops.append(("act+", sid))
            self._push(sid)
        p = (w, i, j)
        if p not in self.pos[sid]:
            self.pos[sid].add(p)
            self._ops.append(("pos+", sid, p))
            self._set_freq(sid, self.freq[sid] + self.counts[w])

    def _drop_pair(self, w: int, i: int, j: int, best: int) -> None:
        """`ResetFreq`: the pair at i, j of word w is about to change."""
        if i < 0 or j < 0:
            return
        seq = self.seqs[w]
        sid = self._pair(seq[i], seq[j])
        if sid is None or sid == best:
            return
        p = (w, i, j)
        if p in self.pos[sid]:
            self.pos[sid].discard(p)
            self._ops.append(("pos-", sid, p))
            self._set_freq(sid, self.freq[sid] - self.counts[w])

    # -- the loop ----------------------------------------------------------------------------
    def _refresh(self) -> None:
        """`UpdateActiveSymbols`."""
        bigrams = list(self.pairs.values())
        size = min(max(MIN_ACTIVE, int((len(self.pairs) + len(self.chars)) * ACTIVE_SHARE)), len(bigrams))
        freq, text = self.freq, self.text
        top = heapq.nsmallest(size, bigrams, key=lambda s: (-freq[s], len(text[s]), text[s].encode("utf-8"), s))
        self._ops.append(("active", self.active))
        self.active = set(top)
        self._rebuild_heap()

    def _rebuild_heap(self) -> None:
        freq, text = self.freq, self.text
        self.heap = [(-freq[s], len(text[s]), text[s].encode("utf-8"), s) for s in self.active]
        heapq.heapify(self.heap)

    def _best(self) -> int | None:
        heap = self.heap
        while heap:
            f, _, _, sid = heap[0]
            if sid in self.active and -f == self.freq[sid]:
                return sid
            heapq.heappop(heap)
        return None

    def _erase(self, sid: int) -> None:
        key = (self.left[sid], self.right[sid])
        del self.pairs[key]
        self._ops.append(("erase", sid, sid in self.active))
        self.active.discard(sid)

    def _prepare(self) -> None:
        """The loop up to its next merge: refresh, choose, drop duplicates; `chosen` is None
        when no active pair is left."""
        while True:
            if len(self.pieces) % UPDATE_EVERY == 0:
                self._refresh()
            sid = self._best()
            if sid is None:
                self.chosen = None
                return
            if self.text[sid] in self.dup:
                self._erase(sid)
                continue
            self.chosen = Chosen(sid, self.left[sid], self.right[sid], self.freq[sid])
            return

    def merge(self) -> tuple[Chosen, int] | None:
        """One merge (then the loop up to the next); what was merged and how many
        occurrences (weighted by word count) it replaced."""
        chosen = self.chosen
        if chosen is None:
            return None
        self._ops = []
        best = chosen.sid
        self.dup.add(self.text[best])
        self.pieces.append(best)
        replaced = 0
        for w, i, j in sorted(self.pos[best]):
            seq = self.seqs[w]
            if seq[i] == NONE:
                continue
            nxt = next((k for k in range(j + 1, len(seq)) if seq[k] != NONE), NONE)
            prev = next((k for k in range(i - 1, -1, -1) if seq[k] != NONE), NONE)
            self._drop_pair(w, prev, i, best)
            self._drop_pair(w, j, nxt, best)
            self._ops.append(("seq", w, i, seq[i], j, seq[j]))
            seq[i], seq[j] = best, NONE
            replaced += self.counts[w]
            self._add_pair(w, prev, i)
            self._add_pair(w, i, nxt)
        self.tokens -= replaced
        self._ops.append(("tokens", replaced))
        self._erase(best)
        self._prepare()
        self.log.append((chosen, self._ops))
        self._ops = []
        return chosen, replaced

    def unmerge(self) -> Chosen | None:
        """Exactly the state before the last merge; what it had merged."""
        if not self.log:
            return None
        chosen, ops = self.log.pop()
        for op in reversed(ops):
            self._undo(op)
        self.dup.discard(self.text[self.pieces.pop()])
        self._rebuild_heap()
        self.chosen = chosen
        return chosen

    def _undo(self, op: tuple) -> None:
        name = op[0]
        if name == "pos+":
            self.pos[op[1]].discard(op[2])
            self.freq[op[1]] -= self.counts[op[2][0]]
        elif name == "pos-":
            self.pos[op[1]].add(op[2])
            self.freq[op[1]] += self.counts[op[2][0]]
        elif name == "seq":
            _, w, i, a, j, b = op
            self.seqs[w][i], self.seqs[w][j] = a, b
        elif name == "act+":
            self.active.discard(op[1])
        elif name == "active":
            self.active = op[1]
        elif name == "erase":
            sid = op[1]
            self.pairs[(self.left[sid], self.right[sid])] = sid
            if op[2]:
                self.active.add(sid)
        elif name == "new":
            sid = op[1]
            del self.pairs[(self.left[sid], self.right[sid])]
            for column in (self.text, self.left, self.right, self.lead, self.tail, self.meta, self.unk, self.freq,
                           self.pos):
                column.pop()
        elif name == "tokens":
            self.tokens += op[1]
