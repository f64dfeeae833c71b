"""A trained tokenizer, frozen: encode by merge rank inside each chunk, decode with strict/replace.

Special tokens follow tiktoken's rule: a special token's string in the text is an error unless
the caller allows it, in which case it becomes the special id. Unseen characters (char units)
become <unk> if the model has one, otherwise an error naming the character and its offset.
"""

from collections.abc import Collection
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import regex

from .batchbpe import MergeTable, bpe_many
from .errors import DecodeError, EncodeError
from .normalize import normalize
from .parallel import can_parallelize, encode_parallel
from .pretokenize import PreTokenizer
from .vocab import render_bytes

UNK = "<unk>"
_CACHE_LIMIT = 1 << 18
_BATCH_FROM = 256  # new chunks: below this, one `_bpe` call each costs less than numpy rounds


@dataclass(frozen=True)
class Tokenizer:
    units: str
    normalizer: str
    pre_tokenizer: PreTokenizer
    tie_break: str
    base: tuple[str, ...] | None
    merges: tuple[tuple[int, int], ...]
    special_tokens: tuple[str, ...] = ()
    history: tuple[Any, ...] = ()
    ids: tuple[int, ...] | None = None
    """The id the outside world uses for each internal id (an imported Hugging Face vocabulary
    numbers its tokens its own way); None means they are the same. Internally, byte b is id b
    and merge k is id base+k, always."""
    _derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # -- vocabulary ------------------------------------------------------------------------
    @property
    def base_size(self) -> int:
        return 256 if self.units == "byte" else len(self.base or ())

    @property
    def vocab_size(self) -> int:
        return self.base_size + len(self.merges) + len(self.special_tokens)

    @property
    def _special_internal(self) -> dict[str, int]:
        """Special tokens and their internal ids: right after the merges."""
        first = self.base_size + len(self.merges)
        return {s: first + i for i, s in enumerate(self.special_tokens)}

    @property
    def special_ids(self) -> dict[str, int]:
        """Special tokens and the ids the outside world sees."""
        return {s: self._ext(i) for s, i in self._special_internal.items()}

    def _ext(self, internal: int) -> int:
        return internal if self.ids is None else self.ids[internal]

    def to_external(self, ids: list[int]) -> list[int]:
        if self.ids is None:
            return ids
        table = self.ids
        return [table[i] for i in ids]

    def to_internal(self, ids: list[int]) -> list[int]:
        """Validate outside ids and map them in; an unknown id is a clear error with its position."""
        if self.ids is None:
            for pos, t in enumerate(ids):
                self._check_id(t, pos)
            return list(ids)
        table = self._derived.get("internal")
        if table is None:
            table = self._derived["internal"] = {e: i for i, e in enumerate(self.ids)}
        out = []
        for pos, t in enumerate(ids):
            i = table.get(t) if isinstance(t, int) and not isinstance(t, bool) else None
            if i is None:
                raise DecodeError(f"id {t!r} at position {pos} is not in this vocabulary "
                                  f"(ids {min(self.ids)}..{max(self.ids)})")
            out.append(i)
        return out

    @property
    def vocab(self) -> list:
        """Id -> token (bytes for byte units, str for char units), specials last."""
        vocab = self._derived.get("vocab")
        if vocab is None:
            if self.units == "byte":
                vocab = [bytes([i]) for i in range(256)]
            else:
                vocab = list(self.base or ())
            for a, b in self.merges:
                vocab.append(vocab[a] + vocab[b])
            for s in self.special_tokens:
                vocab.append(s.encode("utf-8") if self.units == "byte" else s)
            self._derived["vocab"] = vocab
        return vocab

    def prime_vocab(self, tokens: list) -> None:
        """Take the base+merged tokens from a trainer that already has them (same ids)."""
        specials = [s.encode("utf-8") if self.units == "byte" else s for s in self.special_tokens]
        self._derived["vocab"] = list(tokens) + specials

    def token_bytes(self, tid: int) -> bytes:
        """Bytes of an outside id."""
        tok = self.vocab[self.to_internal([tid])[0]]
        return tok if isinstance(tok, bytes) else tok.encode("utf-8")

    def piece_text(self, internal: int) -> str:
        """Text of an internal id (merges name internal ids)."""
        tok = self.vocab[internal]
        return render_bytes(tok) if isinstance(tok, bytes) else tok

    def token_text(self, tid: int) -> str:
        tok = self.vocab[self.to_internal([tid])[0]]
        return render_bytes(tok) if isinstance(tok, bytes) else tok

    # -- encoding --------------------------------------------------------------------------
    def encode(
        self,
        text: str,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = "all",
    ) -> list[int]:
        specials = self.special_ids
        allowed = set(specials) if allowed_special == "all" else set(allowed_special)
        unknown = allowed - set(specials)
        if unknown:
            raise EncodeError(f"not a special token of this model: {', '.join(sorted(unknown))}")
        disallowed = (set(specials) - allowed) if disallowed_special == "all" else set(disallowed_special)
        for s in disallowed:
            at = text.find(s)
            if at >= 0:
                raise EncodeError(
                    f"text contains the special token {s!r} at offset {at}; allow it to encode it as"
                    " a special token, or encode it as ordinary text"
                )
        if not allowed:
            return self.to_external(self._encode_text(text, 0))
        internal_specials = self._special_internal
        ids: list[int] = []
        pos = 0
        pattern = "|".join(regex.escape(s) for s in sorted(allowed, key=len, reverse=True))
        for m in regex.finditer(pattern, text):
            ids.extend(self._encode_text(text[pos : m.start()], pos))
            ids.append(internal_specials[m.group()])
            pos = m.end()
        ids.extend(self._encode_text(text[pos:], pos))
        return self.to_external(ids)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode with special-token strings treated as plain text."""
        return self.to_external(self._encode_text(text, 0))

    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        """Each pre-tokenizer chunk of the normalized text with its internal ids (index `vocab`):
        what the views draw."""
        text = normalize(text, self.normalizer)
        return [(c, self._encode_chunk(c, 0)) for c in self.pre_tokenizer.split(text)]

    def __getstate__(self):
        """Pickled (for worker processes) without the caches."""
        state = dict(self.__dict__)
        state["_derived"] = {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _encode_text(self, text: str, offset: int) -> list[int]:
        """Each distinct chunk is encoded once (and cached); the rest is C-speed lookups.
        Long texts with a preset pattern are cut where the preset always cuts and encoded on
        all cores."""
        if not text:
            return []
        text = normalize(text, self.normalizer)
        if can_parallelize(self.pre_tokenizer, len(text)):
            return encode_parallel(self, text)
        return self._encode_normalized(text, offset)

    def _encode_normalized(self, text: str, offset: int) -> list[int]:
        chunks = self.pre_tokenizer.split(text)
        cache = self._derived.get("cache")
        if cache is None or len(cache) > _CACHE_LIMIT:
            cache = self._derived["cache"] = _ChunkCache(self._encode_chunk)
        if self.units == "byte" and len(chunks) >= _BATCH_FROM:
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

    def _encode_new_chunks_at_once(self, chunks: list[str], cache: dict) -> None:
        """Fill the cache for every chunk not in it with one `bpe_many` call (half the time of
        one `_bpe` call per chunk on a large text). A lone surrogate leaves it to the per-chunk
        path, which names its offset."""
        new = set(chunks).difference(cache)
        if len(new) < _BATCH_FROM:
            return
        new = list(new)
        try:
            pieces = [c.encode("utf-8") for c in new]
        except UnicodeEncodeError:
            return
        table = self._derived.get("merge_table")
        if table is None:
            table = self._derived["merge_table"] = MergeTable.of(self.merges, self.base_size)
        cache.update(zip(new, bpe_many(pieces, table)))

    def _encode_chunk(self, chunk: str, offset: int) -> list[int]:
        if self.units == "byte":
            try:
                return self._bpe(list(chunk.encode("utf-8")))
            except UnicodeEncodeError as exc:
                raise EncodeError(f"cannot encode lone surrogate at offset {offset + exc.start}") from None
        return self._encode_chars(chunk, offset)

    def _encode_chars(self, chunk: str, offset: int) -> list[int]:
        index = self._derived.get("char_index")
        if index is None:
            index = self._derived["char_index"] = {c: i for i, c in enumerate(self.base or ())}
        unk = self._special_internal.get(UNK)
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
                    " char-unit vocabulary, and the model has no <unk> token"
                )
            ids.extend(self._bpe(run))
            ids.append(unk)
            run = []
        ids.extend(self._bpe(run))
        return ids

    def _bpe(self, ids: list[int]) -> list[int]:
        """Apply merges by rank. All occurrences of the lowest-ranked pair are merged left to right
        at once: a merge only makes pairs that contain its new id, whose ranks are all higher.
        Pairs are looked up as one integer (a << 32 | b): no tuple to build and hash."""
        if len(ids) < 2:
            return ids
        ranks = self._derived.get("ranks")
        if ranks is None:
            ranks = self._derived["ranks"] = {a << 32 | b: r for r, (a, b) in enumerate(self.merges)}
        never = len(self.merges)
        get = ranks.get
        pair_ranks = [get(a << 32 | b, never) for a, b in zip(ids, ids[1:])]
        first = self.base_size
        while True:
            r = min(pair_ranks)
            if r == never:
                return ids
            z = first + r
            i = pair_ranks.index(r)
            while True:
                ids[i : i + 2] = (z,)
                del pair_ranks[i]
                if i:
                    pair_ranks[i - 1] = get(ids[i - 1] << 32 | z, never)
                if i < len(pair_ranks):
                    pair_ranks[i] = get(z << 32 | ids[i + 1], never)
                elif not pair_ranks:
                    return ids
                try:
                    i = pair_ranks.index(r, i + 1)
                except ValueError:
                    break

    # -- decoding --------------------------------------------------------------------------
    def decode_bytes(self, ids: list[int]) -> bytes:
        ids = self.to_internal(ids)
        vocab = self.vocab
        if self.units == "char":
            return "".join(vocab[t] for t in ids).encode("utf-8")
        return b"".join(vocab[t] for t in ids)

    def decode(self, ids: list[int], errors: str = "strict") -> str:
        if self.units == "char":
            return "".join(self.vocab[t] for t in self.to_internal(ids))
        data = self.decode_bytes(ids)
        try:
            return data.decode("utf-8", errors=errors)
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"the ids decode to bytes that are not valid UTF-8 at byte offset {exc.start}"
                f" ({data[exc.start:exc.end].hex(' ')}); decode with errors=replace to see U+FFFD there"
            ) from None

    def _check_id(self, tid: int, pos: int | None = None) -> int:
        if not isinstance(tid, int) or isinstance(tid, bool) or not 0 <= tid < self.vocab_size:
            where = f" at position {pos}" if pos is not None else ""
            raise DecodeError(
                f"id {tid!r}{where} is out of range: this vocabulary has ids 0..{self.vocab_size - 1}"
            )
        return tid


class _ChunkCache(dict):
    """Chunk -> ids, filled on first sight: `map(cache.__getitem__, chunks)` then runs at C
    speed for every chunk seen before, and only a miss calls back into Python."""

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
