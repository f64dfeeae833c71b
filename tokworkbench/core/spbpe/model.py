"""SentencePiece's BPE (Llama 2, Mistral, Gemma ship it), frozen: scored pieces merged by score.

Not our BPE (core/bpe/): that one merges by rank over bytes and pre-tokenizer chunks. This one
is SentencePiece's `bpe::Model::SampleEncode` (bpe_model.cc) with alpha 0, exactly:
- the text is normalized by SentencePiece's normalizer (text/spnormalize.py: charsmap,
  whitespace collapsing), spaces become ▁ and a dummy ▁ goes in front (`add_dummy_prefix`);
- it is cut into characters, a USER_DEFINED piece (longest first) being one symbol that never
  merges;
- while some adjacent pair concatenates to a piece (NORMAL or USER_DEFINED), the pair whose
  piece scores highest merges, the leftmost among equal scores;
- a symbol that is no piece is unknown: with `byte_fallback` its UTF-8 bytes as `<0xNN>`
  pieces, else the unk id, a run of them fused into one (sentencepiece_processor.cc).
Control pieces (<s>, </s>) and byte pieces are never matched in text.

Merges never cross a place where ▁ follows another character when every piece has its ▁s only
at its start (`_splits_at_meta`): the text is then cut there and each word is cached, which is
what makes this fast; a model with other pieces is merged one whole segment at a time.

Decoding is SentencePiece's `Decode`: runs of byte pieces joined into characters (a byte that
starts no valid UTF-8 character is U+FFFD), ▁ back to a space, the leading one dropped, control
pieces invisible, the unknown piece as its surface (" ⁇ ").
"""

import heapq
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

import regex

from tokworkbench.core.errors import check_unicode, lone_surrogate
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.models.specials import encode_with_specials
from tokworkbench.core.models.tokenkinds import TokenKind
from tokworkbench.core.models.vocab import check_ids
from tokworkbench.core.spbpe.fastencode import FastEncoder
from tokworkbench.core.text.bytepieces import byte_piece, hf_bytes_text
from tokworkbench.core.text.bytepieces import bytes_text as sp_bytes_text
from tokworkbench.core.text.pretokenize import pre_tokenizer as make_pre_tokenizer
from tokworkbench.core.text.spnormalize import META, SpNormalizer
from tokworkbench.core.units import Units

KIND = "spbpe"
# SentencePiece's piece types (sentencepiece_model.proto)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
TYPE_NAMES = {NORMAL: "normal", UNKNOWN: "unknown", CONTROL: "control", USER_DEFINED: "user_defined",
              BYTE: "byte"}
_PIECE_KINDS = {NORMAL: TokenKind.PIECE, UNKNOWN: TokenKind.UNKNOWN, CONTROL: TokenKind.CONTROL,
                USER_DEFINED: TokenKind.USER_DEFINED, UNUSED: TokenKind.PIECE, BYTE: TokenKind.BYTE}
UNK_SURFACE = " \u2047 "  # SentencePiece's kDefaultUnknownSymbol
_WORD_START = regex.compile("(?<=[^\u2581])(?=\u2581)")
_EVERY_META = regex.compile("(?=\u2581)")
_CACHE_LIMIT = 1 << 18


