"""The vocabulary browser's core: every token of a model as columns, searched and sorted.

A model's vocabulary is held as numpy columns in inside (rank) order: the outside id, the
length in bytes, the merge that made it and its two parents. Searching and sorting are array
operations, so cl100k's 100,261 tokens or o200k's 200,019 answer a keystroke in tens of
milliseconds, and only the rows shown are turned into `TokenInfo` values. Every id here is an
outside id. The app only renders what these functions return.

A query is one of:
- `#N`, `id:N` or `#N-M`: the token with id N, or the ids from N to M;
- hex bytes: `x:e6 97`, `0xe697`, `\\xe6\\x97`, or two or more byte pairs apart (`e6 97`);
- anything else: text, matched anywhere in the token's bytes (␣ ↵ → stand for space,
  line feed and tab, as the views draw them).
Words `is:KIND` anywhere in it keep only tokens of that kind (`is:byte`, `is:whole-only`,
`is:continuation`… models/tokenkinds.py), any of them when there are several.

Each token's kind (`TokenKind`) comes from the model's capabilities, once per vocabulary:
typed pieces (SentencePiece's byte, control, user-defined) first, then continuations
(WordPiece), then merge ranks (base, merged, whole chunk only); specials are the unknown token
(its role, or the model's unk id), a control piece, or special.
"""

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tokworkbench.core.errors import DecodeError, QueryError
from tokworkbench.core.inspection.escape import render_bytes
from tokworkbench.core.models.protocol import Continuations, HasUnknown, MergeRanked, TypedPieces, WholeOnly
from tokworkbench.core.models.tokenkinds import TokenKind, token_kind_named
from tokworkbench.core.units import Units

ORDERS = ("id", "length", "count")
_MARKS = str.maketrans({"␣": " ", "↵": "\n", "→": "\t"})
_ID_QUERY = re.compile(r"^\s*(?:#|id:)\s*(\d+)\s*(?:-\s*(\d+)\s*)?$", re.IGNORECASE)
_HEX_PAIRS = re.compile(r"^\s*[0-9a-fA-F]{2}(?:\s+[0-9a-fA-F]{2})+\s*$")
_KIND_WORD = re.compile(r"(?:^|\s)is:(\S*)", re.IGNORECASE)
KIND_CODES = tuple(TokenKind)  # the kinds column holds indices into this


@dataclass(frozen=True)
class TokenInfo:
    """One token as every view describes it (the browser's rows, the details line)."""

    id: int
    data: bytes  # its bytes (a special token's: the UTF-8 of its name)
    text: str  # the bytes as text, \\xNN where they are not UTF-8
    special: bool
    step: int | None  # the merge that made it (1 = the first); None for base units and specials
    parents: tuple[int, int] | None  # the outside ids it was merged from
    parent_texts: tuple[str, str] | None
    count: int | None  # how often it occurs in the counted corpus; None when not counted
    whole_only: bool = False  # no merge makes it: a chunk reaches it only whole (models/protocol.py WholeOnly)
    kind: TokenKind = TokenKind.PIECE


@dataclass(frozen=True)
class TokenCounts:
    """How often each outside id occurs over the whole corpus, for the model as it stood after
    `steps` steps (training moves on; a frozen model never does)."""

    counts: np.ndarray = field(repr=False)
    steps: int
    total: int


@dataclass(frozen=True)
class VocabPage:
    rows: list[TokenInfo]  # the first `limit` matches in the chosen order
    matched: int  # how many tokens match in all
    order: str


