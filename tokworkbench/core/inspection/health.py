"""Vocabulary health: the tokens of a model that something is wrong with, as one report.

Every check is a pure function of the model (and, for `unseen`, of a corpus); `health` runs them
all into a `HealthReport`. What each flag means, exactly (docs/design.md § Vocabulary health):

- `roundtrip` (Magikarp's tokenizer-side check): an ordinary token whose text, decoded alone and
  encoded again (ordinary encoding), does not give back exactly that id. A token whose bytes
  are not UTF-8 has no text to encode and is `partial` instead. Shown as ¿text?, as Magikarp
  writes them.
- `unreachable`: an ordinary token no text can produce, proven. Inside a pre-tokenizer chunk, the
  joins (BPE merges by rank, tiktoken's lowest rank, SentencePiece BPE by score) act on the
  units of a token's span in the same order whatever surrounds it, so a token the joins do not
  make of its own units alone (models/protocol.py SelfJoining) never comes out of them; such a
  token is reached only by a whole-chunk lookup, so it is unreachable when it also does not
  come back from its own text. Models that cannot answer the question (Unigram, WordPiece,
  fixed vocabularies) are not checked (`unreachable_checked` False).
- `partial`: an ordinary token whose bytes are not valid UTF-8: it starts inside a character
  (a continuation byte first), ends inside one (a character cut short), or holds bytes UTF-8
  never has.
- `unseen`: an ordinary token the corpus's ordinary encoding never produces (only with a corpus).
- `special`: a special token whose text is also ordinary text in some way that matters: the
  same text as an ordinary token, encoded ordinarily to its own id, or present in the corpus.
- `near-duplicate`: tokens that differ only in case or in leading spaces (▁ for SentencePiece),
  grouped by their text without leading spaces, case-folded.
"""

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tokworkbench.core.errors import InvalidUtf8DecodeError, QueryError
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.inspection.vocab import Vocab, count_tokens, vocab_of
from tokworkbench.core.models.protocol import OwnDisplay, SelfJoining
from tokworkbench.core.text.normalize import normalize

FLAGS = ("roundtrip", "unreachable", "partial", "unseen", "special", "near-duplicate")
_SPACES = " \u2581"  # what a leading space is: a space, or SentencePiece's ▁


@dataclass(frozen=True)
class RoundTrip:
    id: int
    text: str
    ids: tuple[int, ...]  # what the text encodes to instead

    @property
    def magikarp(self) -> str:
        return magikarp_form(self.text)


@dataclass(frozen=True)
class Partial:
    id: int
    data: bytes
    starts_inside: bool
    ends_inside: bool  # a character cut short at the end; neither: bytes UTF-8 never has


@dataclass(frozen=True)
class SpecialCheck:
    id: int
    text: str
    ordinary_ids: tuple[int, ...]  # what its text encodes to as ordinary text
    same_as: int | None  # an ordinary token with the same bytes
    corpus_hits: int  # how often its text occurs in the corpus

    @property
    def flagged(self) -> bool:
        return self.same_as is not None or self.ordinary_ids == (self.id,) or self.corpus_hits > 0


@dataclass(frozen=True)
class DuplicateGroup:
    key: str  # the text without leading spaces, case-folded
    ids: tuple[int, ...]
    case: bool  # some members differ in case
    space: bool  # some members differ in leading spaces


@dataclass(frozen=True)
class HealthReport:
    ordinary: int  # ordinary tokens checked
    specials: tuple[SpecialCheck, ...]
    roundtrip: tuple[RoundTrip, ...]
    unreachable: tuple[int, ...]
    unreachable_checked: bool
    partial: tuple[Partial, ...]
    near_duplicates: tuple[DuplicateGroup, ...]
    unseen: tuple[int, ...] | None  # None without a corpus
    corpus_tokens: int = 0

    def flagged(self, flag: str) -> frozenset[int]:
        """The ids a flag marks (what the vocabulary browser's health filter keeps)."""
        if flag not in FLAGS:
            raise QueryError(f"no health flag {flag!r}; flags: {', '.join(FLAGS)}")
        if flag == "roundtrip":
            return frozenset(r.id for r in self.roundtrip)
        if flag == "unreachable":
            return frozenset(self.unreachable)
        if flag == "partial":
            return frozenset(p.id for p in self.partial)
        if flag == "unseen":
            return frozenset(self.unseen or ())
        if flag == "special":
            return frozenset(s.id for s in self.specials if s.flagged)
        return frozenset(i for g in self.near_duplicates for i in g.ids)

    def counts(self) -> dict[str, int | None]:
        """Tokens per flag (groups for near-duplicates); None for a check not made."""
        out: dict[str, int | None] = {f: len(self.flagged(f)) for f in FLAGS}
        out["near-duplicate"] = len(self.near_duplicates)
        if not self.unreachable_checked:
            out["unreachable"] = None
        if self.unseen is None:
            out["unseen"] = None
        return out


def magikarp_form(text: str) -> str:
    """A token as Magikarp's reports write one that does not come back: ¿text?"""
    return f"¿{visible(text)}?"


def ordinary_ids(vocab: Vocab) -> list[int]:
    return vocab.ids[~vocab.special].tolist()


def token_texts(model, vocab: Vocab) -> dict[int, str]:
    """Each ordinary token's text decoded alone, where its bytes are UTF-8 (a byte piece's
    decode would be U+FFFD, text no encoder sees as that piece)."""
    out: dict[int, str] = {}
    for row in np.flatnonzero(~vocab.special).tolist():
        if utf8_partial(vocab.data[row]) is None:
            tid = int(vocab.ids[row])
            try:
                out[tid] = model.decode([tid])
            except InvalidUtf8DecodeError:  # a decoder that joins bytes of its own
                continue
    return out


