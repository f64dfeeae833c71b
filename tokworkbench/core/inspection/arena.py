"""The arena: several tokenizers over the same named texts (languages, domains), one score each.

For each tokenizer × text: bytes per token, tokens per word (words are whitespace-separated), the
premium (Petrov et al. 2023, "Language Model Tokenizers Introduce Unfairness Between Languages":
the tokens a tokenizer spends on a text over those it spends on the reference text, which is only
a fair comparison when the texts are translations of each other), the share of the vocabulary
the text uses, how often text falls to the unknown piece or to byte pieces, and whether
decode(encode(text)) gives the text back; where it does not (NFKC, lowercasing, WordPiece's
clean-up of spaces) the characters that differ are counted and the first difference is kept, so
a lossy tokenizer's good numbers are never read as exact. Text is encoded as ordinary text: the
string of a special token in it is text, as in `encode_ordinary`.

Pure: models and texts in, dataclasses out (`progress` only reports). Each tokenizer is scored on
its own (`score_tokenizer`), so a caller may score them apart (another process, a worker that
redoes only the model that changed) and put them together with `Arena.of`.
"""

import difflib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from tokworkbench.core.errors import ReportError, TokWorkbenchError
from tokworkbench.core.inspection.reports import Column
from tokworkbench.core.models.protocol import HasUnknown, Model, TypedPieces
from tokworkbench.core.models.tokenkinds import TokenKind

ALL = "(all)"  # the text name of a tokenizer's totals
_CONTEXT = 12  # characters either side of a difference that it is shown with
_PIECES = re.compile(r"\w+|\s+|.", re.DOTALL)  # what a long lossy decoding is aligned by before its characters
_SYNC, _WINDOW = 3, 48  # a long alignment picks up where 3 pieces agree, within 48 pieces of a mismatch
_ALIGN_CHARS = 40_000  # len(a) * len(b) up to which two stretches are aligned character by character


@dataclass(frozen=True)
class Difference:
    """Where decode(encode(text)) first departs from the text."""

    offset: int  # in characters of the text
    text: str  # the text there (a few characters either side)
    decoded: str  # what the decoding has there


@dataclass(frozen=True)
class Score:
    """One tokenizer on one text, or on all of them (`text` is ALL: its totals)."""

    tokenizer: str
    text: str
    bytes: int
    chars: int
    words: int
    tokens: int = 0
    distinct: int = 0  # distinct ids
    vocab_size: int = 0
    unknown: int = 0  # ids of the unknown piece
    byte_pieces: int = 0  # ids of byte-fallback pieces
    differing: int = 0  # characters the round trip changed (differing_chars)
    first_difference: Difference | None = None
    premium: float | None = None  # tokens here / tokens on the reference text
    error: str | None = None  # the text could not be encoded (or decoded): no numbers
    left_out: str | None = None  # totals: the texts that could not be encoded, and the first error

    @property
    def bytes_per_token(self) -> float | None:
        return self.bytes / self.tokens if self.tokens and self.error is None else None

    @property
    def tokens_per_word(self) -> float | None:
        return self.tokens / self.words if self.words and self.error is None else None

    @property
    def vocab_share(self) -> float | None:
        return self.distinct / self.vocab_size if self.vocab_size and self.error is None else None

    @property
    def unknown_rate(self) -> float | None:
        return self.unknown / self.tokens if self.tokens and self.error is None else None

    @property
    def byte_rate(self) -> float | None:
        return self.byte_pieces / self.tokens if self.tokens and self.error is None else None

    @property
    def exact(self) -> bool | None:
        return None if self.error is not None else self.differing == 0 and self.left_out is None

    def row(self) -> dict[str, object]:
        """The score as a report row (COLUMNS' keys)."""
        diff = self.first_difference
        return {"tokenizer": self.tokenizer, "text": self.text, "bytes": self.bytes, "chars": self.chars,
                "words": self.words, "tokens": None if self.error else self.tokens,
                "bytes_per_token": self.bytes_per_token, "tokens_per_word": self.tokens_per_word,
                "premium": self.premium, "distinct": None if self.error else self.distinct,
                "vocab_share": self.vocab_share, "unknown_rate": self.unknown_rate, "byte_rate": self.byte_rate,
                "exact": self.exact, "differing": None if self.error else self.differing,
                "first_difference": (f"@{diff.offset}: {diff.text!r} -> {diff.decoded!r}" if diff else None),
                "error": self.error or self.left_out}


COLUMNS = (
    Column("tokenizer"), Column("text"), Column("bytes"), Column("words"), Column("tokens"),
    Column("bytes_per_token", "bytes/token", 3), Column("tokens_per_word", "tokens/word", 3),
    Column("premium", "premium", 3), Column("vocab_share", "vocab used", 2, percent=True),
    Column("unknown_rate", "unk", 2, percent=True), Column("byte_rate", "byte fallback", 2, percent=True),
    Column("exact", "round trip"), Column("differing", "chars differ"), Column("first_difference", "first difference"),
    Column("error"),
)
BRIEF = tuple(c for c in COLUMNS if c.key not in ("bytes", "words", "first_difference", "error"))  # what fits


