"""WordPiece (BERT and the embedding models built on it), exactly as HF tokenizers runs it.

The fixed vocabulary's longest match grown up (HF's models/wordpiece/mod.rs): the text is
normalized (BertNormalizer, text/bert.py), split into words (BertPreTokenizer: whitespace dropped,
each punctuation character a word), and each word is matched greedily from its start:
- the longest vocabulary token that the word starts with, then, from where it ends, the longest
  `##`-prefixed token (`continuing_subword_prefix`) whose rest matches there, and so on;
- a word with no such segmentation is one UNK, and so is a word longer than
  `max_input_chars_per_word` characters: never a partial segmentation.
Decoding is HF's WordPiece decoder: a continuation joins its word without the prefix, every other
token follows a space, and `cleanup` undoes BERT's spaces before punctuation in each token.

Special tokens (HF's added special tokens, UNK among them) are never matched in content: their
strings are plain text there, as in every model kind.
"""

from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cached_property

from tokworkbench.core.errors import VocabFileError, check_unicode
from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.models.specials import encode_with_specials
from tokworkbench.core.models.vocab import LongestMatch, check_ids, index_tokens
from tokworkbench.core.text.bert import HfSteps, bert_normalizer, is_space, word_split
from tokworkbench.core.text.pretokenize import PreTokenizer
from tokworkbench.core.units import Units

KIND = "wordpiece"
MAX_INPUT_CHARS_PER_WORD = 100  # HF's default
_CACHE_LIMIT = 200_000  # words remembered before the cache starts again

