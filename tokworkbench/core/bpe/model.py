"""A trained BPE model, frozen: encode by merge rank inside each chunk, decode with strict/replace.

Special tokens follow tiktoken's rule: a special token's string in the text is an error unless
the caller allows it, in which case it becomes the special id. Unseen characters (char units)
become <unk> if the model has one, otherwise an error naming the character and its offset.

The dataclass fields define the model. Lookup tables are derived from them once, on first use
(`cached_property`), and the chunk cache memoizes a pure function of them: none of these change
what the model is, and none travel when it is pickled.
"""

from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property, wraps
from itertools import chain
from typing import Any

import numpy as np

from tokworkbench.core.bpe.batchbpe import MergeTable, bpe_flat
from tokworkbench.core.bpe.chunkstore import ChunkStore
from tokworkbench.core.bpe.encode import lowest_rank_parts, merge_by_pairs, merge_ids
from tokworkbench.core.bpe.rankguard import RankGuard, odd_tokens
from tokworkbench.core.errors import DecodeError, EncodeError, InvalidUtf8DecodeError, LoneSurrogateError, check_unicode
from tokworkbench.core.inspection.escape import render_bytes
from tokworkbench.core.models.added import AddedVocabulary
from tokworkbench.core.models.idmap import IdMap
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.models.specials import encode_with_specials
from tokworkbench.core.text.fastsplit import FAST_PRESETS, chunk_starts
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.parallel import can_parallelize, encode_parallel
from tokworkbench.core.text.pretokenize import PreTokenizer
from tokworkbench.core.units import Units

UNK = "<unk>"
JOINS = ("merges", "ranks", "pairs")
_CACHE_LIMIT = 1 << 18
_BATCH_FROM = 256  # new chunks: below this, one `merge_ids` call each costs less than numpy rounds
_DERIVED = ("ranked_tokens", "_inside_of", "_byte_ranks", "_pair_table", "_ranks", "_char_index", "_merge_table",
            "_chunk_cache", "_outside_array", "_chunk_store", "_rank_guard")


def _surrogates_as_tiktoken(method):
    """A ranks model (`tiktoken_text`) whose text holds a lone surrogate reads it again as
    tiktoken's encode does once Rust refuses the str: through UTF-16, a pair becoming its
    character and a lone one U+FFFD. Only after the refusal, so valid text pays nothing."""
    @wraps(method)
    def read(self, text: str, *args, **kwargs):
        try:
            return method(self, text, *args, **kwargs)
        except LoneSurrogateError:
            if not self.tiktoken_text:
                raise
            return method(self, text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), *args, **kwargs)
    return read