def self_joins(model, ids: list[int]) -> dict[int, bool | None] | None:
    """Whether the model's joins make each token of its own units alone; None when the model
    cannot say (no SelfJoining)."""
    if not isinstance(model, SelfJoining):
        return None
    return dict(zip(ids, model.self_joins(ids)))


def roundtrip_failures(model, vocab: Vocab, texts: dict[int, str],
                       joins: dict[int, bool | None] | None) -> list[RoundTrip]:
    """Tokens whose own text does not encode back to them. Where the text is the token's bytes,
    one chunk of itself, unchanged by normalizing, and the joins make the token of it, the
    encoding is that token (a chunk's ids depend on the chunk alone): only the rest are encoded."""
    out: list[RoundTrip] = []
    quick = joins is not None and not isinstance(model, OwnDisplay)
    split, norm = model.pre_tokenizer.split, model.normalizer
    data = dict(zip(vocab.ids.tolist(), vocab.data))
    for tid, text in texts.items():
        if quick and joins[tid] and text.encode("utf-8") == data[tid] and normalize(text, norm) == text \
                and split(text) == [text]:
            continue
        ids = model.encode_ordinary(text) if text else []
        if ids != [tid]:
            out.append(RoundTrip(tid, text, tuple(ids)))
    return out


def unreachable_tokens(joins: dict[int, bool | None] | None, failures: Sequence[RoundTrip]) -> list[int]:
    """Tokens the joins cannot make and their own text does not give back (see the module)."""
    if joins is None:
        return []
    failed = {r.id for r in failures}
    return sorted(t for t, made in joins.items() if made is False and t in failed)


def utf8_partial(data: bytes) -> tuple[bool, bool] | None:
    """(starts inside a character, ends inside one) for bytes that are not UTF-8; None for UTF-8."""
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    starts = bool(data) and 0x80 <= data[0] < 0xC0
    ends = False
    for back in range(1, min(4, len(data)) + 1):  # the last lead byte and what it still needs
        b = data[-back]
        if 0x80 <= b < 0xC0:
            continue
        need = 2 if 0xC2 <= b < 0xE0 else 3 if 0xE0 <= b < 0xF0 else 4 if 0xF0 <= b < 0xF5 else 0
        ends = need > back
        break
    return starts, ends


def partial_tokens(vocab: Vocab) -> list[Partial]:
    out: list[Partial] = []
    for row in np.flatnonzero(~vocab.special).tolist():
        found = utf8_partial(vocab.data[row])
        if found is not None:
            out.append(Partial(int(vocab.ids[row]), vocab.data[row], *found))
    return out


def special_checks(model, vocab: Vocab, documents: Sequence[str]) -> list[SpecialCheck]:
    ordinary = {vocab.data[r]: int(vocab.ids[r]) for r in np.flatnonzero(~vocab.special).tolist()}
    out = []
    for text, tid in model.special_ids.items():
        ids = tuple(model.encode_ordinary(text)) if text else ()
        hits = sum(doc.count(text) for doc in documents) if text else 0
        out.append(SpecialCheck(tid, text, ids, ordinary.get(text.encode("utf-8")), hits))
    return out


def near_duplicates(texts: dict[int, str]) -> list[DuplicateGroup]:
    """Groups of tokens equal once leading spaces are dropped and case is folded."""
    groups: dict[str, list[int]] = defaultdict(list)
    for tid, text in texts.items():
        groups[text.lstrip(_SPACES).casefold()].append(tid)
    out = []
    for key, ids in groups.items():
        if len(ids) < 2 or not key:
            continue
        members = [texts[i] for i in ids]
        stripped = {m.lstrip(_SPACES) for m in members}
        leads = {len(m) - len(m.lstrip(_SPACES)) for m in members}
        out.append(DuplicateGroup(key, tuple(sorted(ids)), len(stripped) > 1, len(leads) > 1))
    return sorted(out, key=lambda g: g.ids[0])


def unseen_tokens(model, vocab: Vocab, documents: Sequence[str]) -> tuple[list[int], int]:
    """Ordinary tokens the corpus never produces, and how many tokens the corpus encodes to."""
    counts = count_tokens(model, documents)
    ids = np.asarray(ordinary_ids(vocab), dtype=np.int64)
    padded = np.zeros(int(ids.max()) + 1 if len(ids) else 0, dtype=np.int64)
    padded[: min(len(counts), len(padded))] = counts[: len(padded)]
    return ids[padded[ids] == 0].tolist(), int(counts.sum())


def health(model, documents: Sequence[str] | None = None) -> HealthReport:
    """Every check over `model`; `unseen` and the specials' corpus hits only with `documents`."""
    vocab = vocab_of(model)
    ids = ordinary_ids(vocab)
    texts = token_texts(model, vocab)
    joins = self_joins(model, ids)
    failures = roundtrip_failures(model, vocab, texts, joins)
    unseen, total = (None, 0) if documents is None else unseen_tokens(model, vocab, documents)
    return HealthReport(len(ids), tuple(special_checks(model, vocab, documents or ())), tuple(failures),
                        tuple(unreachable_tokens(joins, failures)), joins is not None,
                        tuple(partial_tokens(vocab)), tuple(near_duplicates(texts)),
                        None if unseen is None else tuple(unseen), total)


def duplicate_summary(groups: Sequence[DuplicateGroup]) -> Counter:
    """Groups by what their members differ in: case, leading space, or both."""
    return Counter("both" if g.case and g.space else "case" if g.case else "space" for g in groups)