# HF's decoders/wordpiece.rs `cleanup`, in its order, applied to each token on its own
CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
           (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


@dataclass(frozen=True)
class WordPieceDecoder:
    prefix: str = "##"
    cleanup: bool = True

    def decode(self, tokens: list[str]) -> str:
        out = []
        for i, token in enumerate(tokens):
            if i:
                token = token.replace(self.prefix, "", 1) if token.startswith(self.prefix) else " " + token
            if self.cleanup:
                for dirty, clean in CLEANUP:
                    token = token.replace(dirty, clean)
            out.append(token)
        return "".join(out)


@dataclass(frozen=True)
class WordPieceModel:
    vocab: tuple[str, ...]
    """Every token in id order (id = index), specials included."""
    unk_token: str = "[UNK]"
    continuing_subword_prefix: str = "##"
    max_input_chars_per_word: int = MAX_INPUT_CHARS_PER_WORD
    text_normalizer: HfSteps | None = field(default_factory=bert_normalizer)
    pre_tokenizer: PreTokenizer = field(default_factory=lambda: word_split("BertPreTokenizer"))
    decoder: WordPieceDecoder | None = WordPieceDecoder()
    """None: tokens joined by spaces (HF without a decoder)."""
    roles: Roles = NO_ROLES
    specials: tuple[int, ...] = ()
    """The ids of the special tokens (HF's added special tokens); the unk token is always one."""

    kind = KIND
    units = Units.CHAR
    normalizer = "none"  # ours; the model's own is `text_normalizer`

    def __post_init__(self):
        vocab = tuple(self.vocab)
        object.__setattr__(self, "vocab", vocab)
        if not vocab:
            raise VocabFileError("a WordPiece vocabulary needs at least one token")
        seen = self._index
        if len(seen) != len(vocab) or not all(type(t) is str and t for t in vocab):
            index_tokens(vocab)  # raises, naming the token
        if not isinstance(self.unk_token, str) or self.unk_token not in seen:
            raise VocabFileError(f"the unk token {quote(str(self.unk_token))} is not in the vocabulary "
                                 "(WordPiece needs it for a word it cannot spell)")
        if not isinstance(self.continuing_subword_prefix, str):
            raise VocabFileError("the continuing subword prefix must be a string")
        size = self.max_input_chars_per_word
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise VocabFileError(f"max_input_chars_per_word must be a whole number, not {size!r}")
        specials = sorted(set(self.specials) | {seen[self.unk_token]})
        check_ids(specials, len(vocab))
        object.__setattr__(self, "specials", tuple(specials))
        names = [vocab[i] for i in specials]
        object.__setattr__(self, "roles", Roles.of(self.roles).check(names))

    @cached_property
    def _index(self) -> dict:
        return {t: i for i, t in enumerate(self.vocab)}

    # -- vocabulary ------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @cached_property
    def special_tokens(self) -> tuple[str, ...]:
        return tuple(self.vocab[i] for i in self.specials)

    @cached_property
    def special_ids(self) -> dict[str, int]:
        return {self.vocab[i]: i for i in self.specials}

    @cached_property
    def unk_id(self) -> int:
        return self.special_ids[self.unk_token]

    def token(self, tid: int) -> str:
        return self.vocab[check_ids([tid], len(self.vocab))[0]]

    def token_text(self, tid: int) -> str:
        return self.token(tid)

    def token_bytes(self, tid: int) -> bytes:
        return self.token(tid).encode("utf-8")

    def is_continuation(self, tid: int) -> bool:
        """Whether the token continues a word (`##ing`) rather than starting one: what it
        matches is the rest after the prefix, and only after another token of the word."""
        prefix = self.continuing_subword_prefix
        return bool(prefix) and tid not in self._special_set and self.token(tid).startswith(prefix)

    @cached_property
    def _special_set(self) -> frozenset[int]:
        return frozenset(self.specials)

    @cached_property
    def _starts(self) -> LongestMatch:
        """What may start a word: every content token as it is (a `##` token too, as in HF)."""
        special = self._special_set
        return LongestMatch({t: i for i, t in enumerate(self.vocab) if i not in special})

    @cached_property
    def _continues(self) -> LongestMatch:
        """What may continue a word: each prefixed content token, by what follows its prefix."""
        prefix, special = self.continuing_subword_prefix, self._special_set
        n = len(prefix)
        return LongestMatch({t[n:]: i for i, t in enumerate(self.vocab)
                             if i not in special and t.startswith(prefix) and len(t) > n})

    @cached_property
    def _cache(self) -> dict[str, tuple[tuple[int, int], ...]]:
        return {}

    def __getstate__(self):  # the caches are rebuilt where the model lands
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- encoding --------------------------------------------------------------------------
    def encode(self, text: str, allowed_special: Collection[str] | str = (),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        """An allowed special string is its id and the text between is encoded alone, as HF does
        with its added tokens."""
        check_unicode(text)
        return encode_with_specials(text, self.special_ids, allowed_special, disallowed_special,
                                    lambda part, _: self.encode_ordinary(part))

    def encode_ordinary(self, text: str) -> list[int]:
        return [tid for _, ids in self.encode_chunks(text) for tid in ids]

    def normalize_text(self, text: str) -> str:
        """The text the pre-tokenizer sees; decoding does not undo it (HF's does not either)."""
        return self.text_normalizer.normalize(text) if self.text_normalizer is not None else text

    def display_text(self, text: str) -> str:
        return self.normalize_text(text)

    def display_chunks(self, shown: str) -> list[tuple[str, list[int]]]:
        """Words with their ids and the whitespace between them with none, joining back to
        `shown` (normalized text, not normalized again)."""
        splits = self.pre_tokenizer.pattern is not None
        return [(chunk, [] if splits and is_space(chunk) else self.encode_word(chunk))
                for chunk in self.pre_tokenizer.split(shown)]

    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        check_unicode(text)  # HF refuses such text; <unk> stood for it here
        return self.display_chunks(self.normalize_text(text))

    @property
    def normalizer_label(self) -> str:
        return self.text_normalizer.label if self.text_normalizer is not None else "none"

    def encode_word(self, word: str) -> list[int]:
        return [tid for tid, _ in self._word(word)]

    def char_lengths(self, chunk: str, ids: list[int]) -> list[int]:
        """Characters each id covers: a continuation's without its prefix, UNK the whole word."""
        if not ids:
            return []
        return [n for _, n in self._word(chunk)]

    def _word(self, word: str) -> tuple[tuple[int, int], ...]:
        """(id, characters it covers) of one word, greedy longest match first."""
        cache = self._cache
        found = cache.get(word)
        if found is not None:
            return found
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        found = cache[word] = self._segment(word)
        return found

    def _segment(self, word: str) -> tuple[tuple[int, int], ...]:
        if not word:
            return ()
        whole = ((self.unk_id, len(word)),)
        if len(word) > self.max_input_chars_per_word:
            return whole
        out: list[tuple[int, int]] = []
        pos, end = 0, len(word)
        while pos < end:
            found = (self._continues if pos else self._starts).at(word, pos, end)
            if found is None:
                return whole
            out.append(found)
            pos += found[1]
        return tuple(out)

    # -- decoding --------------------------------------------------------------------------
    def decode(self, ids: list[int], errors: str = "strict") -> str:
        vocab = self.vocab
        tokens = [vocab[i] for i in check_ids(ids, len(vocab))]
        return self.decoder.decode(tokens) if self.decoder is not None else " ".join(tokens)

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self.decode(ids).encode("utf-8")
