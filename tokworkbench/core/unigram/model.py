"""A Unigram LM, frozen: pieces with log-probability scores, encoded by Viterbi, decoded by join.

Id 0 is `<unk>` (a special token, as in SentencePiece and HF); pieces follow in the order the
model file lists them. Encoding follows HF's `Unigram` model exactly (viterbi.py's tie rule, an
unknown character as `<unk>`, consecutive unknown characters fused into one `<unk>`), so an
export to tokenizer.json gives HF's ids. Decoding joins the pieces and undoes the pre-tokenizer's
rewrite (metaspace: ▁ back to a space, the prepended one dropped).
"""

import math
import random
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import regex

from ..errors import DecodeError, EncodeError, SpecialTokenInTextError
from ..text.normalize import normalize
from ..text.pretokenize import PreTokenizer
from ..models.roles import NO_ROLES, Roles
from ..units import Units
from .rows import Lattice, LatticeEdge
from .viterbi import INF, UNK_PENALTY, Vocab, best_costs, segment

UNK = "<unk>"
_CACHE_LIMIT = 1 << 18


@dataclass(frozen=True)
class UnigramModel:
    pieces: tuple[tuple[str, float], ...]
    """(text, log probability) in id order; id 0 is `<unk>`."""
    normalizer: str
    pre_tokenizer: PreTokenizer
    history: tuple[Any, ...] = ()
    """The training rounds (RoundRow), round 0 first; empty for an imported model."""
    algorithm: str = ""  # "course", "em", or "" when imported
    start_cost: float = 0.0  # what the training Viterbi charged at a word's start (course: 1.0)
    roles: Roles = NO_ROLES  # only unk can have a role here: <unk> is the one special token

    kind = "unigram"
    units = Units.CHAR
    special_tokens = (UNK,)
    tie_break = "viterbi"  # what `inspect` prints where BPE names its tie rule
    merges = ()  # no merges: replay and the BPE-only exports ask

    # -- vocabulary ------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    @property
    def base_size(self) -> int:
        """Single-character pieces (what every word can fall back to)."""
        return sum(1 for text, _ in self.pieces[1:] if len(text) == 1)

    @property
    def special_ids(self) -> dict[str, int]:
        return {UNK: 0}

    def token(self, tid: int) -> str:
        return self.pieces[self._checked([tid])[0]][0]

    def token_text(self, tid: int) -> str:
        return self.token(tid)

    def token_bytes(self, tid: int) -> bytes:
        return self.token(tid).encode("utf-8")

    def score(self, tid: int) -> float:
        return self.pieces[self._checked([tid])[0]][1]

    def to_outside(self, ids: list[int]) -> list[int]:
        return ids

    @cached_property
    def _cost(self) -> dict[str, float]:
        """Piece text -> cost (-score); `<unk>` is no piece to match in text."""
        table: dict[str, float] = {}
        for text, score in self.pieces[1:]:
            table.setdefault(text, -score)
        return table

    @cached_property
    def _ids(self) -> dict[str, int]:
        ids: dict[str, int] = {}
        for i, (text, _) in enumerate(self.pieces):
            if i:
                ids.setdefault(text, i)
        return ids

    @cached_property
    def _vocab(self) -> Vocab:
        return Vocab(self._cost)

    @cached_property
    def unk_cost(self) -> float:
        """HF: an unknown character scores `min_score - 10`, min_score over every piece, <unk>
        included."""
        low = min((s for _, s in self.pieces), default=0.0)
        return -(low - UNK_PENALTY)

    @cached_property
    def _cache(self) -> dict[str, list[int]]:
        return {}

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_") and k != "unk_cost"}

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- encoding --------------------------------------------------------------------------
    def encode(self, text: str, allowed_special: Collection[str] | str = (),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        allowed = {UNK} if allowed_special == "all" else set(allowed_special)
        unknown = allowed - {UNK}
        if unknown:
            raise EncodeError(f"not a special token of this model: {', '.join(sorted(unknown))}")
        disallowed = ({UNK} - allowed) if disallowed_special == "all" else set(disallowed_special)
        if UNK in disallowed and UNK in text:
            raise SpecialTokenInTextError(UNK, text.find(UNK))
        if UNK not in allowed:
            return self.encode_ordinary(text)
        ids: list[int] = []
        pos = 0
        for m in regex.finditer(regex.escape(UNK), text):
            ids += self.encode_ordinary(text[pos : m.start()])
            ids.append(0)
            pos = m.end()
        return ids + self.encode_ordinary(text[pos:])

    def encode_ordinary(self, text: str) -> list[int]:
        out: list[int] = []
        for _, ids in self.encode_chunks(text):
            out += ids
        return out

    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        text = normalize(text, self.normalizer)
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        out = []
        for chunk in self.pre_tokenizer.split(text):
            ids = cache.get(chunk)
            if ids is None:
                ids = cache[chunk] = self.encode_word(chunk)
            out.append((chunk, list(ids)))
        return out

    def encode_word(self, word: str) -> list[int]:
        """One pre-tokenizer chunk's ids: the Viterbi path, runs of unknown characters fused."""
        return [tid for tid, _ in self._word(word)]

    def char_lengths(self, chunk: str, ids: list[int]) -> list[int]:
        """Characters each id covers: a fused <unk> covers its whole run of unknown characters."""
        return [n for _, n in self._word(chunk)]

    def _word(self, word: str) -> list[tuple[int, int]]:
        """(id, characters it covers) along the Viterbi path."""
        out: list[tuple[int, int]] = []
        for a, b in self.segment(word):
            tid = self._ids.get(word[a:b], 0)
            if tid == 0 and out and out[-1][0] == 0:
                out[-1] = (0, out[-1][1] + b - a)  # HF fuses consecutive unknowns into one <unk>
                continue
            out.append((tid, b - a))
        return out

    def segment(self, word: str) -> list[tuple[int, int]]:
        """The best segmentation's spans (an unknown character is a span of its own)."""
        if not word:
            return []
        _, back = best_costs(self._vocab.edges(word, self.unk_cost))
        return segment(len(word), back)

    def nbest(self, word: str, k: int) -> list[tuple[list[int], float]]:
        """The k best segmentations of one chunk with their scores (log probabilities), best
        first: each position keeps its k best partial paths (exact for k-best)."""
        if not word:
            return [([], 0.0)]
        n, edges = len(word), self._vocab.edges(word, self.unk_cost)
        paths: list[list[tuple[float, tuple[int, ...]]]] = [[] for _ in range(n + 1)]
        paths[0] = [(0.0, ())]
        for end in range(1, n + 1):
            cands = []
            for start, _, c in edges[end]:
                cands += [(c + here, ends + (end,)) for here, ends in paths[start]]
            cands.sort(key=lambda p: p[0])
            paths[end] = cands[:k]
        out = []
        for total, ends in paths[n]:
            ids, start = [], 0
            for end in ends:
                ids.append(self._ids.get(word[start:end], 0))
                start = end
            out.append((ids, -total))
        return out

    def sample(self, word: str, alpha: float = 0.1, rng: random.Random | None = None) -> list[int]:
        """Subword regularization: a segmentation drawn with probability ∝ p(path)^alpha, by
        forward filtering and backward sampling over the lattice."""
        if not word:
            return []
        rng = rng or random.Random()
        n = len(word)
        alpha_at = [-INF] * (n + 1)
        alpha_at[0] = 0.0
        edges = [[(start, -c * alpha) for start, _, c in at] for at in self._vocab.edges(word, self.unk_cost)]
        for end in range(1, n + 1):
            alpha_at[end] = _logsumexp([alpha_at[s] + w for s, w in edges[end]])
        ids, end = [], n
        while end > 0:
            weights = [math.exp(alpha_at[s] + w - alpha_at[end]) for s, w in edges[end]]
            start = rng.choices([s for s, _ in edges[end]], weights)[0]
            ids.append(self._ids.get(word[start:end], 0))
            end = start
        ids.reverse()
        return ids

    # -- decoding --------------------------------------------------------------------------
    def _checked(self, ids: list[int]) -> list[int]:
        size = len(self.pieces)
        for pos, t in enumerate(ids):
            if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < size:
                raise DecodeError(f"id {t!r} at position {pos} is out of range: this vocabulary has ids 0..{size - 1}")
        return list(ids)

    def decode(self, ids: list[int], errors: str = "strict") -> str:
        pieces = self.pieces
        return self.pre_tokenizer.restore([pieces[t][0] for t in self._checked(ids)])

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self.decode(ids).encode("utf-8")

    # -- the picture -----------------------------------------------------------------------
    def lattice(self, word: str) -> Lattice:
        return build_lattice(word, self._vocab, self._ids, 0.0, self.unk_cost)


def lattice(model: UnigramModel, word: str) -> Lattice:
    """Every piece of `model` over its span of `word` (one pre-tokenizer chunk), and the path."""
    return model.lattice(word)


def build_lattice(word: str, vocab: Vocab, ids: dict[str, int], start_cost: float,
                  unk_cost: float | None) -> Lattice:
    ends = vocab.edges(word, unk_cost)
    edges = sorted((LatticeEdge(start, end, word[start:end], ids.get(piece, 0) if piece is not None else 0, c)
                    for end, at in enumerate(ends) for start, piece, c in at), key=lambda e: (e.start, e.end))
    if not word:
        return Lattice(word, (), (), (start_cost,), start_cost)
    best, back = best_costs(ends, start_cost)
    where = {(e.start, e.end): i for i, e in enumerate(edges)}
    path = tuple(where[s] for s in segment(len(word), back)) if back[len(word)] >= 0 else ()
    return Lattice(word, tuple(edges), path, tuple(best), start_cost)


def _logsumexp(values: list[float]) -> float:
    top = max(values, default=-INF)
    if top == -INF:
        return -INF
    return top + math.log(sum(math.exp(v - top) for v in values))