class Vocab:
    """A model's vocabulary as columns (inside order). Build with `vocab_of(model)`."""

    def __init__(self, model):
        ranked = isinstance(model, MergeRanked)
        tokens = list(model.ranked_tokens) if ranked else []
        merges = model.merges if ranked else ()
        base = model.base_size if ranked else 0
        specials = list(model.special_ids.items())
        plain: list[int] | None = None  # the ids of `tokens` when they are not 0..n-1 inside ids
        if not tokens:  # a model without rank tables (Unigram, fixed): ask it id by id, ids kept
            special_ids = {i for _, i in specials}
            plain = [i for i in range(model.vocab_size) if i not in special_ids]
            tokens = [model.token(i) for i in plain]
        n = len(tokens)
        self.model = model
        self.data: list[bytes] = [Units.to_bytes(t) for t in tokens] + [s.encode("utf-8") for s, _ in specials]
        if plain is None:
            plain = model.to_outside(list(range(n)))
        self.ids = np.asarray(plain + [i for _, i in specials], dtype=np.int64)
        self.lengths = np.fromiter(map(len, self.data), dtype=np.int64, count=len(self.data))
        self.special = np.zeros(len(self.data), dtype=bool)
        self.special[n:] = True
        self.steps = np.zeros(len(self.data), dtype=np.int64)  # 0: not made by a merge
        self.left = np.full(len(self.data), -1, dtype=np.int64)
        self.right = np.full(len(self.data), -1, dtype=np.int64)
        self.whole_only = np.zeros(len(self.data), dtype=bool)  # "whole chunk only", no parents
        if isinstance(model, WholeOnly) and model.whole_tokens:
            self.whole_only[base + len(merges):n] = True
        if len(merges):
            pairs = np.asarray(merges, dtype=np.int64).reshape(-1, 2)
            made = np.arange(base, base + len(pairs))
            self.steps[made] = np.arange(1, len(pairs) + 1)
            self.left[made] = self.ids[pairs[:, 0]]
            self.right[made] = self.ids[pairs[:, 1]]
        self.kinds = token_kinds(model, self, n, base)
        self._row_of = {int(t): r for r, t in enumerate(self.ids.tolist())}
        self.blob = b"".join(self.data)  # every token end to end: one scan finds a needle in all
        self.starts = np.concatenate(([0], np.cumsum(self.lengths)[:-1])) if len(self.data) else self.lengths

    def __len__(self) -> int:
        return len(self.data)

    def row_of(self, tid: int) -> int:
        row = self._row_of.get(tid) if isinstance(tid, int) else None
        if row is None:
            raise DecodeError(f"id {tid!r} is not in this vocabulary (ids {int(self.ids.min())}.."
                              f"{int(self.ids.max())})")
        return row

    def info(self, row: int, counts: np.ndarray | None = None) -> TokenInfo:
        """The token in row `row`, with its count when `counts` (indexed by outside id) is given."""
        tid = int(self.ids[row])
        left, right = int(self.left[row]), int(self.right[row])
        parents = (left, right) if left >= 0 else None
        texts = None
        if parents:
            texts = (self.text(self.row_of(left)), self.text(self.row_of(right)))
        return TokenInfo(tid, self.data[row], self.text(row), bool(self.special[row]),
                         int(self.steps[row]) or None, parents, texts, count_of(counts, tid),
                         bool(self.whole_only[row]), KIND_CODES[int(self.kinds[row])])

    def text(self, row: int) -> str:
        return render_bytes(self.data[row])


def token_kinds(model, vocab: Vocab, ordinary: int, base: int) -> np.ndarray:
    """Each row's `TokenKind`, as an index into KIND_CODES (see the module's docstring)."""
    code = {k: i for i, k in enumerate(KIND_CODES)}
    kinds = np.full(len(vocab.data), code[TokenKind.PIECE], dtype=np.int8)
    ids = vocab.ids.tolist()
    if isinstance(model, TypedPieces):
        kinds[:] = [code[model.piece_kind(t)] for t in ids]
    elif isinstance(model, Continuations):
        kinds[:ordinary] = [code[TokenKind.CONTINUATION if model.is_continuation(t) else TokenKind.PIECE]
                            for t in ids[:ordinary]]
    elif isinstance(model, MergeRanked):
        kinds[:base] = code[TokenKind.BASE]
        kinds[vocab.steps > 0] = code[TokenKind.MERGED]
        kinds[vocab.whole_only] = code[TokenKind.WHOLE_ONLY]
    unk = model.special_ids.get(model.roles.unk) if model.roles.unk else None
    if unk is None and isinstance(model, HasUnknown):
        unk = model.unk_id
    for row in range(ordinary, len(ids)):
        if ids[row] == unk:
            kinds[row] = code[TokenKind.UNKNOWN]
        elif KIND_CODES[kinds[row]] not in (TokenKind.CONTROL, TokenKind.UNKNOWN):
            kinds[row] = code[TokenKind.SPECIAL]
    return kinds


def kinds_present(vocab: Vocab) -> list[TokenKind]:
    """The kinds this vocabulary has, in KIND_CODES order (what a kind filter cycles through)."""
    return [KIND_CODES[i] for i in np.unique(vocab.kinds).tolist()]


def split_kind_words(query: str) -> tuple[str, list[TokenKind]]:
    """The query without its `is:KIND` words, and the kinds they name; a word naming no kind is
    an error listing the kinds."""
    kinds: list[TokenKind] = []
    for word in _KIND_WORD.findall(query):
        kind = token_kind_named(word)
        if kind is None:
            raise QueryError(f"is:{word} names no token kind; kinds: {', '.join(k.value for k in TokenKind)}")
        kinds.append(kind)
    return (_KIND_WORD.sub(" ", query).strip() if kinds else query), kinds


def count_of(counts: np.ndarray | None, tid: int) -> int | None:
    if counts is None:
        return None
    return int(counts[tid]) if 0 <= tid < len(counts) else 0


_last: tuple = (None, None)
_last_lock = threading.Lock()


def vocab_of(model) -> Vocab:
    """The model's columns, built once per model: the browser and the details line ask for the
    same model many times (a frozen model is the same object in every snapshot)."""
    global _last
    with _last_lock:
        seen, vocab = _last
        if seen is not model:
            vocab = Vocab(model)
            _last = (model, vocab)
        return vocab