@dataclass(frozen=True)
class Tokenizer:
    units: Units
    normalizer: str
    pre_tokenizer: PreTokenizer
    tie_break: str
    base: tuple[str, ...] | None
    merges: tuple[tuple[int, int], ...]
    """Rank order; each pair names inside ids (base unit b is b, merge k makes base+k)."""
    special_tokens: tuple[str, ...] = ()
    history: tuple[Any, ...] = ()
    ids: IdMap | None = None
    """Outside ids when the model's file numbers tokens its own way; None: outside = inside."""
    roles: Roles = NO_ROLES
    """What some special tokens are for (bos, eos, pad, unk): each names one of `special_tokens`."""
    whole_tokens: tuple = ()
    """Tokens no merge makes (inside ids right after the merges'): a chunk reaches one only by
    being it whole (tiktoken's lookup, HF's ignore_merges), or through `join`'s own rule."""
    whole_chunk: bool = False
    """Look each chunk up whole among the ordinary tokens before joining anything (tiktoken
    always does; HF with ignore_merges). Set only where it changes ids: where every token is
    what the joins make of its own bytes, the lookup finds what the joins would."""
    join: str = "merges"
    """How a chunk's units are joined. "merges": merge r (making base + r) by rank, each joining
    ids made before it. "ranks": tiktoken's rule, the adjacent pair whose joined bytes have the
    lowest outside id (ranks files whose ranks no merge list reproduces). "pairs": HF's rule
    over `pairs`, by position in that list, whose parts may be made later in it."""
    pairs: tuple[tuple[int, int, int], ...] = ()
    """join "pairs": (left, right, made) inside ids, in priority order (HF's merges list)."""
    added: AddedVocabulary | None = None
    """A tokenizer.json's added tokens (outside ids): cut out of the text HF's way before the
    normalizer (models/added.py); None: special tokens by tiktoken's rule alone."""
    tiktoken_text: bool = False
    """Read text as tiktoken does (set for a ranks file): only what the pattern matches is
    encoded and the text between is dropped (its findall; presets and the patterns tiktoken's
    own files carry match every character, so that changes ids only for a custom pattern), and
    a text holding lone surrogates is read again through UTF-16, so a pair is its character and
    a lone one U+FFFD (`_surrogates_as_tiktoken`). Other models refuse such text, as HF, sentencepiece and minbpe do."""

    kind = "bpe"

    def __post_init__(self):
        if self.join not in JOINS:
            raise ValueError(f"join {self.join!r} is not one of {', '.join(JOINS)}")
        object.__setattr__(self, "units", Units.named(self.units))
        if self.ids is not None and not isinstance(self.ids, IdMap):
            object.__setattr__(self, "ids", IdMap.of(self.ids))
        object.__setattr__(self, "roles", Roles.of(self.roles).check(self.special_tokens))

    @classmethod
    def with_tokens(cls, tokens: list, **fields) -> "Tokenizer":
        """A model whose base+merged tokens are already known (a trainer has them): the table
        is taken instead of being rebuilt from the merges."""
        tok = cls(**fields)
        tok.__dict__["ranked_tokens"] = list(tokens)
        return tok

    # -- vocabulary ------------------------------------------------------------------------
    @property
    def base_size(self) -> int:
        return self.units.base_size(self.base)

    @property
    def vocab_size(self) -> int:
        return self.base_size + len(self.merges) + len(self.whole_tokens) + len(self.special_tokens)

    @property
    def special_ids(self) -> dict[str, int]:
        """Special tokens and their (outside) ids."""
        return {s: self._outside_one(i) for s, i in self._special_inside.items()}

    @property
    def unk_token(self) -> str:
        """What stands for an unseen character (char units): the unk role's token, else <unk>."""
        return self.roles.unk or UNK

    @property
    def _special_inside(self) -> dict[str, int]:
        first = self.base_size + len(self.merges) + len(self.whole_tokens)
        return {s: first + i for i, s in enumerate(self.special_tokens)}

    def _outside_one(self, inside: int) -> int:
        return inside if self.ids is None else self.ids[inside]

    def to_outside(self, ids: list[int]) -> list[int]:
        """Inside ids (ranks) as the ids the outside world uses."""
        return ids if self.ids is None else self.ids.to_outside(ids)

    def to_inside(self, ids: list[int]) -> list[int]:
        """Validate outside ids and map them to ranks; an unknown id is an error naming it."""
        if self.ids is not None:
            return self.ids.to_inside(ids)
        size = self.vocab_size
        for pos, t in enumerate(ids):
            if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < size:
                raise DecodeError(f"id {t!r} at position {pos} is out of range: "
                                  f"this vocabulary has ids 0..{size - 1}")
        return list(ids)

    @cached_property
    def ranked_tokens(self) -> list:
        """Base and merged tokens in rank (inside id) order: bytes, or str for char units."""
        tokens = self.units.base_tokens(self.base)
        try:
            for a, b in self.merges:
                tokens.append(tokens[a] + tokens[b])
        except IndexError:  # a part made later (join "pairs"): build the rest part first
            return _tokens_in_any_order(tokens[: self.base_size], self.merges, self.whole_tokens)
        tokens.extend(self.whole_tokens)
        return tokens

    @property
    def ordinary_size(self) -> int:
        """Base, merged and whole-only tokens: every id but the specials'."""
        return self.base_size + len(self.merges) + len(self.whole_tokens)

    def is_whole_only(self, tid: int) -> bool:
        """Whether the token of outside id `tid` has no merge parents: no merge makes it, and a
        chunk reaches it only by being it whole (what the vocabulary and history views say)."""
        inside = self.to_inside([tid])[0]
        return self.base_size + len(self.merges) <= inside < self.ordinary_size

    def self_joins(self, tids: list[int]) -> list[bool | None]:
        """For each outside id: whether the joins (`apply_merges`) make the token of its own
        units alone; None for a special token (models/protocol.py SelfJoining). Byte-unit
        merges are joined all at once (`bpe_flat`): o200k's 200,000 tokens in about a second."""
        inside = self.to_inside(list(tids))
        ordinary = self.ordinary_size
        rows = [i for i in inside if i < ordinary]
        tokens = self.ranked_tokens
        if self._plain and self.units.is_bytes:
            flat, lens = bpe_flat([tokens[i] for i in rows], self._merge_table)
            ends = np.cumsum(lens)
            single = (lens == 1) & (flat[np.maximum(ends - 1, 0)] == np.asarray(rows, dtype=np.int64))
            made = dict(zip(rows, single.tolist()))
        else:
            index = self._char_index
            made = {i: self.apply_merges(list(tokens[i]) if self.units.is_bytes else [index[c] for c in tokens[i]])
                    == [i] for i in rows}
        return [made.get(i) for i in inside]

    def _token_inside(self, inside: int):
        n = self.ordinary_size
        return self.ranked_tokens[inside] if inside < n else self.units.token(self.special_tokens[inside - n])

    def token(self, tid: int):
        """The vocabulary entry of an outside id: bytes, or str for char units."""
        return self._token_inside(self.to_inside([tid])[0])

    def token_bytes(self, tid: int) -> bytes:
        return Units.to_bytes(self.token(tid))

    def token_text(self, tid: int) -> str:
        tok = self.token(tid)
        return render_bytes(tok) if isinstance(tok, bytes) else tok

    def rank_text(self, rank_id: int) -> str:
        """Text of an inside id, as `merges` name them (for listing merges)."""
        tok = self._token_inside(rank_id)
        return render_bytes(tok) if isinstance(tok, bytes) else tok

    # -- encoding --------------------------------------------------------------------------
    @_surrogates_as_tiktoken
    def encode(
        self,
        text: str,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = "all",
    ) -> list[int]:
        self._check_chars(text)
        if self.added is not None:
            return self.added.encode(text, allowed_special, disallowed_special, self._normalize, self.encode_normalized)
        return encode_with_specials(text, self.special_ids, allowed_special, disallowed_special, self._encode_text)

    @_surrogates_as_tiktoken
    def encode_ordinary(self, text: str) -> list[int]:
        """Encode with special-token strings treated as plain text (an HF file's added tokens
        that are not special are still cut out, as HF does)."""
        self._check_chars(text)
        if self.added is not None:
            return self.added.encode(text, (), (), self._normalize, self.encode_normalized)
        return self._encode_text(text, 0)

    def _normalize(self, text: str) -> str:
        return normalize(text, self.normalizer)

    def _check_chars(self, text: str) -> None:
        """Bytes meet a lone surrogate making UTF-8 (the error names its offset); characters
        would take it as an unknown character, which HF's char-level BPE refuses too."""
        if not self.units.is_bytes:
            check_unicode(text)

    @_surrogates_as_tiktoken
    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        """Each pre-tokenizer chunk of the normalized text with its ids: what the views draw.
        Text a ranks file's custom pattern does not match is a chunk of no ids (see `drops_unmatched`)."""
        self._check_chars(text)
        text = normalize(text, self.normalizer)
        if self.drops_unmatched:
            return self._matched_chunks(text)
        out, at = [], 0
        for c in self.pre_tokenizer.split(text):
            out.append((c, self.to_outside(self._encode_chunk(c, at))))  # an error names its offset in the text
            at += len(c)
        return out

    @property
    def drops_unmatched(self) -> bool:
        """Whether text its pattern does not match is dropped, not encoded (`tiktoken_text` with
        a custom pattern): a ranks file read with `--split regex:\\w+` kept the text between
        the words, and gave ids for "," and " " that tiktoken never gives."""
        pre = self.pre_tokenizer
        return self.tiktoken_text and pre.pattern is not None and not pre.is_preset_pattern

    def _matched_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        out, at = [], 0
        for a, b in self.pre_tokenizer.matched_spans(text):
            if a > at:
                out.append((text[at:a], []))
            out.append((text[a:b], self.to_outside(self._encode_chunk(text[a:b], a))))
            at = b
        if at < len(text):
            out.append((text[at:], []))
        return out

    def encode_normalized(self, text: str, offset: int = 0) -> list[int]:
        """Ids of text that is already normalized (what parallel encoding hands each worker)."""
        return self._encode_serial(text, offset)

    def apply_merges(self, units: list[int]) -> list[int]:
        """The inside ids BPE makes of a run of base units (one chunk's bytes or characters), by
        the model's `join` (no whole-chunk lookup: `_encode_chunk` does that)."""
        if self.join == "ranks":
            inside = self._inside_of
            return [inside[p] for p in lowest_rank_parts(self._byte_ranks, bytes(units))]
        if self.join == "pairs":
            return merge_by_pairs(list(units), self._pair_table)
        return merge_ids(list(units), self._ranks.get, len(self.merges), self.base_size)

    @property
    def _plain(self) -> bool:
        """Encoded by the merges alone, so the batch paths (numpy over many chunks) apply."""
        return self.join == "merges" and not self.whole_chunk

    @property
    def _batched(self) -> bool:
        """The batch paths apply: byte units, and the merges alone or tiktoken's rank rule,
        whose odd chunks `_rank_guard` hands to it one by one."""
        return self.units.is_bytes and (self._plain or self.join == "ranks")

    @cached_property
    def _rank_guard(self) -> RankGuard | None:
        """join "ranks": the tokens the merges do not make of their own bytes, found by the
        batch path itself over every token (under 0.2 s for Llama 3's 128,000)."""
        if self._plain:
            return None
        tokens = self.ranked_tokens[: self.ordinary_size]
        merged, lengths = bpe_flat(list(tokens), self._merge_table)
        return RankGuard(odd_tokens(tokens, merged, lengths))

    def _batch_flat(self, chunks: list[str], pieces: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Outside ids of many chunks (their UTF-8 `pieces`) as one flat array and each
        chunk's count: the merges' batch path, and the rank rule for the odd chunks."""
        guard = self._rank_guard
        odd = guard.unsafe(pieces) if guard is not None else []
        if odd:
            pieces = list(pieces)
            for i in odd:
                pieces[i] = b""
        ids, lens = bpe_flat(pieces, self._merge_table, self._outside_array)
        if odd:
            made = [self._encode_chunk_outside(chunks[i], 0) for i in odd]
            sizes = [len(m) for m in made]
            bounds = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
            ids = np.insert(ids, np.repeat(bounds[odd], sizes),
                            np.fromiter(chain.from_iterable(made), dtype=np.int64, count=sum(sizes)))
            lens[odd] = sizes
        return ids, lens

    @cached_property
    def _inside_of(self) -> dict:
        """Each ordinary token (bytes, or str for char units) and its inside id."""
        return {t: i for i, t in enumerate(self.ranked_tokens)}

    @cached_property
    def _byte_ranks(self) -> dict[bytes, int]:
        """join "ranks": each ordinary token's bytes and its rank (outside id)."""
        return dict(zip(self.ranked_tokens, self.to_outside(list(range(self.ordinary_size)))))

    @cached_property
    def _pair_table(self) -> dict[int, tuple[int, int]]:
        """join "pairs": pair key -> (priority, made); of a pair given twice the later wins, as
        in HF's table (collected into a map in list order)."""
        return {a << 32 | b: (r, z) for r, (a, b, z) in enumerate(self.pairs)}

    def __getstate__(self):
        """Pickled (for worker processes) without the derived tables."""
        return {k: v for k, v in self.__dict__.items() if k not in _DERIVED}

    def __setstate__(self, state):
        self.__dict__.update(state)

    @cached_property
    def _ranks(self) -> dict[int, int]:
        return {a << 32 | b: r for r, (a, b) in enumerate(self.merges)}

    @cached_property
    def _char_index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.base or ())}

    @cached_property
    def _merge_table(self) -> MergeTable:
        return MergeTable.of(self.merges, self.base_size)

    @cached_property
    def _chunk_cache(self) -> "_ChunkCache":
        return _ChunkCache(self._encode_chunk_outside)

    def _encode_text(self, text: str, offset: int) -> list[int]:
        """Long texts with a preset pattern are cut where the preset always cuts and encoded on
        all cores."""
        if not text:
            return []
        text = normalize(text, self.normalizer)
        if can_parallelize(self.pre_tokenizer, len(text)):
            return encode_parallel(self, text)
        return self.encode_normalized(text, offset)

    def _encode_serial(self, text: str, offset: int) -> list[int]:
        """Outside ids. Each distinct chunk is encoded once (and cached, already as outside
        ids); the rest is C-speed lookups."""
        pre = self.pre_tokenizer
        if self._batched and pre.is_preset_pattern and pre.name in FAST_PRESETS:
            found = chunk_starts(pre.name, text)
            if found is not None:
                return self._encode_by_offsets(text, offset, *found)
        chunks = pre.matches(text) if self.drops_unmatched else pre.split(text, at_start=offset == 0)
        cache = self._chunk_cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        try:  # every chunk seen before: one pass of lookups (a chunk not seen gives None)
            return list(chain.from_iterable(map(cache.get, chunks)))
        except TypeError:
            pass
        if self._batched and len(chunks) >= _BATCH_FROM:
            self._encode_new_chunks_at_once(chunks, cache)
        try:
            return list(chain.from_iterable(map(cache.__getitem__, chunks)))
        except EncodeError as exc:
            pos = offset  # find where it fails in the text, for the message
            for c in chunks:
                if c == exc.chunk:
                    break
                pos += len(c)
            self._encode_chunk(exc.chunk, pos)
            raise

    @cached_property
    def _chunk_store(self) -> ChunkStore:
        return ChunkStore()

    def _encode_by_offsets(self, text: str, offset: int, cps: np.ndarray, starts: np.ndarray) -> list[int]:
        """A long text under a fast preset: its chunks are found by offset and looked up in the
        chunk store all at once; one of each new chunk is cut out as a str and encoded."""
        store = self._chunk_store
        if len(store) > _CACHE_LIMIT:
            store = self.__dict__["_chunk_store"] = ChunkStore()
        entries, hashes, stand_in = store.find_tiling(cps, starts)
        made = self._store_new(store, text, offset, cps, starts, stand_in, hashes, entries) if len(stand_in) else None
        return store.ids_of(entries, made)

    def _store_new(self, store: ChunkStore, text: str, offset: int, cps: np.ndarray, starts: np.ndarray,
                   rows: np.ndarray, hashes: np.ndarray, entries: np.ndarray) -> np.ndarray:
        """Encode the chunks `rows` (distinct, ascending) and store them; their entries. A lone
        surrogate is an error naming its first offset in the text (of the chunks not stored,
        whose `entries` are negative)."""
        a = starts[rows]
        after = rows + 1
        b = np.where(after < len(starts), starts[np.minimum(after, len(starts) - 1)], len(cps))
        chunks = list(map(text.__getitem__, map(slice, a.tolist(), b.tolist())))
        try:
            pieces = list(map(str.encode, chunks))
        except UnicodeEncodeError:
            # the text's first surrogate is in the first chunk that cannot be encoded (a stored chunk holds none)
            first = int(np.flatnonzero((cps >= 0xD800) & (cps < 0xE000))[0])
            i = int(np.searchsorted(starts, first, side="right")) - 1
            end = int(starts[i + 1]) if i + 1 < len(starts) else len(cps)
            self._encode_chunk(text[starts[i] : end], offset + int(starts[i]))  # raises, naming its offset
            raise
        if len(pieces) >= _BATCH_FROM:
            ids, id_lens = self._batch_flat(chunks, pieces)
        else:
            made = [self._encode_chunk_outside(c, 0) for c in chunks]
            id_lens = np.fromiter(map(len, made), dtype=np.int64, count=len(made))
            ids = np.fromiter(chain.from_iterable(made), dtype=np.int64, count=int(id_lens.sum()))
        return store.add(cps, a, b - a, hashes[rows], ids, id_lens)

    def _encode_new_chunks_at_once(self, chunks: list[str], cache: dict) -> None:
        """Fill the cache for every chunk not in it with one `bpe_flat` call (half the time of
        one `merge_ids` call per chunk on a large text). A lone surrogate leaves it to the
        per-chunk path, which names its offset."""
        new = set(chunks).difference(cache)
        if len(new) < _BATCH_FROM:
            return
        new = list(new)
        try:
            pieces = list(map(str.encode, new))
        except UnicodeEncodeError:
            return
        flat, lens = self._batch_flat(new, pieces)
        flat = flat.tolist()
        bounds = [0, *np.cumsum(lens).tolist()]
        cache.update(zip(new, (flat[i:j] for i, j in zip(bounds, bounds[1:]))))

    @cached_property
    def _outside_array(self) -> np.ndarray | None:
        return None if self.ids is None else np.array(self.ids.outside, dtype=np.int64)

    def _encode_chunk_outside(self, chunk: str, offset: int) -> list[int]:
        return self.to_outside(self._encode_chunk(chunk, offset))

    def _encode_chunk(self, chunk: str, offset: int) -> list[int]:
        if self.units.is_bytes:
            try:
                data = chunk.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise LoneSurrogateError(f"cannot encode lone surrogate at offset {offset + exc.start}") from None
            if self.whole_chunk:
                whole = self._inside_of.get(data)
                if whole is not None:
                    return [whole]
            return self.apply_merges(list(data))
        if self.whole_chunk:
            whole = self._inside_of.get(chunk)
            if whole is not None:
                return [whole]
        return self._encode_chars(chunk, offset)

    def char_lengths(self, chunk: str, ids: list[int]) -> list[int]:
        """Characters each of a chunk's ids covers: the unknown-character token covers one."""
        unk = self.special_ids.get(self.unk_token) if not self.units.is_bytes else None
        return [1 if t == unk else len(self.token(t)) for t in ids]

    def _encode_chars(self, chunk: str, offset: int) -> list[int]:
        index = self._char_index
        unk = self._special_inside.get(self.unk_token)
        ids: list[int] = []
        run: list[int] = []
        for i, ch in enumerate(chunk):
            tid = index.get(ch)
            if tid is not None:
                run.append(tid)
                continue
            if unk is None:
                raise EncodeError(
                    f"character {ch!r} (U+{ord(ch):04X}) at offset {offset + i} is not in this"
                    f" char-unit vocabulary, and the model has no {self.unk_token} token"
                )
            ids.extend(self.apply_merges(run))
            ids.append(unk)
            run = []
        ids.extend(self.apply_merges(run))
        return ids

    # -- decoding --------------------------------------------------------------------------
    def _inside_tokens(self, ids: list[int]) -> list:
        """The tokens of outside ids, looked up once each (decode's hot loop: the arena decodes
        every text it scores)."""
        ranked, n = self.ranked_tokens, self.ordinary_size
        return [ranked[t] if t < n else self._token_inside(t) for t in self.to_inside(ids)]

    def decode_bytes(self, ids: list[int]) -> bytes:
        tokens = self._inside_tokens(ids)
        if not self.units.is_bytes:
            return "".join(tokens).encode("utf-8")
        return b"".join(tokens)

    def decode(self, ids: list[int], errors: str = "strict") -> str:
        if not self.units.is_bytes:
            return self.pre_tokenizer.restore_text("".join(self._inside_tokens(ids)))
        data = self.decode_bytes(ids)
        try:
            return self.pre_tokenizer.restore_text(data.decode("utf-8", errors=errors))
        except UnicodeDecodeError as exc:
            raise InvalidUtf8DecodeError(
                f"the ids decode to bytes that are not valid UTF-8 at byte offset {exc.start}"
                f" ({data[exc.start:exc.end].hex(' ')})") from None