@dataclass(frozen=True, eq=False)
class SpBpeModel:
    pieces: tuple[str, ...]
    scores: tuple[float, ...]  # float32 values, as the .model file stores them
    types: tuple[int, ...]  # NORMAL, UNKNOWN, CONTROL, USER_DEFINED or BYTE, per piece
    text_normalizer: SpNormalizer
    add_dummy_prefix: bool = True
    byte_fallback: bool = False
    roles: Roles = NO_ROLES
    unk_surface: str = UNK_SURFACE
    merges: tuple[tuple[str, str], ...] = ()
    """An HF tokenizer.json's merges, in its order: HF's BPE joins the listed pair of lowest
    position (leftmost on a tie) instead of the pair whose piece scores highest, and only
    listed pairs; the two differ where one piece has two splits in a word (`a|aa|a`)."""
    metaspace: tuple[str, bool] | None = None
    """An HF file's Metaspace pre-tokenizer in place of the dummy prefix: (prepend_scheme,
    split). Spaces become ▁ and a ▁ goes in front unless the text starts with one (`first`: only
    at the very start, not after a special token); with split, no merge crosses any ▁."""

    kind = KIND
    units = Units.CHAR
    normalizer = "none"
    pre_tokenizer = make_pre_tokenizer("none")
    tie_break = "score, then leftmost"

    def __post_init__(self):
        object.__setattr__(self, "_cache", {})

    def identity(self) -> tuple:
        return (self.pieces, self.scores, self.types, self.text_normalizer.to_json(), self.add_dummy_prefix,
                self.byte_fallback, self.roles, self.unk_surface, self.merges, self.metaspace)

    def __eq__(self, other) -> bool:
        return isinstance(other, SpBpeModel) and other.identity() == self.identity()

    def __hash__(self) -> int:
        return hash(self.pieces)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__["_cache"] = {}

    # -- vocabulary ------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    @cached_property
    def unk_id(self) -> int:
        return self.types.index(UNKNOWN)

    @cached_property
    def special_ids(self) -> dict[str, int]:
        """The unknown and control pieces: no text becomes them."""
        return {p: i for i, (p, t) in enumerate(zip(self.pieces, self.types)) if t in (UNKNOWN, CONTROL)}

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return tuple(self.special_ids)

    @cached_property
    def user_defined(self) -> tuple[str, ...]:
        return tuple(p for p, t in zip(self.pieces, self.types) if t == USER_DEFINED)

    @cached_property
    def _scores(self) -> dict[str, float]:
        """What a merge may make: NORMAL and USER_DEFINED pieces (SentencePiece's `pieces_`)."""
        return {p: s for p, s, t in zip(self.pieces, self.scores, self.types) if t in (NORMAL, USER_DEFINED)}

    @cached_property
    def _pair_score(self):
        """What `_merge` ranks a pair by, highest first: its piece's score (SentencePiece), or
        minus its position in `merges` (HF; a pair listed twice keeps the later position)."""
        if not self.merges:
            scores = self._scores
            return lambda a, b: scores.get(a + b)
        ranks = {pair: -r for r, pair in enumerate(self.merges)}
        return lambda a, b: ranks.get((a, b))

    @cached_property
    def _ids(self) -> dict[str, int]:
        """`PieceToId` for a final symbol: the reserved pieces (unknown, control, byte) first."""
        ids = {p: i for i, (p, t) in enumerate(zip(self.pieces, self.types)) if t in (NORMAL, USER_DEFINED)}
        ids.update((p, i) for i, (p, t) in enumerate(zip(self.pieces, self.types)) if t not in (NORMAL, USER_DEFINED))
        return ids

    @cached_property
    def _byte_ids(self) -> list[int]:
        ids = self._ids
        return [ids.get(byte_piece(b), self.unk_id) for b in range(256)]

    @cached_property
    def _byte_of(self) -> dict[int, int]:
        return {i: int(p[3:5], 16) for i, (p, t) in enumerate(zip(self.pieces, self.types)) if t == BYTE}

    @cached_property
    def _user(self):
        users = sorted(self.user_defined, key=len, reverse=True)
        return regex.compile("|".join(regex.escape(u) for u in users)) if users else None

    @cached_property
    def _splits_at_meta(self) -> bool:
        return all(META not in p.lstrip(META) for p in self._scores)

    def token(self, tid: int) -> str:
        return self.pieces[self._checked([tid])[0]]

    def token_text(self, tid: int) -> str:
        return self.token(tid)

    def token_bytes(self, tid: int) -> bytes:
        """A byte piece is its byte; any other piece its text's UTF-8."""
        b = self._byte_of.get(self._checked([tid])[0])
        return bytes([b]) if b is not None else self.pieces[tid].encode("utf-8")

    def score(self, tid: int) -> float:
        return self.scores[self._checked([tid])[0]]

    def piece_kind(self, tid: int) -> TokenKind:
        """The piece's SentencePiece type as the vocabulary view names it (protocol.py TypedPieces)."""
        return _PIECE_KINDS[self.types[self._checked([tid])[0]]]

    def self_joins(self, tids: list[int]) -> list[bool | None]:
        """For each id: whether the scored merges make the NORMAL piece of its characters alone
        (a USER_DEFINED piece is matched whole: always); None for byte, control and unknown
        pieces, which no merge makes (protocol.py SelfJoining)."""
        out: list[bool | None] = []
        for tid in self._checked(list(tids)):
            kind, piece = self.types[tid], self.pieces[tid]
            out.append(True if kind == USER_DEFINED else self._merge(piece) == [piece] if kind == NORMAL else None)
        return out

    # -- normalizing -----------------------------------------------------------------------
    def normalize_text(self, text: str, at_start: bool = True) -> str:
        """SentencePiece's normalized text: ▁ for spaces and the dummy ▁ in front (or HF's
        Metaspace, `metaspace`)."""
        if self.metaspace is None:
            return sp_normalized(self.text_normalizer, self.add_dummy_prefix, text)
        out = self.text_normalizer.normalize(text).replace(" ", META)
        scheme = self.metaspace[0]
        prepend = scheme == "always" or (scheme == "first" and at_start)
        return META + out if prepend and out and not out.startswith(META) else out

    def display_text(self, text: str) -> str:
        return self.normalize_text(text)

    @property
    def normalizer_label(self) -> str:
        return self.text_normalizer.label

    # -- encoding --------------------------------------------------------------------------
    def encode(self, text: str, allowed_special: Collection[str] | str = (),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        """The shared special-token rule; SentencePiece itself reads no control piece in text,
        so the text between allowed specials is encoded alone (a dummy ▁ in front of each)."""
        check_unicode(text)
        return encode_with_specials(text, self.special_ids, allowed_special, disallowed_special,
                                    lambda part, at: self._encode(part, at == 0))

    @property
    def from_hf(self) -> bool:
        """Read from an HF tokenizer.json (its merges list, its Metaspace): encoded by the
        reference path and decoded as HF's decoders do."""
        return bool(self.merges) or self.metaspace is not None

    def encode_ordinary(self, text: str) -> list[int]:
        """`SentencePieceProcessor.encode(text)`'s ids (`display_chunks`'s, without the chunks):
        SentencePiece's own rule at sentencepiece's speed (fastencode.py); a model read from an HF
        tokenizer.json (its merges list, its Metaspace) by the reference path."""
        check_unicode(text)
        return self._ordinary(text)

    @cached_property
    def _ordinary(self):
        """What `encode_ordinary` calls, chosen once (a caller with one line at a time pays
        every lookup at every call)."""
        return (lambda text: self._encode(text, True)) if self.from_hf else self._fast.encode_ordinary

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """`encode_ordinary` of each text (models/protocol.py EncodesBatches): for a list of
        lines, as `sp.encode(lines)` is called, the new words of all are merged at once."""
        check_unicode(texts)
        if self.from_hf:
            return [self._encode(t, True) for t in texts]
        return self._fast.encode_batch(list(texts))

    @cached_property
    def _fast(self) -> FastEncoder:
        return FastEncoder(normalizer=self.text_normalizer, add_dummy_prefix=self.add_dummy_prefix,
                           scores=self._scores, ids=self._ids, unk=self.unk_id, byte_fallback=self.byte_fallback,
                           byte_ids=self._byte_ids, user=frozenset(self.user_defined),
                           plain_words=self._user is None and self._splits_at_meta,
                           chunks=self._chunks, normalize=self.normalize_text, merge=self._merge,
                           resolve=self._resolve)

    def _encode(self, text: str, at_start: bool) -> list[int]:
        """The reference path: each chunk by `_word` (the agenda heap), unknowns fused."""
        out: list[int] = []
        unk, fuse = self.unk_id, not self.byte_fallback
        for chunk in self._chunks(self.normalize_text(text, at_start)):
            ids = [tid for tid, _ in self._word(chunk)]
            if fuse and out and out[-1] == unk and ids and ids[0] == unk:
                out += ids[1:]
            else:
                out += ids
        return out

    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        check_unicode(text)
        return self._display_chunks(self.normalize_text(text))

    def display_chunks(self, shown: str) -> list[tuple[str, list[int]]]:
        """Normalized text's words with their ids (a run of unknowns fused across words, as
        SentencePiece fuses it: the fused id goes with the word where the run starts)."""
        try:
            return self._display_chunks(shown)
        except UnicodeEncodeError as exc:
            raise lone_surrogate(shown, exc) from None

    def _display_chunks(self, shown: str) -> list[tuple[str, list[int]]]:
        out: list[tuple[str, list[int]]] = []
        unk, fuse = self.unk_id, not self.byte_fallback
        prev_unk = False
        for chunk in self._chunks(shown):
            ids = [tid for tid, _ in self._word(chunk)]
            if fuse and prev_unk and ids and ids[0] == unk:
                ids = ids[1:]
            if ids or not fuse:
                prev_unk = ids[-1] == unk if ids else prev_unk
            out.append((chunk, ids))
        return out

    def char_lengths(self, chunk: str, ids: list[int]) -> list[int]:
        """Characters each id covers: a byte piece's character is on its last byte, a fused
        unknown covers its run."""
        spans = self._word(chunk)
        if [t for t, _ in spans] != list(ids) and spans and spans[0][0] == self.unk_id:
            spans = spans[1:]  # the chunk's leading unknown was fused into the previous chunk's
        return [n for _, n in spans]

    def _chunks(self, normalized: str) -> list[str]:
        """The normalized text cut where no merge can cross: at each USER_DEFINED piece (it
        never merges) and, when the pieces allow it, before each ▁ that follows a character
        (before every ▁ under a splitting Metaspace)."""
        if self.metaspace is not None and self.metaspace[1] and self._user is None:
            return [c for c in _EVERY_META.split(normalized) if c]
        if self._user is None and self._splits_at_meta:
            return _WORD_START.split(normalized) if normalized else []
        parts: list[str] = []
        pos = 0
        if self._user is not None:
            for m in self._user.finditer(normalized):
                if m.start() > pos:
                    parts.append(normalized[pos:m.start()])
                parts.append(m.group())
                pos = m.end()
        if pos < len(normalized):
            parts.append(normalized[pos:])
        if not self._splits_at_meta:
            return parts
        users = set(self.user_defined)
        return [w for part in parts for w in ([part] if part in users else _WORD_START.split(part))]

    def _word(self, chunk: str) -> list[tuple[int, int]]:
        """(id, characters covered) of one chunk, cached."""
        cache = self._cache
        hit = cache.get(chunk)
        if hit is not None:
            return hit
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        if chunk in self.user_defined:
            out = [(self._ids[chunk], len(chunk))]
        else:
            out = self._resolve(self._merge(chunk))
        cache[chunk] = out
        return out

    def merge_symbols(self, normalized: str) -> list[str]:
        """The symbols the merge loop makes of normalized text, before any becomes an id (what
        an export compares with another library's merge rule)."""
        return self._merge(normalized)

    def _merge(self, chunk: str) -> list[str]:
        """bpe_model.cc's agenda: the best-scoring pair first, the leftmost among ties. An entry
        is stale once either side has changed (its length no longer adds up)."""
        symbols = list(chunk)
        n = len(symbols)
        if n < 2:
            return symbols
        score = self._pair_score
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prev = list(range(-1, n - 1))
        agenda = []
        for i in range(n - 1):
            s = score(symbols[i], symbols[i + 1])
            if s is not None:
                agenda.append((-s, i, i + 1, 2))
        heapq.heapify(agenda)
        push = heapq.heappush
        while agenda:
            _, left, right, size = heapq.heappop(agenda)
            a, b = symbols[left], symbols[right]
            if not a or not b or len(a) + len(b) != size:
                continue
            merged = symbols[left] = a + b
            symbols[right] = ""
            after = nxt[left] = nxt[right]
            if after >= 0:
                prev[after] = left
            before = prev[left]
            if before >= 0:
                s = score(symbols[before], merged)
                if s is not None:
                    push(agenda, (-s, before, left, len(symbols[before]) + len(merged)))
            if after >= 0:
                s = score(merged, symbols[after])
                if s is not None:
                    push(agenda, (-s, left, after, len(merged) + len(symbols[after])))
        return [s for s in symbols if s]

    def _resolve(self, symbols: list[str]) -> list[tuple[int, int]]:
        """Ids of the merged symbols: an unknown one as its bytes (byte_fallback) or as unk,
        a run of unks fused."""
        ids, unk = self._ids, self.unk_id
        out: list[tuple[int, int]] = []
        for sym in symbols:
            tid = ids.get(sym, unk)
            if tid != unk:
                out.append((tid, len(sym)))
            elif self.byte_fallback:
                raw = sym.encode("utf-8")
                out += [(self._byte_ids[b], 0) for b in raw[:-1]] + [(self._byte_ids[raw[-1]], len(sym))]
            elif out and out[-1][0] == unk:
                out[-1] = (unk, out[-1][1] + len(sym))
            else:
                out.append((unk, len(sym)))
        return out

    # -- decoding --------------------------------------------------------------------------
    def _checked(self, ids: list[int]) -> list[int]:
        return check_ids(ids, len(self.pieces))

    def decode(self, ids: list[int], errors: str = "strict") -> str:
        """SentencePiece's `Decode` of these ids; a run of byte pieces that is not UTF-8 as HF's
        ByteFallback shows it where the model is an HF file's (a U+FFFD a byte)."""
        pieces, types = self.pieces, self.types
        bytes_text = hf_bytes_text if self.from_hf else sp_bytes_text
        norm = self.text_normalizer
        strip_lead = self.add_dummy_prefix or norm.remove_extra_whitespaces
        text: list[str] = []
        pending = bytearray()
        at_start, lead_seen = True, False
        for tid in self._checked(ids):
            kind = types[tid]
            if kind == BYTE:
                pending.append(self._byte_of[tid])
                continue
            if pending:
                text.append(bytes_text(bytes(pending)))
                pending.clear()
            if lead_seen or any(text):
                at_start = False
            lead_seen = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                text.append(self.unk_surface)
                continue
            piece = pieces[tid]
            if at_start and strip_lead and piece.startswith(META):
                piece = piece[1:]
                lead_seen = not norm.remove_extra_whitespaces  # collapsing: keep dropping while nothing shows
            text.append(piece.replace(META, " "))
        if pending:
            text.append(bytes_text(bytes(pending)))
        return "".join(text)

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self.decode(ids).encode("utf-8")


def sp_normalized(norm: SpNormalizer, add_dummy_prefix: bool, text: str) -> str:
    """SentencePiece's normalized text (`Normalizer::Normalize`): ▁ for spaces and the dummy ▁
    in front; what its trainer learns from and its encoder merges over."""
    out = norm.normalize(text)
    if norm.remove_extra_whitespaces:
        if out.startswith(" " + META):
            out = out[1:]  # spnormalize's space for metaspace: SentencePiece's own prefix is below
        present = bool(out)  # all of it collapsed away: SentencePiece adds no prefix either
    else:
        present = bool(text)
    out = out.replace(" ", META)
    return META + out if add_dummy_prefix and present else out