def token_info(model, tid: int, counts: np.ndarray | None = None) -> TokenInfo:
    """One token of `model` by outside id; a DecodeError names an id it does not have."""
    vocab = vocab_of(model)
    return vocab.info(vocab.row_of(tid), counts)


def parse_query(query: str) -> tuple[str, object]:
    """("all", None), ("ids", (lo, hi)), ("bytes", needle) or ("text", needle): what a query
    asks for (see the module's docstring)."""
    q = query.strip()
    if not q:
        return "all", None
    m = _ID_QUERY.match(q)
    if m:
        lo = int(m.group(1))
        return "ids", (lo, int(m.group(2)) if m.group(2) else lo)
    lowered = q.lower()
    if lowered.startswith(("x:", "0x", "\\x")) or _HEX_PAIRS.match(q):
        digits = re.sub(r"x:|0x|\\x|\s", "", lowered)
        if len(digits) >= 2 and len(digits) % 2 == 0 and all(c in "0123456789abcdef" for c in digits):
            return "bytes", bytes.fromhex(digits)
    return "text", query.translate(_MARKS).encode("utf-8", errors="surrogatepass")


def query_note(query: str) -> str | None:
    """What to say of a query that asks for hex bytes (x:, 0x, \\x) but is not hex: it is
    searched as text, which found nothing for `x:zz`, and nothing said why."""
    q = split_kind_words(query)[0].strip().lower()
    if q.startswith(("x:", "0x", "\\x")) and parse_query(q)[0] == "text":
        return "not hex, so searched as text"
    return None


def matching_rows(vocab: Vocab, query: str, keep: np.ndarray | None = None) -> np.ndarray:
    """The rows whose token the query finds, in inside order; only rows where `keep` (a mask
    over rows) is set, when given."""
    query, kinds = split_kind_words(query)
    rows = _query_rows(vocab, query)
    if kinds:
        wanted = np.isin(vocab.kinds[rows], [KIND_CODES.index(k) for k in kinds])
        rows = rows[wanted]
    if keep is not None:
        rows = rows[keep[rows]]
    return rows


def _query_rows(vocab: Vocab, query: str) -> np.ndarray:
    what, arg = parse_query(query)
    if what == "all":
        return np.arange(len(vocab))
    if what == "ids":
        lo, hi = sorted(arg)
        return np.flatnonzero((vocab.ids >= lo) & (vocab.ids <= hi))
    return rows_holding(vocab, arg)


def rows_holding(vocab: Vocab, needle: bytes) -> np.ndarray:
    """Rows whose bytes hold `needle`: every place it starts in the joined tokens (overlapping
    ones too), kept where it ends inside the token it starts in."""
    if not needle or not len(vocab):
        return np.arange(len(vocab))
    blob, found = vocab.blob, []
    i = blob.find(needle)
    while i >= 0:
        found.append(i)
        i = blob.find(needle, i + 1)
    at = np.asarray(found, dtype=np.int64)
    rows = np.searchsorted(vocab.starts, at, side="right") - 1
    inside = at + len(needle) <= vocab.starts[rows] + vocab.lengths[rows]
    return np.unique(rows[inside])


def search(vocab: Vocab, query: str = "", order: str = "id", counts: np.ndarray | None = None,
           limit: int = 500, keep: np.ndarray | None = None) -> VocabPage:
    """The tokens `query` finds, sorted by id (ascending), length or count (longest or most
    frequent first, then by id), the first `limit` as rows. Sorting by count needs `counts`
    (tokens per outside id); without them it sorts by id."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}")
    rows = matching_rows(vocab, query, keep)
    ids = vocab.ids[rows]
    if order == "count" and counts is not None:
        padded = np.zeros(int(vocab.ids.max()) + 1, dtype=np.int64)
        padded[: min(len(counts), len(padded))] = counts[: len(padded)]
        key = -padded[ids]
        picked = rows[np.lexsort((ids, key))[:limit]]
    elif order == "length":
        picked = rows[np.lexsort((ids, -vocab.lengths[rows]))[:limit]]
    else:
        order = "id"
        picked = rows[np.argsort(ids, kind="stable")[:limit]]
    return VocabPage([vocab.info(int(r), counts) for r in picked], len(rows), order)


def count_tokens(model, texts: Sequence[str]) -> np.ndarray:
    """How often each outside id occurs when `model` encodes `texts` (ordinary encoding): the
    browser's count column, over the whole corpus."""
    counts = np.zeros(0, dtype=np.int64)
    for text in texts:
        ids = model.encode_ordinary(text)
        if not ids:
            continue
        found = np.bincount(np.asarray(ids, dtype=np.int64))
        if len(found) < len(counts):
            found = np.pad(found, (0, len(counts) - len(found)))
        found[: len(counts)] += counts
        counts = found
    return counts