@dataclass(frozen=True)
class TokenizerScores:
    name: str
    vocab_size: int
    scores: tuple[Score, ...]  # one per text, in the texts' order
    total: Score  # over all the texts


@dataclass(frozen=True)
class Arena:
    texts: tuple[str, ...]
    reference: str | None
    tokenizers: tuple[TokenizerScores, ...]
    _index: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._index.update(((t.name, s.text), s) for t in self.tokenizers for s in (*t.scores, t.total))

    @classmethod
    def of(cls, tokenizers: Sequence[TokenizerScores], texts: Sequence[str], reference: str | None) -> "Arena":
        return cls(tuple(texts), reference, tuple(tokenizers))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tokenizers)

    def score(self, tokenizer: str, text: str) -> Score:
        return self._index[(tokenizer, text)]

    def rows(self, totals: bool = True) -> list[dict[str, object]]:
        """Every tokenizer's rows, one per text, then (with `totals`) its totals."""
        return [s.row() for t in self.tokenizers for s in (*t.scores, *((t.total,) if totals else ()))]

    def lossy(self) -> list[Score]:
        """The scores whose decoding does not give the text back."""
        return [s for t in self.tokenizers for s in t.scores if s.exact is False]


def word_count(text: str) -> int:
    return len(text.split())


def unknown_ids(model: Model) -> frozenset[int]:
    """The ids that stand for text the vocabulary cannot spell: the model's unknown piece, and
    the token with the unk role (a char-level BPE's)."""
    ids = {model.unk_id} if isinstance(model, HasUnknown) else set()
    if model.roles.unk is not None and model.roles.unk in model.special_ids:
        ids.add(model.special_ids[model.roles.unk])
    return frozenset(ids)


def byte_piece_ids(model: Model) -> frozenset[int]:
    """The byte-fallback pieces (`<0xE6>`), from the pieces' own types (the vocabulary view's)."""
    if not isinstance(model, TypedPieces):
        return frozenset()
    return frozenset(t for t in range(model.vocab_size) if model.piece_kind(t) is TokenKind.BYTE)


def _matched(a: str, b: str) -> int:
    return sum(block.size for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def _changed(a: str, b: str) -> int:
    """Characters changed between two short stretches: the more of either side left unmatched."""
    if a == b:
        return 0
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b))
    if len(a) * len(b) > _ALIGN_CHARS:
        return max(len(a), len(b))
    return max(len(a), len(b)) - _matched(a, b)


def _key(piece: str) -> str:
    """What two pieces are aligned by: a word as NFKC and casefolded, any whitespace as one space
    (what lossy decoders change), so the alignment is long runs and costs little."""
    if piece.isspace():
        return " "
    return unicodedata.normalize("NFKC", piece).casefold()


def _resync(ka: list[str], kb: list[str], i: int, j: int) -> tuple[int, int] | None:
    """The nearest place after a mismatch at (i, j) where _SYNC keys agree again (or both lists
    end), skipping at most _WINDOW pieces on either side; None if there is none."""
    for skipped in range(1, 2 * _WINDOW + 1):
        for di in range(max(0, skipped - _WINDOW), min(skipped, _WINDOW) + 1):
            x, y = i + di, j + skipped - di
            if x > len(ka) or y > len(kb):
                continue
            ahead = ka[x : x + _SYNC]
            if ahead == kb[y : y + _SYNC] and (len(ahead) == _SYNC or (x + len(ahead) == len(ka)
                                                                     and y + len(ahead) == len(kb))):
                return x, y
    return None


def differing_chars(text: str, decoded: str) -> int:
    """How many characters the round trip changed: where the two differ, the more characters of
    either side that an alignment leaves unmatched (a lowercased 'The' is one, 'ﬁ' for 'fi' two,
    a dropped space one). Short texts are aligned by characters. A long one is walked piece by
    piece (words, whitespace runs, marks), pieces matched up to case, compatibility forms and
    which whitespace, and each matched pair compared by characters; after a mismatch the walk
    picks up where _SYNC pieces agree again, nearest first, and what it skipped is compared as
    one stretch. Linear in the text, so a lossy tokenizer costs no more than an exact one."""
    if text == decoded:
        return 0
    if len(text) * len(decoded) <= _ALIGN_CHARS:
        return _changed(text, decoded)
    pa, pb = _PIECES.findall(text), _PIECES.findall(decoded)
    ka, kb = [_key(p) for p in pa], [_key(p) for p in pb]
    changed = i = j = 0
    while i < len(pa) and j < len(pb):
        if ka[i] == kb[j]:
            changed += _changed(pa[i], pb[j])
            i, j = i + 1, j + 1
            continue
        found = _resync(ka, kb, i, j)
        if found is None:
            break
        changed += _changed("".join(pa[i : found[0]]), "".join(pb[j : found[1]]))
        i, j = found
    return changed + _changed("".join(pa[i:]), "".join(pb[j:]))


