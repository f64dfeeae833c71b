"""A Unigram LM, frozen: pieces with log-probability scores, encoded by Viterbi, decoded by join.

Pieces are in id order. Some are special tokens (`specials`): the unknown piece (`unk_id`; 0 and
`<unk>` in what we train) and, in imported models, control pieces (SentencePiece's `<s>`, `</s>`,
HF's added special tokens such as T5's `<pad>` at 0 and `<unk>` at 2). A special piece never
matches text in Viterbi; an allowed special string in the text becomes its id by the shared rule
(models/specials.py), as HF's added tokens do. SentencePiece's USER_DEFINED pieces
(`user_defined`) do match text, inside Viterbi, at SentencePiece's bonus cost (see `_cost`).

Encoding follows HF's `Unigram` model and SentencePiece's alike (viterbi.py's tie rule, an
unknown character as the unknown piece, consecutive unknown characters fused into one), so an
export to tokenizer.json gives HF's ids. With SentencePiece's byte_fallback (`byte_pieces`) an
unknown character is instead the `<0xNN>` pieces of its UTF-8 bytes, after Viterbi, as
sentencepiece_processor.cc spells its unknown pieces; byte pieces never match text (but in HF's
Unigram, `hf_byte_fallback`, whose trie holds them). Decoding
joins the pieces and undoes the pre-tokenizer's rewrite (metaspace: ▁ back to a space, the
prepended one dropped).
"""

import math
import random
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import regex

from tokworkbench.core.errors import check_unicode
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.models.specials import encode_with_specials
from tokworkbench.core.models.tokenkinds import TokenKind
from tokworkbench.core.models.vocab import check_ids
from tokworkbench.core.text.bytepieces import bytes_text, hf_bytes_text
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.patterns import METASPACE_PATTERN
from tokworkbench.core.text.pretokenize import PreTokenizer
from tokworkbench.core.unigram.hffloat import hf_score
from tokworkbench.core.unigram.paths import build_lattice, fit_lengths
from tokworkbench.core.unigram.rows import Lattice
from tokworkbench.core.unigram.spconventions import SpConventions
from tokworkbench.core.unigram.spviterbi import Solved, solve
from tokworkbench.core.unigram.viterbi import INF, UNK_PENALTY, Vocab, best_costs, segment, to_f32
from tokworkbench.core.units import Units

_CACHE_LIMIT = 1 << 18
_METASPACE_CHUNKS = regex.compile(METASPACE_PATTERN)
_USER_BONUS = np.float32(0.1)  # what SentencePiece's user-defined score acts as max_score_ (see _cost)


