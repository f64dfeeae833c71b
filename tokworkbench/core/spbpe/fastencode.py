"""SentencePiece BPE's `encode_ordinary` at sentencepiece's speed: the same ids as model.py's
exact path (`_word`: the agenda heap of bpe_model.cc), by two shortcuts.

A text's cost was its distinct words (each merged once, then cached) plus, per call, a
lookaround regex split and a Python loop over its words; the two now cost about the same.

- **Lines of plain words.** When the normalized text holds no ▁ of its own, its words are
  ▁ + each part of `split(" ")` (a run of spaces: `_SPACED_WORD`'s parts; model.py cuts before
  a ▁ that follows a character; the dummy prefix is the first word's ▁). So the parts are
  looked up in one pass (`map(dict.get)`), keyed without their ▁, and their ids (kept as
  int64 bytes) joined. Anything else (user-defined pieces, pieces with an inner ▁, a ▁ in the
  text, an unknown that might fuse with the next word's) takes the word-by-word path, which
  cuts with the model's own `_chunks`. Where the normalizer returns the text as it is, the
  steps are one function chosen once per model (`_plain_lines`): where numba runs, a text is
  one compiled call with its own cache of word ids (lines.py, linekernel.py).
- **A line's new words** go to compiled code in one call where numba runs and every score is
  finite (wordkernel.words_ids: the agenda's rule, best rank then leftmost; one dispatch a line,
  not one a word, each about a microsecond).
- **Elsewhere a new word** is merged over two Python lists, the symbols and the score of the piece each
  adjacent pair would make (-inf: none). `max` finds the best score and `index` its leftmost
  pair, both at C speed; a merge recomputes the two pairs beside it. That is the agenda's rule
  step for step: the agenda also holds exactly the pairs of the current symbols that make a
  piece (its stale entries are skipped), pops the highest score, the leftmost among equals,
  and re-scores the merged symbol with its two neighbours. A word of `_LIST_UP_TO` characters or
  more, and a model with a score that is not finite (the sentinel would be ambiguous), keep
  the heap (O(n log n), where the lists are O(n²)); compiled code takes words under
  `_COMPILED_UP_TO` characters. A word whose symbols all are pieces other than unk gets their
  ids; any other goes to model.py's `_resolve` (byte fallback, fused unks).
"""

import re
from array import array
from collections.abc import Callable
from functools import cached_property
from itertools import chain, pairwise
from math import isfinite

import numpy as np

from tokworkbench.core import jit
from tokworkbench.core.gcpause import collector_paused
from tokworkbench.core.spbpe.batchmerge import PairTable, merge_many
from tokworkbench.core.text.spnormalize import META, SpNormalizer

_LIST_UP_TO = 48  # characters: longer words are merged by the heap
# and in compiled code (also quadratic, but at C speed) up to this: 500 characters of Chinese
# took 0.10 ms there against 0.39 by the heap, random base64 0.32 against 0.57; at 1,000 the
# heap won on base64 (1.2 ms against 1.5), and 100k characters took 8.8 s compiled
_COMPILED_UP_TO = 500
_BATCH_FROM = 256  # new words in one call: from this many they are merged in numpy rounds
_LINE_UP_TO = 1 << 14  # characters: a longer text is not given to the compiled line in one call
_CACHE_LIMIT = 1 << 18  # words kept per cache before it is emptied
_NONE = float("-inf")
# a word of the normalized text, spaces for ▁, without its first: what follows the space before it
_SPACED_WORD = re.compile(r"(?:\A| )( *[^ ]+| *\Z)")