def _tokens_in_any_order(base: list, merges, whole: tuple) -> list:
    """The tokens of merges whose parts may be made by later merges: in passes, each building
    the tokens whose two parts are built (as many passes as the longest chain of parts made
    later; a part's token is shorter than the merged one, so a loader that checked the bytes
    leaves no cycle)."""
    first = len(base)
    tokens = base + [None] * len(merges) + list(whole)
    pending = range(len(merges))
    while pending:
        still = []
        for k in pending:
            a, b = merges[k]
            left, right = tokens[a], tokens[b]
            if left is None or right is None:
                still.append(k)
            else:
                tokens[first + k] = left + right
        if len(still) == len(pending):
            raise ValueError("the merges make a token out of itself")
        pending = still
    return tokens


class _ChunkCache(dict):
    """Chunk -> inside ids, filled on first sight: `map(cache.__getitem__, chunks)` then runs at
    C speed for every chunk seen before, and only a miss calls back into Python."""

    def __init__(self, encode_chunk):
        super().__init__()
        self._encode_chunk = encode_chunk

    def __missing__(self, chunk: str) -> list[int]:
        try:
            ids = self[chunk] = self._encode_chunk(chunk, 0)
        except EncodeError as exc:
            exc.chunk = chunk  # so the caller can name the offset in the whole text
            raise
        return ids