def first_difference(text: str, decoded: str) -> Difference | None:
    if text == decoded:
        return None
    at = next((i for i, (x, y) in enumerate(zip(text, decoded)) if x != y), min(len(text), len(decoded)))
    lo = max(0, at - _CONTEXT)
    return Difference(at, text[lo : at + _CONTEXT], decoded[lo : at + _CONTEXT])


def _score_text(name: str, model: Model, text_name: str, text: str, unknown: frozenset[int],
                byte_pieces: frozenset[int]) -> tuple[Score, set[int]]:
    size = {"tokenizer": name, "text": text_name, "bytes": len(text.encode("utf-8", "surrogatepass")),
            "chars": len(text), "words": word_count(text), "vocab_size": model.vocab_size}
    try:
        ids = model.encode_ordinary(text)
        decoded = model.decode(ids, errors="replace")
    except TokWorkbenchError as exc:
        return Score(**size, error=str(exc)), set()
    distinct = set(ids)
    unk = sum(ids.count(u) for u in unknown & distinct)
    fallback = sum(1 for i in ids if i in byte_pieces) if byte_pieces & distinct else 0
    return Score(**size, tokens=len(ids), distinct=len(distinct), unknown=unk, byte_pieces=fallback,
                 differing=differing_chars(text, decoded), first_difference=first_difference(text, decoded)), distinct


def _premium(score: Score, reference: Score | None) -> Score:
    if reference is None or score.error or reference.error or not reference.tokens:
        return score
    return replace(score, premium=score.tokens / reference.tokens)


def score_tokenizer(name: str, model: Model, texts: Sequence[tuple[str, str]], reference: str | None = None,
                    progress: Callable[[int, int], None] | None = None) -> TokenizerScores:
    """One tokenizer on each (name, text), and its totals (the distinct ids over all texts, the
    premium left out: it is a ratio between texts). `progress(done, total)` after each text."""
    check_reference(texts, reference)
    unknown, byte_pieces = unknown_ids(model), byte_piece_ids(model)
    scores: list[Score] = []
    seen: set[int] = set()
    for k, (text_name, text) in enumerate(texts, 1):
        score, distinct = _score_text(name, model, text_name, text, unknown, byte_pieces)
        scores.append(score)
        seen |= distinct
        if progress is not None:
            progress(k, len(texts))
    ref = next((s for s in scores if s.text == reference), None)
    scores = [_premium(s, ref) for s in scores]
    ok = [s for s in scores if s.error is None]
    failed = [s for s in scores if s.error is not None]
    total = Score(name, ALL, sum(s.bytes for s in ok), sum(s.chars for s in ok), sum(s.words for s in ok),
                  tokens=sum(s.tokens for s in ok), distinct=len(seen), vocab_size=model.vocab_size,
                  unknown=sum(s.unknown for s in ok), byte_pieces=sum(s.byte_pieces for s in ok),
                  differing=sum(s.differing for s in ok),
                  first_difference=next((s.first_difference for s in ok if s.first_difference), None))
    if failed:
        why = f"{len(failed)} of {len(scores)} texts could not be encoded ({failed[0].text}: {failed[0].error})"
        total = replace(total, error=why) if not ok else replace(total, left_out=why + "; the totals leave them out")
    return TokenizerScores(name, model.vocab_size, tuple(scores), total)


def check_reference(texts: Sequence[tuple[str, str]], reference: str | None) -> None:
    if not texts:
        raise ReportError("the arena needs at least one text")
    names = [n for n, _ in texts]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ReportError(f"two texts are named {twice!r}: give each text its own name")
    if reference is not None and reference not in names:
        raise ReportError(f"the reference {reference!r} is not one of the texts ({', '.join(names[:6])}"
                          f"{', …' if len(names) > 6 else ''})")


def run_arena(models: Sequence[tuple[str, Model]], texts: Sequence[tuple[str, str]], reference: str | None = None,
              progress: Callable[[int, int], None] | None = None) -> Arena:
    """Every model on every text. `reference`: the text premiums are against (None: none)."""
    if not models:
        raise ReportError("the arena needs at least one tokenizer")
    names = [n for n, _ in models]
    if len(set(names)) != len(names):
        raise ReportError(f"two tokenizers are named {next(n for n in names if names.count(n) > 1)!r}")
    check_reference(texts, reference)
    done = [0]
    total = len(models) * len(texts)

    def step(_k: int, _n: int) -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    scored = [score_tokenizer(name, model, texts, reference, step) for name, model in models]
    return Arena.of(scored, [n for n, _ in texts], reference)