class FastEncoder:
    """One model's encoder state: its tables as plain dicts and its caches of word ids. It
    holds the model's reference functions (bound methods) for everything it does not speed up."""

    def __init__(self, *, normalizer: SpNormalizer, add_dummy_prefix: bool, scores: dict[str, float],
                 ids: dict[str, int], unk: int, byte_fallback: bool, byte_ids: list[int], user: frozenset[str],
                 plain_words: bool, chunks: Callable[[str], list[str]], normalize: Callable[[str], str],
                 merge: Callable[[str], list[str]], resolve: Callable[[list[str]], list[tuple[int, int]]]):
        self.normalizer = normalizer
        self.add_dummy_prefix = add_dummy_prefix
        self.scores = scores
        self.ids = ids
        self.unk = unk
        self.byte_fallback = byte_fallback
        self.byte_ids = byte_ids
        self.user = user
        self.plain_words = plain_words  # no user piece, no piece with an inner ▁: words never merge
        self.chunks = chunks
        self.normalize = normalize
        self.heap_merge = merge
        self.resolve = resolve
        self.finite = all(isfinite(s) for s in scores.values())
        # no map, no user pieces, spaces kept: SentencePiece's normalizer returns the text as it is
        self.identity = normalizer.charsmap is None and not normalizer.user and not normalizer.remove_extra_whitespaces
        # a word's text after its ▁ -> the word's ids as native int64 bytes (`_packed`): bytes
        # are not the collector's, where a tuple a new word made as many collections as the
        # lists the caller keeps (one full collection more in 2 MB of lines); a line's ids are
        # its words' bytes joined, read back by array.tolist, as quick as chaining tuples
        self.tails: dict[str, bytes] = {}
        # a word (chunk) -> its ids; kept as tuples: the collector stops tracking a tuple of
        # ints, and scanning a quarter million cached lists on every full collection cost a
        # tenth of a cold encode
        self.words: dict[str, tuple[int, ...]] = {}
        plain = self.identity and self.plain_words and add_dummy_prefix
        self.encode_ordinary: Callable[[str], list[int]] = self._plain_lines() if plain else self._any_text

    # -- a text --------------------------------------------------------------------------
    def _any_text(self, text: str) -> list[int]:
        if not text:
            return []  # no dummy prefix for nothing, whatever the normalizer
        parts = self._plain_parts(text)
        if parts is None:
            return self._by_words(self.normalize(text))
        tails = self.tails
        try:
            ids = array("q", b"".join(map(tails.get, parts))).tolist()
        except TypeError:  # a part not seen before
            self._fill_tails(parts)
            ids = array("q", b"".join(map(tails.__getitem__, parts))).tolist()
        if not self.byte_fallback and self.unk in ids:
            return self._by_words(self.normalize(text))  # a run of unknowns may fuse across words
        return ids

    def _plain_lines(self) -> Callable[[str], list[int]]:
        """`_any_text` for a model whose normalizer returns the text as it is (Mistral's,
        Llama 2's), chosen once per model, since a caller with one line at a time pays its
        steps at every call: in one compiled call where numba runs and every score is finite
        (lines.py; a text of over `_LINE_UP_TO` characters takes the dicts), else the same steps
        with nothing looked up twice (`_plain_lines_by_dicts`)."""
        by_dicts = self._plain_lines_by_dicts()
        if not (self.finite and jit.available()):
            return by_dicts
        from tokworkbench.core.spbpe.lines import CompiledLines

        return CompiledLines(self.pair_table.packed, self.unk, not self.byte_fallback, _COMPILED_UP_TO, _CACHE_LIMIT,
                             self.exact_ids, lambda text: self._by_words(self.normalize(text))
                             ).encoder(by_dicts, _LINE_UP_TO)

    def _plain_lines_by_dicts(self) -> Callable[[str], list[int]]:
        """`_any_text`'s steps for such a model, with nothing looked up twice."""
        tails, findall, fill_tails, join = self.tails, _SPACED_WORD.findall, self._fill_tails, b"".join
        get = tails.get
        unk, fuses = self.unk, not self.byte_fallback

        def encode_ordinary(text: str) -> list[int]:
            if META in text or not text:
                return self._by_words(self.normalize(text)) if text else []
            parts = text.split(" ")
            if "" in parts:
                parts = findall(text)
            found = list(map(get, parts))
            if None in found:  # a part not seen before
                fill_tails(parts)
                found = list(map(get, parts))
            ids = array("q", join(found)).tolist()
            if fuses and unk in ids:
                return self._by_words(self.normalize(text))  # a run of unknowns may fuse across words
            return ids

        return encode_ordinary

    def _fill_tails(self, parts: list[str]) -> None:
        """Puts the ids of each part not yet in `tails` there (the word is ▁ + the part, its
        spaces ▁ too)."""
        tails = self.tails
        if len(tails) > _CACHE_LIMIT:
            tails.clear()
        new = list(set(parts).difference(tails))
        compiled = self._compiled_words
        found = compiled(new, True) if compiled is not None and len(new) < _BATCH_FROM else None
        if found is None:
            found = list(map(_packed, self.fill([META + part.replace(" ", META) for part in new])))
        elif b"" in found:
            found = [raw or _packed(self.exact_ids(META + part.replace(" ", META))) for part, raw in zip(new, found)]
        tails.update(zip(new, found))

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """`encode_ordinary` of each text, as `sp.encode(lines)` takes a list: the new words of
        all of them are merged in one batch (batchmerge.py's rounds pay off from a few hundred
        words; one line holds a dozen)."""
        with collector_paused():
            return self._encode_batch(texts)

    def _encode_batch(self, texts: list[str]) -> list[list[int]]:
        parts_of = [self._plain_parts(t) if t else [] for t in texts]
        tails = self.tails
        wanted = set(chain.from_iterable(parts for parts in parts_of if parts))
        new = wanted.difference(tails)
        if new:
            if len(tails) + len(new) > _CACHE_LIMIT:
                tails.clear()
            self._fill_tails(list(wanted))
        out = []
        fuses = not self.byte_fallback
        for text, parts in zip(texts, parts_of):
            if parts is None:
                out.append(self.encode_ordinary(text))
                continue
            ids = array("q", b"".join(map(tails.__getitem__, parts))).tolist()
            if fuses and self.unk in ids:
                ids = self._by_words(self.normalize(text))  # a run of unknowns may fuse across words
            out.append(ids)
        return out

    def _plain_parts(self, text: str) -> list[str] | None:
        """The words of the normalized text without their ▁, when that is `split(" ")`
        (module docstring); None when it is not."""
        if not (self.plain_words and self.add_dummy_prefix):
            return None
        norm = self.normalizer
        out = text if self.identity else norm.normalize(text)
        if norm.remove_extra_whitespaces:
            if not out:
                return None
        elif not text:
            return None
        if META in out:
            return None
        parts = out.split(" ")
        return _SPACED_WORD.findall(out) if "" in parts else parts

    def _by_words(self, normalized: str) -> list[int]:
        """model.py's word-by-word rule: each chunk's ids, a leading unk fused with an unk
        that ends the text before it (no byte fallback)."""
        out: list[int] = []
        words = self.words
        if len(words) > _CACHE_LIMIT:
            words.clear()
        unk, fuse = self.unk, not self.byte_fallback
        chunks = self.chunks(normalized)
        new = list(set(chunks).difference(words))
        words.update(zip(new, map(tuple, self.fill(new))))
        for chunk in chunks:
            ids = words[chunk]
            if fuse and out and out[-1] == unk and ids[0] == unk:
                out += ids[1:]
            else:
                out += ids
        return out

    # -- words ---------------------------------------------------------------------------
    def fill(self, words: list[str]) -> list[list[int]]:
        """The ids of each of these distinct words: many at once by batchmerge.py's rounds
        (a word they leave, and a long or user-defined one, by `word_ids`), few in one compiled
        call where numba runs, else one by one."""
        compiled = self._compiled_words
        if len(words) < _BATCH_FROM or not self.finite:
            if compiled is None:
                return list(map(self.word_ids, words))
            user = self.user
            found = compiled(words, False) or [b""] * len(words)
            return [array("q", raw).tolist() if raw and w not in user else self.word_ids(w) if w in user
                    else self.exact_ids(w) for w, raw in zip(words, found)]
        batched = [i for i, w in enumerate(words) if len(w) < _LIST_UP_TO and w not in self.user]
        made = merge_many([words[i] for i in batched], self.pair_table, self.unk, self.byte_array)
        out: list[list[int] | None] = [None] * len(words)
        for i, ids in zip(batched, made):
            out[i] = ids
        return [self.word_ids(w) if ids is None else ids for w, ids in zip(words, out)]

    @cached_property
    def byte_array(self) -> np.ndarray | None:
        return np.array(self.byte_ids, dtype=np.int64) if self.byte_fallback else None

    @cached_property
    def _compiled_words(self) -> Callable[[list[str], bool], list[bytes] | None] | None:
        """wordkernel.words_ids over this model's packed pair table, where numba runs and every
        score is finite (a -inf pair never merges in the list loop, but has a rank in the
        table); None: `merge` and the dicts do it. The ids of several words in one call, each
        `_packed`, b"" for a word left to the exact path; None when a word held the separator.
        With `lead`, the words are a line's parts after their space (▁ in front, spaces ▁)."""
        if not (self.finite and jit.available()):
            return None
        from tokworkbench.core.spbpe import wordkernel

        table = self.pair_table.packed
        kernel, join, cut = wordkernel.words_ids, chr(wordkernel.SEPARATOR).join, slice

        def ids_of(words: list[str], lead: bool) -> list[bytes] | None:
            k = len(words)
            found = kernel(join(words).encode("utf-32-le", "surrogatepass"), k, lead, _COMPILED_UP_TO, table)
            if not len(found):
                return None
            bounds = found[:2 * k].tolist()
            return list(map(found.tobytes().__getitem__, map(cut, bounds[:k], bounds[k:])))

        return ids_of

    @cached_property
    def pair_table(self) -> PairTable:
        return PairTable.of(self.scores, self.ids, self.unk)

    def word_ids(self, chunk: str) -> list[int]:
        """The ids of one chunk, as model.py's `_word` gives them."""
        if chunk in self.user:
            return [self.ids[chunk]]
        compiled = self._compiled_words
        if compiled is not None:
            found = compiled([chunk], False)
            if found and found[0]:
                return array("q", found[0]).tolist()
        return self.exact_ids(chunk)

    def exact_ids(self, chunk: str) -> list[int]:
        """The ids of one chunk (not a user piece) without compiled code: the list loop or the
        heap, then model.py's `_resolve` for what is no piece."""
        symbols = self.merge(chunk)
        ids = self.ids
        try:
            out = [ids[s] for s in symbols]
        except KeyError:
            out = None
        if out is None or self.unk in out:
            out = [tid for tid, _ in self.resolve(symbols)]
        return out

    def merge(self, chunk: str) -> list[str]:
        """The agenda's merges over two lists (module docstring)."""
        if len(chunk) >= _LIST_UP_TO or not self.finite:
            return self.heap_merge(chunk)
        symbols = list(chunk)
        if len(symbols) < 2:
            return symbols
        get = self.scores.get
        pairs = [get(a + b, _NONE) for a, b in pairwise(symbols)]
        best = max(pairs)
        while best != _NONE:
            i = pairs.index(best)
            merged = symbols[i] + symbols.pop(i + 1)
            symbols[i] = merged
            del pairs[i]
            if i:
                pairs[i - 1] = get(symbols[i - 1] + merged, _NONE)
            if i < len(pairs):
                pairs[i] = get(merged + symbols[i + 1], _NONE)
            if not pairs:
                break
            best = max(pairs)
        return symbols


def _packed(ids: list[int]) -> bytes:
    """Ids as `tails` keeps them: native int64 bytes (the kernel's own, `found.tobytes()`)."""
    return array("q", ids).tobytes()