@dataclass(frozen=True)
class UnigramModel:
    pieces: tuple[tuple[str, float], ...]
    """(text, log probability) in id order, special pieces included."""
    normalizer: str
    pre_tokenizer: PreTokenizer
    history: tuple[Any, ...] = ()
    """The training rounds (RoundRow), round 0 first; empty for an imported model."""
    algorithm: str = ""  # "course", "em", or "" when imported
    start_cost: float = 0.0  # what the training Viterbi charged at a word's start (course: 1.0)
    roles: Roles = NO_ROLES  # each names one of the special pieces
    specials: tuple[int, ...] = (0,)
    """Ids of the special pieces (the unknown piece, control pieces), ascending."""
    unk_id: int = 0  # the piece an unknown character becomes; one of `specials`
    user_defined: tuple[int, ...] = ()
    """SentencePiece USER_DEFINED pieces: matched in text at SentencePiece's bonus cost."""
    float32: bool = False
    """Viterbi sums path scores in float32, as SentencePiece does (a model read from its file);
    else in float64, as HF does. They differ only where two paths tie exactly."""
    text_normalizer: Any = None
    """The model's own normalizer (spnormalize.py: SentencePiece's rules and charsmap, or HF's
    steps), applied after `normalizer` (then always "none") and before the pre-tokenizer."""
    hf_floats: bool = False
    """Viterbi takes each score as HF's `tokenizers` holds it after reading tokenizer.json
    (hffloat.py: an ulp off here and there), so that ties come out as in HF."""
    sp_conventions: SpConventions | None = None
    """Set for a model read from SentencePiece's file: its dummy prefix and its decoding
    (spconventions.py) instead of HF's Metaspace."""
    byte_pieces: tuple[int, ...] = ()
    """SentencePiece BYTE pieces, the id of `<0xNN>` at index NN (all 256, or none): set, the
    model has byte_fallback."""
    hf_byte_fallback: bool = False
    """The byte pieces as HF's Unigram has them (a tokenizer.json with byte_fallback): in its
    trie like any piece, so the text `<0x41>` is that piece where its score wins (SentencePiece's
    BYTE pieces never match text), and decoded by its ByteFallback decoder (`hf_bytes_text`)."""

    kind = "unigram"
    units = Units.CHAR

    # -- vocabulary ------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    @property
    def base_size(self) -> int:
        """Single-character pieces (what every word can fall back to)."""
        special = set(self.specials)
        return sum(1 for i, (text, _) in enumerate(self.pieces) if len(text) == 1 and i not in special)

    @property
    def byte_fallback(self) -> bool:
        return bool(self.byte_pieces)

    @cached_property
    def _byte_of(self) -> dict[int, int]:
        return {tid: b for b, tid in enumerate(self.byte_pieces)}

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return tuple(self.pieces[i][0] for i in self.specials)

    @property
    def special_ids(self) -> dict[str, int]:
        return {self.pieces[i][0]: i for i in self.specials}

    @property
    def unk_token(self) -> str:
        return self.pieces[self.unk_id][0]

    def matched_ids(self) -> list[int]:
        """The ids Viterbi can take over text: every piece but the special ones and
        SentencePiece's byte pieces."""
        special = set(self.specials) | (set() if self.hf_byte_fallback else set(self.byte_pieces))
        return [i for i in range(len(self.pieces)) if i not in special]

    def token(self, tid: int) -> str:
        return self.pieces[self._checked([tid])[0]][0]

    def piece_kind(self, tid: int) -> TokenKind:
        """Byte, user-defined and unknown pieces named as SentencePiece types them, so the vocabulary
        view and the arena's byte-fallback rate see them (protocol.py TypedPieces); other special
        pieces stay special, as the view shows any kind's."""
        tid = self._checked([tid])[0]
        if tid == self.unk_id:
            return TokenKind.UNKNOWN
        if tid in self._special_set:
            return TokenKind.SPECIAL
        if tid in self._byte_of:
            return TokenKind.BYTE
        return TokenKind.USER_DEFINED if tid in self._user_set else TokenKind.PIECE

    @cached_property
    def _user_set(self) -> frozenset[int]:
        return frozenset(self.user_defined)

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
        """Piece text -> cost (-score); special pieces are no pieces to match in text.

        A USER_DEFINED piece costs what SentencePiece gives it, "an extra bonus to always be
        selected": unigram_model.cc writes `length * max_score_ - 0.1` (length in UTF-8 bytes),
        and the library as installed scores it as if max_score_ were 0.1 whatever the normal
        scores are (measured: the threshold at which it loses to its characters is 0.1 × bytes −
        0.1 for max normal scores from −3 to 7; with the highest normal score, 2,402 of 4,500
        tie-heavy texts differed, with 0.1 none). Computed in float32 (double gives the same ids
        there), so every cost is a float32 value and spviterbi's folds round as its search does.
        It is not matched greedily before Viterbi: it is one more edge in the lattice, and nearly
        always the best one."""
        table: dict[str, float] = {}
        user = set(self.user_defined)
        for i in self.matched_ids():
            text, score = self.pieces[i]
            if i in user:
                score = float(np.float32(len(text.encode("utf-8"))) * _USER_BONUS - np.float32(0.1))
            elif self.hf_floats:
                score = hf_score(score)
            table.setdefault(text, -score)
        return table

    @cached_property
    def _ids(self) -> dict[str, int]:
        ids: dict[str, int] = {}
        for i in self.matched_ids():
            ids.setdefault(self.pieces[i][0], i)
        return ids

    @cached_property
    def _vocab(self) -> Vocab:
        return Vocab(self._cost)

    @cached_property
    def unk_cost(self) -> float:
        """HF: an unknown character scores `min_score - 10`, min_score over every piece, <unk>
        included (SentencePiece: over its normal pieces, which gives the same in practice)."""
        if self.float32:  # SentencePiece: min over its NORMAL pieces, in float32
            user = set(self.user_defined)
            low = min((self.pieces[i][1] for i in self.matched_ids() if i not in user), default=0.0)
            return -to_f32(low - UNK_PENALTY)
        low = min((hf_score(s) if self.hf_floats else s for _, s in self.pieces), default=0.0)
        return -(low - UNK_PENALTY)

    @cached_property
    def _cache(self) -> dict[str, Any]:
        return {}

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_") and k != "unk_cost"}

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- encoding --------------------------------------------------------------------------
    def encode(self, text: str, allowed_special: Collection[str] | str = (),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        """The shared special-token rule: an allowed special string is its id, the text between
        is encoded alone (so metaspace prepends ▁ to each part, as HF does around added tokens)."""
        check_unicode(text)
        return encode_with_specials(text, self.special_ids, allowed_special, disallowed_special,
                                    lambda part, _: self._ordinary(part))

    def encode_ordinary(self, text: str) -> list[int]:
        check_unicode(text)
        return self._ordinary(text)

    def _ordinary(self, text: str) -> list[int]:
        out: list[int] = []
        for _, ids in self._encode_list(self.chunks_of(text)):
            out += ids
        return out

    def normalize_text(self, text: str) -> str:
        """The text the pre-tokenizer sees. Decoding does not undo it (SentencePiece's and HF's
        do not either), so a round trip shows the normalized text."""
        text = normalize(text, self.normalizer)
        return self.text_normalizer.normalize(text) if self.text_normalizer is not None else text

    def display_text(self, text: str) -> str:
        """What the corpus view draws: the text as the pieces cover it (normalized, and with
        metaspace's ▁ for spaces and in front), so every token's span is its own characters."""
        normalized = self.normalize_text(text)
        if self.sp_conventions is not None:
            return self.sp_conventions.surface(text, normalized)
        return self.pre_tokenizer.surface(normalized)

    def display_chunks(self, shown: str) -> list[tuple[str, list[int]]]:
        """`encode_chunks` for a piece of `display_text`'s output, which is not normalized
        again (normalizing twice is not always a no-op once ▁ stands for the spaces)."""
        if self.pre_tokenizer.rewrites:
            chunks = _METASPACE_CHUNKS.findall(shown)
        else:
            chunks = self.pre_tokenizer.split(shown)
        return self._encode_list(chunks)

    @property
    def normalizer_label(self) -> str:
        return self.text_normalizer.label if self.text_normalizer is not None else self.normalizer

    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        check_unicode(text)
        return self._encode_list(self.chunks_of(text))

    def chunks_of(self, text: str) -> list[str]:
        """The chunks Viterbi solves one after the other (joined: the sentence it sees)."""
        if self.sp_conventions is not None:
            return _METASPACE_CHUNKS.findall(self.display_text(text))
        return self.pre_tokenizer.split(self.normalize_text(text))

    @property
    def fuses_across_chunks(self) -> bool:
        """SentencePiece fuses a run of unknowns over the whole sentence; HF within a word."""
        return self.float32

    def _encode_list(self, chunks: list[str], fuse: bool = True) -> list[tuple[str, list[int]]]:
        """Each chunk with its ids. HF's Unigram solves each pre-tokenizer word alone (float64,
        from 0); SentencePiece solves the whole sentence (spviterbi.py): each chunk goes on from
        the score the path reached, and (with `fuse`) a run of unknowns is fused across chunks
        (the fused id stays with the chunk where the run starts)."""
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        out = []
        if not self.float32:
            for chunk in chunks:
                hit = cache.get(chunk)
                if hit is None:
                    hit = cache[chunk] = self._word(chunk)
                out.append((chunk, [tid for tid, _ in hit]))
            return out
        score, prev_unk, unk = np.float32(0.0), False, self.unk_id
        for chunk in chunks:
            hit = cache.get(chunk)
            if hit is None:
                hit = cache[chunk] = self._solved(chunk, 0.0)
            solved, ids = hit[0], hit[2]
            if score and not abs(score) < solved.reach:
                solved, _, ids = self._solved(chunk, float(score))
            score = solved.end_score(score)
            if fuse and prev_unk and ids and ids[0] == unk:
                ids = ids[1:]
            if ids:
                prev_unk = ids[-1] == unk
            out.append((chunk, list(ids)))
        return out

    def encode_word(self, word: str) -> list[int]:
        """One pre-tokenizer chunk's ids, solved alone: the Viterbi path, runs of unknown
        characters fused."""
        return [tid for tid, _ in self._word(word)]

    def char_lengths(self, chunk: str, ids: list[int]) -> list[int]:
        """Characters each id covers: a fused <unk> covers its whole run of unknown characters
        (of this chunk, where the run began in the chunk before)."""
        pairs = self._word(chunk)
        own = [tid for tid, _ in pairs]
        if own == ids:
            return [n for _, n in pairs]
        if own[1:] == ids and own[0] == self.unk_id:
            return [n for _, n in pairs[1:]]
        return fit_lengths(chunk, ids, self.pieces, self.unk_id) or [n for _, n in pairs]

    def _word(self, word: str) -> list[tuple[int, int]]:
        """(id, characters it covers) along the path from 0 (a chunk alone)."""
        if self.float32:
            return self._solved(word, 0.0)[1]
        return self._pairs(word, self.segment(word))

    def _solved(self, word: str, start: float) -> tuple[Solved, list[tuple[int, int]], tuple[int, ...]]:
        """SentencePiece's path through one chunk from `start`: (path, (id, characters), ids)."""
        solved = solve(self._vocab.edges(word, self.unk_cost), start)
        pairs = self._pairs(word, solved.spans)
        return solved, pairs, tuple(tid for tid, _ in pairs)

    def _pairs(self, word: str, spans) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        unk, byte_ids = self.unk_id, self.byte_pieces
        for a, b in spans:
            tid = self._ids.get(word[a:b], unk)
            if tid == unk and byte_ids:
                raw = word[a:b].encode("utf-8")  # the last byte carries the characters
                out += [(byte_ids[x], 0) for x in raw[:-1]] + [(byte_ids[raw[-1]], b - a)]
                continue
            if tid == unk and out and out[-1][0] == unk:
                out[-1] = (unk, out[-1][1] + b - a)  # HF and SentencePiece fuse a run of unknowns
                continue
            out.append((tid, b - a))
        return out

    def segment(self, word: str) -> list[tuple[int, int]]:
        """The best segmentation's spans (an unknown character is a span of its own)."""
        if not word:
            return []
        if self.float32:
            return list(self._solved(word, 0.0)[0].spans)
        _, back = best_costs(self._vocab.edges(word, self.unk_cost))
        return segment(len(word), back)

    def chunk_paths(self, text: str) -> list[tuple[str, list[int]]]:
        """`encode_chunks` with each chunk's own ids, no unknown fused into the chunk before."""
        return self._encode_list(self.chunks_of(text), fuse=False)

    def nbest(self, word: str, k: int, first: list[int] | None = None) -> list[tuple[list[int], float]]:
        """The k best segmentations of one chunk with their scores (log probabilities), best
        first: each position keeps its k best partial paths (exact for k-best). `first`: the
        ids encode gave the chunk (SentencePiece's path depends on the sentence before it)."""
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
            spans = list(zip((0,) + ends[:-1], ends))
            out.append(([tid for tid, _ in self._pairs(word, spans)], -total))
        return self._encode_first(word, edges, out, k, first)

    def _encode_first(self, word: str, edges, out: list[tuple[list[int], float]],
                      k: int, first: list[int] | None = None) -> list[tuple[list[int], float]]:
        """`out` with encode's segmentation first when it ties with the first: the same pieces in
        another order score the same, and the sort above breaks such ties its own way, Viterbi
        (ours and SentencePiece's) another; `encode --nbest 1` must be `encode`."""
        if first is None or first == self.encode_word(word):
            spans = self.segment(word)
            best = self.encode_word(word)
            score = -sum(min(c for start, _, c in edges[b] if start == a) for a, b in spans)
        else:
            best = list(first)
            lengths = self.char_lengths(word, best)
            spelled = self._byte_of
            score = -sum(n * self.unk_cost if t == self.unk_id or (t in spelled and not self._matched_byte(t, n))
                         else self._cost[self.pieces[t][0]] for t, n in zip(best, lengths))
        if not math.isclose(score, out[0][1], rel_tol=1e-6):
            return out
        rest = [(ids, s) for ids, s in out if ids != best]
        return [(best, score)] + rest[: k - 1]

    def _matched_byte(self, tid: int, chars: int) -> bool:
        """Whether byte piece `tid`, covering `chars` characters, is the text `<0xNN>` (HF) rather
        than a byte of an unknown run."""
        return self.hf_byte_fallback and chars == len(self.pieces[tid][0])

    def fuse_unknowns(self, ids: list[int]) -> list[int]:
        """A run of unknown characters as one <unk>, as `encode_word` (and both libraries) give it."""
        unk = self.unk_id
        return [t for k, t in enumerate(ids) if not (t == unk and k and ids[k - 1] == unk)]

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
        spans, end = [], n
        while end > 0:
            weights = [math.exp(alpha_at[s] + w - alpha_at[end]) for s, w in edges[end]]
            start = rng.choices([s for s, _ in edges[end]], weights)[0]
            spans.append((start, end))
            end = start
        spans.reverse()
        return [tid for tid, _ in self._pairs(word, spans)]

    # -- decoding --------------------------------------------------------------------------
    def _checked(self, ids: list[int]) -> list[int]:
        return check_ids(ids, len(self.pieces))

    def decode(self, ids: list[int], errors: str = "strict") -> str:
        pieces = self.pieces
        if self.sp_conventions is not None:
            return self.sp_conventions.decode(self._checked(ids), pieces, self._special_set, self.unk_id,
                                              self._byte_of, self.hf_byte_fallback)
        byte_text = hf_bytes_text if self.hf_byte_fallback else bytes_text
        return self.pre_tokenizer.restore(self._byte_runs_joined(self._checked(ids), byte_text))

    def _byte_runs_joined(self, ids: list[int], byte_text) -> list[str]:
        """The tokens' texts with each run of byte pieces as the text it spells, as HF's
        ByteFallback decoder hands them to Metaspace's (one U+FFFD a byte where the run is not
        UTF-8)."""
        byte_of, out, run = self._byte_of, [], bytearray()
        for t in ids:
            if t in byte_of:
                run.append(byte_of[t])
                continue
            if run:
                out.extend(_texts(byte_text(bytes(run)), len(run)))
                run.clear()
            out.append(self.pieces[t][0])
        if run:
            out.extend(_texts(byte_text(bytes(run)), len(run)))
        return out

    @cached_property
    def _special_set(self) -> frozenset[int]:
        return frozenset(self.specials)

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self.decode(ids).encode("utf-8")

    # -- the picture -----------------------------------------------------------------------
    def lattice(self, word: str) -> Lattice:
        return build_lattice(word, self._vocab, self._ids, 0.0, self.unk_cost, self.unk_id, self.float32)


def _texts(text: str, count: int) -> list[str]:
    """HF's ByteFallback: a valid run is one token, an invalid one a U+FFFD token per byte (which
    Metaspace's decoder then sees one by one)."""
    return [text] if text != "\ufffd" * count or count == 1 else list(text)


def lattice(model: UnigramModel, word: str) -> Lattice:
    """Every piece of `model` over its span of `word` (one pre-tokenizer chunk), and the path."""
    return model.lattice(word)


def _logsumexp(values: list[float]) -> float:
    top = max(values, default=-INF)
    if top == -INF:
        return -INF
    return top + math.log(sum(math.exp(v - top) for v in values))
